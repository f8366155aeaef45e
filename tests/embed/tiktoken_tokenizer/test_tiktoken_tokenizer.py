"""tiktoken encodings as haystack tokenizers: spans, exact lengths, loading offline, identity.

No network: every encoding here is a small byte-level BPE trained in the test on its own text
(tiktoken_ranks.py), built as a ``tiktoken.Encoding`` or written as a ranks file. The real
``cl100k_base`` is only asked for where its missing cache file is the point. The hosted-API
presets that name these encodings are tested in test_remote_presets.py.
"""

from __future__ import annotations

import hashlib
import itertools
import sys
import time

import pytest
from tiktoken_ranks import RANKS, RANKS_ENCODING, TRAINING_TEXT, UNICODE_TEXT, write_ranks

from pytest_niah.embed.tiktoken_tokenizer import FILE_PATTERN, load_tiktoken
from pytest_niah.errors import ConfigError, ExtraMissingError
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.tokens import CountingTokenizer, Tokenizer
from pytest_niah.inputs.needles import builtin_needle_set

pytest.importorskip("tiktoken")


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
