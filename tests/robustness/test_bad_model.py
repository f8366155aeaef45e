"""Bad models: wrong names and paths, folders that are no model, missing tokenizers, hub code.

A local path that cannot be a model is a usage error (checked at configure time, without
loading anything). A hub name, a folder without tokenizer files or a folder that brings its
own code can only be found out by loading: that stops the session once, before any test
(exit code 4), with one message naming the model and the fix. Model code from the hub or
from a model folder never runs without --niah-trust-remote-code.

Through the API, :func:`load_embedder` loads nothing; the first use of the model (its
``tokenizer``) raises the :class:`EmbedderError`.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, load_embedder, run_experiment
from pytest_niah.errors import EmbedderError

JINA_V3 = "jinaai/jina-embeddings-v3"
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
MARKER_ENV = "ROBUSTNESS_MODEL_CODE_MARKER"
# Imported by transformers when it trusts the folder's code: leaves a marker file behind.
MODEL_CODE = """
import os
import pathlib

pathlib.Path(os.environ["{env}"]).write_text("the model folder's own code ran")

from transformers import BertConfig, BertModel, PretrainedConfig, PreTrainedModel


class CustomConfig(BertConfig):
    model_type = "niah-custom"


class CustomModel(BertModel):
    config_class = CustomConfig
""".replace("{env}", MARKER_ENV)


# --------------------------------------------------------------------------- names and paths


def test_unknown_hub_name_offline(niah_run):
    """Offline, a model not in the cache is refused at configure, before collection (#31)."""
    result = niah_run.run(model="niah-robustness/no-such-model")
    niah_run.assert_usage_error(
        result,
        "pytest-niah: could not load model 'niah-robustness/no-such-model'",
        "Fix: the hub is offline here",
        "pass a local path",
    )


def test_unknown_hub_name_offline_through_the_api():
    embedder = load_embedder(NiahConfig(model="niah-robustness/no-such-model"))
    with pytest.raises(EmbedderError) as info:
        _ = embedder.tokenizer
    assert "could not load model 'niah-robustness/no-such-model'" in str(info.value)
    assert "Fix:" in str(info.value)


@pytest.mark.parametrize("path", ["./no/such/model", "~/no-such-niah-model", "/no/such/model"])
def test_missing_local_path_is_a_usage_error(niah_run, path):
    result = niah_run.run(model=path)
    niah_run.assert_usage_error(
        result,
        "pytest-niah: model path",
        "does not exist",
        "give an existing folder that holds a sentence-transformers model",
    )


def test_missing_local_path_through_the_api():
    with pytest.raises(EmbedderError, match="does not exist"):
        _ = load_embedder(NiahConfig(model="/no/such/model")).tokenizer


def test_local_file_instead_of_folder_is_a_usage_error(niah_run):
    (niah_run.path / "model.safetensors").write_bytes(b"\0" * 64)
    result = niah_run.run(model="./model.safetensors")
    niah_run.assert_usage_error(result, "model.safetensors", "not a folder")


def test_folder_without_a_model_is_a_usage_error(niah_run):
    (niah_run.path / "empty-model").mkdir()
    result = niah_run.run(model="./empty-model")
    err = niah_run.assert_usage_error(result, "empty-model")
    assert "offline" not in err


def test_unknown_lexical_kind_is_a_usage_error(niah_run):
    result = niah_run.run(model="lexical:bm25")
    niah_run.assert_usage_error(
        result, "pytest-niah: lexical baseline 'bm25' is unknown", "lexical:tfidf"
    )


def test_two_models_with_one_label_is_a_usage_error(niah_run):
    result = niah_run.run(
        "--niah-model=m=lexical:tfidf", "--niah-model=m=packaged-minilm", model=None
    )
    niah_run.assert_usage_error(result, "two models share the label 'm'", "LABEL=NAME_OR_PATH")


# --------------------------------------------------------------------------- tokenizers


@pytest.fixture(scope="module")
def no_tokenizer_model(tmp_path_factory, minilm_copy) -> Path:
    folder = tmp_path_factory.mktemp("models") / "no-tokenizer"
    return minilm_copy(folder, without=TOKENIZER_FILES)


def test_model_without_tokenizer_stops_the_run(niah_run, no_tokenizer_model):
    result = niah_run.run(model=str(no_tokenizer_model))
    niah_run.assert_stopped(
        result,
        "no-tokenizer",
        f"model '{no_tokenizer_model}' has a tokenizer with 5 tokens that reads every word as "
        "unknown",
        "its vocabulary files (tokenizer.json, or vocab.txt / sentencepiece model) are missing",
        "Fix: copy the tokenizer files next to the model",
    )


def test_model_without_tokenizer_through_the_api(no_tokenizer_model):
    embedder = load_embedder(NiahConfig(model=str(no_tokenizer_model)))
    with pytest.raises(EmbedderError, match="reads every word as unknown"):
        _ = embedder.tokenizer


def test_model_without_tokenizer_really_sees_nothing(no_tokenizer_model):
    """Why such a model must not run: sentence-transformers loads it, and every text gets
    the same embedding."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(no_tokenizer_model), device="cpu")
    vectors = model.encode(["Pork is never eaten here.", "The sea was calm today."])
    assert np.allclose(vectors[0], vectors[1])


def test_model_with_only_a_slow_vocabulary_runs(niah_run, tmp_path, minilm_copy):
    """The control: vocab.txt alone is enough, a fast tokenizer is built from it."""
    folder = minilm_copy(tmp_path / "vocab-only", without=("tokenizer.json",))
    result = niah_run.run(model=str(folder))
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=5)


# --------------------------------------------------------------------------- remote code


class HubRecorder(http.server.ThreadingHTTPServer):
    """A stand-in for the Hugging Face hub that records every request and answers 404."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HubHandler)
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _HubHandler(http.server.BaseHTTPRequestHandler):
    server: HubRecorder

    def _answer(self) -> None:
        self.server.requests.append(f"{self.command} {self.path}")
        self.send_error(404, "Not Found")

    do_GET = do_HEAD = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hub(monkeypatch) -> Iterator[HubRecorder]:
    server = HubRecorder()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_preset_remote_code_model_needs_the_flag_before_any_download(
    niah_run, hub, tmp_path, monkeypatch
):
    # The hub online, at the recorder, with an empty Hugging Face cache.
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    # The control: in this environment hub traffic really reaches the recorder.
    probe = subprocess.run(
        [sys.executable, "-c", "from huggingface_hub import model_info; model_info('org/x')"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode != 0
    assert any("org/x" in r for r in hub.requests), hub.requests
    hub.requests.clear()

    result = niah_run.run(model=JINA_V3, subprocess=True)
    niah_run.assert_usage_error(
        result,
        f"pytest-niah: model '{JINA_V3}' runs its own code from the hub",
        "add --niah-trust-remote-code",
    )
    assert hub.requests == []


@pytest.mark.parametrize("spec", [JINA_V3, f"jina={JINA_V3}"])
def test_preset_remote_code_model_without_the_flag_is_a_usage_error(niah_run, spec):
    result = niah_run.run(model=spec)
    niah_run.assert_usage_error(result, JINA_V3, "--niah-trust-remote-code")


def test_preset_remote_code_model_from_the_ini_file_needs_the_flag(niah_run):
    niah_run.pytester.makeini("[pytest]\nniah_trust_remote_code = false\n")
    result = niah_run.run(model=JINA_V3)
    niah_run.assert_usage_error(result, "--niah-trust-remote-code")


def test_preset_remote_code_model_through_the_api(monkeypatch):
    import sentence_transformers

    def never(*args, **kwargs):
        raise AssertionError("SentenceTransformer must not be constructed")

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", never)
    with pytest.raises(EmbedderError, match="--niah-trust-remote-code"):
        _ = load_embedder(NiahConfig(model=JINA_V3)).tokenizer
    config = NiahConfig(model=JINA_V3, lengths=(128,), positions=2)
    with pytest.raises(EmbedderError, match="--niah-trust-remote-code"):
        run_experiment(config)


def custom_code_model(folder: Path, minilm_copy, *, known_type: bool) -> Path:
    """A MiniLM copy whose config asks for the folder's own model class (custom code).

    With ``known_type`` the config stays a BERT config (transformers could load it without
    the code); otherwise its model type exists only in the folder's code.
    """
    minilm_copy(folder)
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "custom_model.CustomModel"}
    if not known_type:
        config["model_type"] = "niah-custom"
        config["auto_map"]["AutoConfig"] = "custom_model.CustomConfig"
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "custom_model.py").write_text(MODEL_CODE)
    return folder


@pytest.fixture
def marker(monkeypatch, tmp_path) -> Path:
    path = tmp_path / "model-code-ran"
    monkeypatch.setenv(MARKER_ENV, str(path))
    return path


def test_model_folder_code_needs_the_flag(niah_run, tmp_path, marker, minilm_copy, monkeypatch):
    import transformers.dynamic_module_utils as dynamic

    folder = custom_code_model(tmp_path / "custom", minilm_copy, known_type=False)
    # The refusal runs in this process: nothing is loaded. Should the code ever run here,
    # its copy goes to this test's folder, not the user's modules cache.
    monkeypatch.setattr(dynamic, "HF_MODULES_CACHE", str(tmp_path / "hf-modules"))
    result = niah_run.run(model=str(folder))
    niah_run.assert_stopped(
        result,
        "custom",
        f"could not load model '{folder}'",
        "contains custom code",
        "Fix: this model runs its own code",
        "--niah-trust-remote-code",
    )
    assert not marker.exists()
    # The control: with the flag the code runs (the marker proves the test would see it). In a
    # fresh interpreter: the code registers its model type with transformers for good.
    niah_run.run(f"--niah-model={folder}", "--niah-trust-remote-code", model=None, subprocess=True)
    assert marker.exists()


def test_model_kwargs_cannot_bypass_the_flag(niah_run, tmp_path, marker, minilm_copy, monkeypatch):
    import transformers.dynamic_module_utils as dynamic

    folder = custom_code_model(tmp_path / "custom", minilm_copy, known_type=True)
    # In-process: the option check stops the run at configure time, before any load. Should
    # it ever let the code run, the code's copy still goes to this test's folder.
    monkeypatch.setattr(dynamic, "HF_MODULES_CACHE", str(tmp_path / "hf-modules"))
    result = niah_run.run(
        f"--niah-model={folder}",
        '--niah-model-kwargs={"trust_remote_code": true}',
        model=None,
    )
    niah_run.assert_usage_error(
        result,
        "pytest-niah: model_kwargs: trust_remote_code cannot be set there",
        "Fix: use --niah-trust-remote-code if you trust the model's code",
    )
    assert not marker.exists(), "the model folder's code ran without --niah-trust-remote-code"
