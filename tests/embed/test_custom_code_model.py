"""A model folder with its own code, offline: trust, the ``task`` encode argument, presets.

``fixtures/models/custom-code`` is a tiny random sentence-transformers model whose first
module is the folder's own ``custom_st.Transformer`` (like jinaai/jina-embeddings-v3's): it
loads only with ``--niah-trust-remote-code``, and ``encode(..., task=...)`` changes its
vectors. Every run here is a real pytest-niah run on it (pytester), with the hub offline.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from embed_fakes import link_into_blobs

from pytest_niah.embed.model_folder import modules_outside_sentence_transformers
from pytest_niah.embed.models import MODEL_PRESETS, check_model_name
from pytest_niah.embed.st_backend import SentenceTransformerEmbedder
from pytest_niah.errors import EmbedderError

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "fixtures" / "models" / "custom-code"
JINA_V3 = "jinaai/jina-embeddings-v3"
REVISION = "0123456789abcdef0123456789abcdef01234567"  # the stand-in's hub commit
# One group, one length, two positions, both orders: 4 cases and 1 gate.
GRID = (
    f"--niah-corpus={REPO / 'fixtures' / 'corpus' / 'tiny'}",
    "--niah-lengths=128",
    "--niah-positions=2",
    "--niah-groups=dietary-01",
)
FLAG = "--niah-trust-remote-code"
QUERY_TASK = '--niah-encode-kwargs={"task": "retrieval.query"}'
MATCHING_TASK = '--niah-encode-kwargs={"task": "text-matching"}'
EMBEDDED = re.compile(r"^(\d+) texts embedded, (\d+) read from the cache", re.MULTILINE)


@pytest.fixture(autouse=True)
def _offline_and_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No NIAH_* variable steers a run; caches, and the copy of the folder's code that
    transformers imports, live in this test's folder (returned)."""
    import transformers.dynamic_module_utils as dynamic

    for name in list(__import__("os").environ):
        if name.startswith("NIAH_"):
            monkeypatch.delenv(name)
    modules = tmp_path / "hf-modules"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "niah-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(modules))  # subprocess runs
    monkeypatch.setattr(dynamic, "HF_MODULES_CACHE", str(modules))  # in-process runs
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    return modules


def run(pytester: pytest.Pytester, *args: str, subprocess: bool = False) -> pytest.RunResult:
    """pytest-niah on the tiny grid, with ``args`` (the model among them)."""
    full = ["-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:xdist", *GRID, *args]
    if subprocess:
        return pytester.runpytest_subprocess(*full, timeout=240)
    return pytester.runpytest(*full)


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + "\n" + result.stderr.str()


def passed(result: pytest.RunResult) -> None:
    """The run passed: 1 gate passed, the 4 one-hop cases xfailed (a random model), no error."""
    assert result.ret == pytest.ExitCode.OK, output(result)
    result.assert_outcomes(passed=1, xfailed=4)
    assert "Traceback" not in output(result)


def embedded(result: pytest.RunResult) -> tuple[int, int]:
    """(texts embedded, texts read from the cache) of a run."""
    match = EMBEDDED.search(result.stdout.str())
    assert match is not None, output(result)
    return int(match.group(1)), int(match.group(2))


def scores(results: dict) -> dict[str, tuple[float, float]]:
    """{case id: (question-haystack cosine, question-needle cosine)} of a results file."""
    return {case["id"]: (case["cos_qh"], case["cos_qn"]) for case in results["cases"]}


def largest_gap(a: dict[str, tuple[float, float]], b: dict[str, tuple[float, float]]) -> float:
    assert a.keys() == b.keys() and a
    return max(abs(x - y) for key in a for x, y in zip(a[key], b[key], strict=True))


# -- the folder itself ----------------------------------------------------------------------


def test_the_fixture_is_a_small_model_with_its_own_code():
    files = [p for p in FOLDER.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 1_000_000
    assert modules_outside_sentence_transformers(FOLDER) == ["custom_st.Transformer"]
    modules = json.loads((FOLDER / "modules.json").read_text(encoding="utf-8"))
    assert modules[0]["kwargs"] == ["task"]  # what hands encode(task=...) to the module
    assert (FOLDER / "custom_st.py").is_file() and (FOLDER / "model.safetensors").is_file()


# -- (a) without --niah-trust-remote-code ---------------------------------------------------


def test_without_the_flag_the_folder_is_one_usage_error(pytester, _offline_and_isolated):
    result = run(pytester, f"--niah-model={FOLDER}")
    err = result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output(result)
    assert err.count("ERROR: pytest-niah: ") == 1, err
    assert (
        f"ERROR: pytest-niah: model folder '{FOLDER}' runs its own code "
        "(custom_st.Transformer in modules.json), which pytest-niah never allows by default. "
        "Fix: if you trust it, add --niah-trust-remote-code"
    ) in err
    assert "test_needle" not in result.stdout.str() and "Traceback" not in output(result)
    # Refused before anything loaded: transformers never copied the folder's code to import it.
    assert not _offline_and_isolated.exists()


def test_without_the_flag_the_api_refuses_before_loading(monkeypatch):
    import sentence_transformers

    def never(*args, **kwargs):
        raise AssertionError("SentenceTransformer must not be constructed")

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", never)
    embedder = SentenceTransformerEmbedder(str(FOLDER), device="cpu")
    with pytest.raises(EmbedderError) as info:
        _ = embedder.tokenizer
    assert "runs its own code (custom_st.Transformer in modules.json)" in str(info.value)
    assert "Fix: if you trust it, add --niah-trust-remote-code" in str(info.value)


# -- (b) and (c) with the flag ----------------------------------------------------------------


def test_with_the_flag_a_run_passes_and_task_reaches_the_model_code(
    pytester, _offline_and_isolated
):
    base = run(pytester, f"--niah-model={FOLDER}", FLAG, "--niah-json=base.json")
    passed(base)
    assert embedded(base)[1] == 0
    assert list(_offline_and_isolated.rglob("custom_st.py")), "the folder's code did not run"

    query = run(pytester, f"--niah-model={FOLDER}", FLAG, QUERY_TASK, "--niah-json=query.json")
    matching = run(
        pytester, f"--niah-model={FOLDER}", FLAG, MATCHING_TASK, "--niah-json=matching.json"
    )
    again = run(pytester, f"--niah-model={FOLDER}", FLAG, QUERY_TASK, "--niah-json=again.json")
    for result in (query, matching, again):
        passed(result)
    results = {
        name: json.loads((pytester.path / f"{name}.json").read_text(encoding="utf-8"))
        for name in ("base", "query", "matching", "again")
    }
    kwargs = {
        name: r["model"]["identity"]["settings"]["encode_kwargs"] for name, r in results.items()
    }
    assert kwargs == {
        "base": {},
        "query": {"task": "retrieval.query"},
        "matching": {"task": "text-matching"},
        "again": {"task": "retrieval.query"},
    }
    # Each task is its own model identity, so its own cache key: nothing is reused across.
    fingerprints = {name: r["model"]["fingerprint"] for name, r in results.items()}
    assert len({fingerprints[n] for n in ("base", "query", "matching")}) == 3
    assert fingerprints["again"] == fingerprints["query"]
    assert embedded(query)[1] == embedded(matching)[1] == 0
    assert "results reused from an identical earlier run" in again.stdout.str()
    # The model's code saw the task: every task gives other scores.
    by_name = {name: scores(r) for name, r in results.items()}
    assert largest_gap(by_name["base"], by_name["query"]) > 1e-3
    assert largest_gap(by_name["query"], by_name["matching"]) > 1e-3
    assert by_name["again"] == by_name["query"]


def test_a_task_the_model_does_not_know_stops_the_run_once(pytester):
    result = run(
        pytester, f"--niah-model={FOLDER}", FLAG, '--niah-encode-kwargs={"task": "retrieval"}'
    )
    text = output(result)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert text.count("pytest-niah could not run 'custom-code'") == 1, text
    assert "task 'retrieval' is unknown to this model" in text
    assert "Traceback" not in text


# -- (d) a preset applied by name ---------------------------------------------------------------


def hub_cache(root: Path, name: str) -> Path:
    """A Hugging Face hub cache in which ``name`` is a copy of the fixture folder."""
    repo = root / ("models--" + name.replace("/", "--"))
    link_into_blobs(Path(shutil.copytree(FOLDER, repo / "snapshots" / REVISION)))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
    return root


def test_the_jina_v3_preset_sets_its_task_by_name_and_says_so(pytester, monkeypatch, tmp_path):
    """The fixture stands in for jinaai/jina-embeddings-v3 in an offline hub cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache(tmp_path / "hub", JINA_V3)))

    by_name = run(
        pytester, f"--niah-model={JINA_V3}", FLAG, "--niah-json=preset.json", subprocess=True
    )
    passed(by_name)
    note = f"{JINA_V3}: {MODEL_PRESETS[JINA_V3].note}"
    assert "text-matching" in note and note in by_name.stdout.str()
    results = json.loads((pytester.path / "preset.json").read_text(encoding="utf-8"))
    identity = results["model"]["identity"]
    assert identity["settings"]["encode_kwargs"] == {"task": "text-matching"}
    assert identity["source"] == {"kind": "hub", "repo": JINA_V3, "revision": REVISION}
    # The same vectors as the folder given the task by hand: the preset reached the model code.
    by_hand = run(pytester, f"--niah-model={FOLDER}", FLAG, MATCHING_TASK, "--niah-json=hand.json")
    passed(by_hand)
    hand = json.loads((pytester.path / "hand.json").read_text(encoding="utf-8"))
    assert scores(results) == scores(hand)


def test_the_jina_v3_hf_port_preset_sets_no_task_and_says_so(monkeypatch, tmp_path):
    """The transformers port runs no remote code and takes no task: only a note."""
    name = f"{JINA_V3}-hf"
    # Offline, a hub name is checked against the Hugging Face cache: one that holds it.
    (tmp_path / f"models--{name.replace('/', '--')}" / "snapshots" / "r").mkdir(parents=True)
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path))
    check_model_name(name)  # no --niah-trust-remote-code needed
    port = SentenceTransformerEmbedder(name, device="cpu")
    assert port.encode_kwargs == {} and (port.query_prompt, port.doc_prompt) == ("", "")
    assert port.notes == [f"{name}: {MODEL_PRESETS[name].note}"]
    assert "without a task adapter" in port.notes[0]
