"""The jinaai/jina-embeddings-v4 preset, end to end, offline: trust, task, prompts, maxsim.

``fixtures/models/jina-v4-like`` is a tiny random model with jina-embeddings-v4's interface
(its own ``custom_st.Transformer``; ``encode(task=...)`` for the single vector; the held
model's ``encode_text(task=..., prompt_name=..., return_multivector=...)`` for token vectors).
Copied into an offline hub cache as ``jinaai/jina-embeddings-v4`` it stands in for the real
model, so a real pytest-niah run (pytester) applies the preset by name. The fixture's code
logs what reached it (``JINA_V4_LIKE_CALLS``), which the tests read.
"""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from embed_fakes import link_into_blobs

from pytest_niah.embed.models import check_model_name
from pytest_niah.embed.presets import MODEL_PRESETS
from pytest_niah.errors import EmbedderError
from pytest_niah.measure.similarity import Scored

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "fixtures" / "models" / "jina-v4-like"
V3_LIKE = REPO / "fixtures" / "models" / "custom-code"
V4 = "jinaai/jina-embeddings-v4"
REVISION = "0123456789abcdef0123456789abcdef01234567"  # the stand-in's hub commit
FLAG = "--niah-trust-remote-code"
# One group, one length, two positions, both orders: 4 cases and 1 gate per scoring.
GRID = (
    f"--niah-corpus={REPO / 'fixtures' / 'corpus' / 'tiny'}",
    "--niah-lengths=128",
    "--niah-positions=2",
    "--niah-groups=dietary-01",
)


@pytest.fixture(autouse=True)
def calls_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Offline and isolated: no NIAH_* variable, caches and imported model code in tmp_path.

    Returns the file the fixture model logs its calls to.
    """
    import transformers.dynamic_module_utils as dynamic

    for name in list(__import__("os").environ):
        if name.startswith("NIAH_"):
            monkeypatch.delenv(name)
    modules = tmp_path / "hf-modules"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "niah-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(modules))
    monkeypatch.setattr(dynamic, "HF_MODULES_CACHE", str(modules))
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("JINA_V4_LIKE_CALLS", str(log))
    return log


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A Hugging Face hub cache in which jinaai/jina-embeddings-v4 is the fixture folder."""
    import huggingface_hub.constants

    root = tmp_path / "hub"
    repo = root / ("models--" + V4.replace("/", "--"))
    link_into_blobs(Path(shutil.copytree(FOLDER, repo / "snapshots" / REVISION)))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(root))
    return root


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """pytest-niah on the tiny grid, in-process, with ``args`` (the model among them)."""
    return pytester.runpytest(
        "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:xdist", *GRID, *args
    )


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + "\n" + result.stderr.str()


def ran(result: pytest.RunResult, tests: int) -> None:
    """The run finished without a failure or error, every one of ``tests`` tests run."""
    assert result.ret == pytest.ExitCode.OK, output(result)
    outcomes = result.parseoutcomes()
    assert sum(outcomes.get(k, 0) for k in ("passed", "xfailed", "xpassed")) == tests, outcomes
    assert "Traceback" not in output(result)


def calls(log: Path) -> list[dict]:
    """What reached the fixture model's code, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def results(pytester: pytest.Pytester, name: str) -> dict:
    return json.loads((pytester.path / name).read_text(encoding="utf-8"))


def scores(data: dict, scoring: str = "whole") -> dict[str, tuple[float, float]]:
    """{case id: (question-haystack score, question-needle score)} of one scoring."""
    return {
        case["id"]: (case["cos_qh"], case["cos_qn"])
        for case in data["cases"]
        if case["scoring"] == scoring
    }


# -- the fixture and the preset ------------------------------------------------------------


def test_the_fixture_is_small_with_v4s_interface_and_its_tasks_change_its_vectors():
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.model_folder import modules_outside_sentence_transformers
    from pytest_niah.embed.st_multi_vector import token_vector_encoder

    files = [p for p in FOLDER.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert sum(p.stat().st_size for p in files) < 1_000_000
    assert modules_outside_sentence_transformers(FOLDER) == ["custom_st.Transformer"]
    settings = json.loads((FOLDER / "config_sentence_transformers.json").read_text("utf-8"))
    assert settings["prompts"] == {"query": "Query: ", "passage": "Passage: "}

    model = SentenceTransformer(str(FOLDER), trust_remote_code=True, device="cpu")
    assert sorted(model.get_model_kwargs()) == ["task", "truncate_dim"]  # as v4's
    assert token_vector_encoder(model) is not None
    texts = ["Which character never eats pork?", "Priya keeps a kosher kitchen."]
    matching = model.encode(texts, task="text-matching")
    assert not np.allclose(matching, model.encode(texts, task="retrieval"), atol=1e-3)
    tokens = model[0].model.encode_text(
        texts=texts, task="text-matching", prompt_name="query", return_multivector=True
    )
    assert [tuple(t.shape)[1] for t in tokens] == [16, 16]
    assert tokens[0].shape[0] != tokens[1].shape[0]  # one vector per token


def test_the_v4_preset_names_the_task_prompts_and_window_of_its_model_card(monkeypatch, tmp_path):
    # Offline, a name is checked against the Hugging Face cache too: one that holds it.
    (tmp_path / f"models--{V4.replace('/', '--')}" / "snapshots" / "r").mkdir(parents=True)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path))
    preset = MODEL_PRESETS[V4]
    assert preset.encode_kwargs == {"task": "text-matching"}
    assert (preset.query_prompt_name, preset.doc_prompt_name) == ("query", "query")
    assert (preset.query_prompt, preset.doc_prompt) == ("", "")
    assert preset.max_seq_length == 32768 and preset.remote_code
    with pytest.raises(EmbedderError, match="add --niah-trust-remote-code"):
        check_model_name(V4)
    check_model_name(V4, trust_remote_code=True)


# -- without --niah-trust-remote-code ------------------------------------------------------


def test_without_the_flag_v4_is_one_usage_error_in_under_a_second_with_no_network(
    pytester, monkeypatch, tmp_path
):
    attempts: list[object] = []

    def no_network(*args, **kwargs):
        attempts.append(args)
        raise OSError("no network in this test")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    empty_hub = tmp_path / "empty-hub"
    empty_hub.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(empty_hub))

    started = time.perf_counter()
    result = run(pytester, f"--niah-model={V4}")
    seconds = time.perf_counter() - started

    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    assert err.count("ERROR: pytest-niah: ") == 1, err
    assert (
        f"ERROR: pytest-niah: model '{V4}' runs its own code from the hub, which pytest-niah "
        "never allows by default. Fix: if you trust it, add --niah-trust-remote-code"
    ) in err
    assert "test_needle" not in result.stdout.str() and "Traceback" not in output(result)
    assert seconds < 1.0, seconds
    assert attempts == []  # nothing reached for the network
    assert list(empty_hub.iterdir()) == []  # nor the hub cache


# -- with the flag: the preset by name -----------------------------------------------------


def test_the_preset_reads_one_vector_per_text_with_text_matching_and_query_prompts(
    pytester, hub, calls_log
):
    by_name = run(pytester, f"--niah-model={V4}", FLAG, "--niah-json=preset.json")
    ran(by_name, 5)
    assert f"{V4}: {MODEL_PRESETS[V4].note}" in by_name.stdout.str()
    preset = results(pytester, "preset.json")
    identity = preset["model"]["identity"]
    assert identity["source"] == {"kind": "hub", "repo": V4, "revision": REVISION}
    settings = identity["settings"]
    assert settings["encode_kwargs"] == {"task": "text-matching"}
    assert (settings["query_prompt_name"], settings["doc_prompt_name"]) == ("query", "query")
    assert settings["max_seq_length"] == 32768
    assert {case["scoring"] for case in preset["cases"]} == {"whole"}

    seen = calls(calls_log)
    forwards = [c for c in seen if c["call"] == "forward"]
    assert forwards and all(c["task"] == "text-matching" for c in forwards)
    assert not [c for c in seen if c["call"] == "encode_text"]  # a single vector by default
    texts = [t for c in seen if c["call"] == "tokenize" for t in c["texts"]]
    assert texts and all(t.startswith("Query: ") for t in texts)  # questions and haystacks

    # The same vectors as the folder given those settings by hand.
    by_hand = run(
        pytester,
        f"--niah-model={FOLDER}",
        FLAG,
        '--niah-encode-kwargs={"task": "text-matching"}',
        "--niah-query-prompt=Query: ",
        "--niah-doc-prompt=Query: ",
        "--niah-max-seq-length=32768",
        "--niah-json=hand.json",
    )
    ran(by_hand, 5)
    assert scores(preset) == scores(results(pytester, "hand.json"))


def test_maxsim_scores_the_token_vectors_of_v4s_encode_text(pytester, hub, calls_log):
    result = run(
        pytester, f"--niah-model={V4}", FLAG, "--niah-scoring=whole,maxsim", "--niah-json=m.json"
    )
    ran(result, 10)
    seen = calls(calls_log)
    tokens = [c for c in seen if c["call"] == "encode_text"]
    assert tokens, "the token vectors were not asked for"
    for call in tokens:
        assert (call["task"], call["prompt_name"], call["return_multivector"]) == (
            "text-matching",
            "query",
            True,
        )
        assert not any(t.startswith("Query") for t in call["texts"])  # encode_text adds it
    assert [c["task"] for c in seen if c["call"] == "forward"]  # whole still reads one vector

    data = results(pytester, "m.json")
    maxsim, whole = scores(data, "maxsim"), scores(data, "whole")
    assert len(maxsim) == len(whole) == 4
    assert all(-1.0 <= value <= 1.0 for pair in maxsim.values() for value in pair)
    assert {key.removesuffix("-maxsim") for key in maxsim} == set(whole)
    gap = max(abs(maxsim[k + "-maxsim"][0] - whole[k][0]) for k in whole)
    assert gap > 1e-3  # maxsim is its own score, not the single vector's cosine


def test_the_folder_without_a_task_stops_the_run_once_with_the_model_s_own_message(pytester):
    """v4's code refuses to embed without a task; that is one error, not an internal one."""
    result = run(pytester, f"--niah-model={FOLDER}", FLAG)
    text = output(result)
    assert result.ret != pytest.ExitCode.OK, text
    assert text.count("pytest-niah could not run 'jina-v4-like'") == 1, text
    assert "ValueError: Task must be specified before encoding data" in text
    assert "INTERNALERROR" not in text and "Traceback" not in text


# -- maxsim needs token vectors -------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--niah-model=lexical:tfidf",), "model 'lexical:tfidf' gives one vector per text"),
        (
            (f"--niah-model={V4}", FLAG, "--niah-shard=1/2", "--niah-shard-dir=parts"),
            "--niah-scoring=maxsim cannot be sharded",
        ),
    ],
    ids=["lexical", "shard"],
)
def test_maxsim_where_it_cannot_work_is_one_usage_error(pytester, args, problem):
    result = run(pytester, "--collect-only", "--niah-scoring=maxsim", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    assert problem in result.stderr.str()
    assert "Traceback" not in output(result)


def test_maxsim_on_a_model_without_token_vectors_stops_the_run_once(pytester):
    result = run(pytester, f"--niah-model={V3_LIKE}", FLAG, "--niah-scoring=maxsim")
    text = output(result)
    assert result.ret != pytest.ExitCode.OK, text
    assert text.count("gives one vector per text, not the token vectors") == 1, text
    assert "Traceback" not in text


def test_maxsim_is_the_mean_over_question_tokens_of_their_best_haystack_token():
    rng = np.random.default_rng(7)
    multi = {
        "q1": rng.normal(size=(3, 4)),
        "q2": rng.normal(size=(5, 4)),
        "d1": rng.normal(size=(6, 4)) * 3,  # scale must not matter: rows are made unit
        "d2": rng.normal(size=(2, 4)),
        "bad": np.array([[np.nan, 0, 0, 0]]),
    }
    scored = Scored.of(np.zeros((0, 4)), {}, multi)
    got = scored.scores(["q1", "q2"], [["d1"], ["d2"], ["bad"], ["d1"]], "maxsim")

    def unit(rows):
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    for i, q in enumerate(("q1", "q2")):
        for j, d in enumerate(("d1", "d2")):
            expected = (unit(multi[q]) @ unit(multi[d]).T).max(axis=1).mean()
            assert got[i, j] == pytest.approx(expected, rel=1e-5)
    assert np.isnan(got[:, 2]).all()
    assert got[:, 3] == pytest.approx(got[:, 0])


def test_token_vectors_bypass_the_cache_and_must_keep_one_width():
    from types import SimpleNamespace

    from pytest_niah.embed.runner import Encoder
    from pytest_niah.errors import EmbeddingError
    from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, input_key, multi_kind

    class TokenVectors:
        name, fits_on_documents, multi_vector = "fake", False, True
        identity = SimpleNamespace(digest="d" * 64)

        def __init__(self, widths: list[int]) -> None:
            self.widths = widths

        def encode(self, inputs):
            return [np.ones((i.tokens + 2, self.widths.pop(0)), np.float32) for i in inputs]

    def never(*args, **kwargs):
        raise AssertionError("token vectors must not reach the embedding cache")

    store = SimpleNamespace(get_many=never, put_many=never, dropped=0)
    kind = multi_kind(DOCUMENT)
    items = [
        ModelInput(input_key(kind, ids), kind, ids, "text") for ids in (np.arange(3), np.arange(5))
    ]
    encoder = Encoder(TokenVectors([4, 4]), store, budget=0, batch_size=1)
    encoder.submit(items)
    table = encoder.finish()
    assert {k: v.shape for k, v in table.multi.items()} == {
        items[0].key: (5, 4),
        items[1].key: (7, 4),
    }
    assert table.index == {} and encoder.stats.embedded == 2

    mixed = Encoder(TokenVectors([4, 8]), store, budget=0, batch_size=1)
    with pytest.raises(EmbeddingError, match="token vectors of 2 different widths"):
        mixed.submit(items)
        mixed.finish()
