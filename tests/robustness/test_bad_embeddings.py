"""Non-finite and zero-norm embeddings: flagged as invalid data, never scored, never cached.

Through the API the run completes and marks every affected case (``problem``) and row
(``invalid``); through the plugin those cases and gates fail with "invalid data". An
embedder that returns the wrong shape is an :class:`EmbeddingError` naming the model.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from pytest_niah import NiahConfig, NiahResults, run_experiment
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.identity import model_identity
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import EmbeddingError
from pytest_niah.experiment import RunReport
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.haystacks.tokens import WordTokenizer
from pytest_niah.inputs.needles import load_needle_set

INVALID = "non-finite or zero embedding (query, haystack, needle or control)"
CONFIG = NiahConfig(
    model="fake",
    lengths=(128, 256),
    positions=2,
    groups=("dietary",),
    bootstrap=20,
)
N_CASES = 4 * 2 * 2 * 2  # groups x orders x lengths x positions

Bad = Callable[[str, str], float | None]  # (kind, text) -> value for every coordinate, or None


class FakeEmbedder:
    """Seeded random vectors per text; ``bad`` replaces some rows with NaN, inf or zeros."""

    reads_text = True
    fits_on_documents = False

    def __init__(self, bad: Bad = lambda kind, text: None, dim: int = 16, name: str = "fake"):
        self.name = name
        self.bad = bad
        self.dim = dim
        self.tokenizer = WordTokenizer()
        self.identity = model_identity({"kind": "test", "name": name}, {"dim": dim})
        self.windows = Windows(None, None)
        self.embedded = 0

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        rows = []
        for item in inputs:
            seed = int.from_bytes(hashlib.sha256(item.text.encode()).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(self.dim)
            value = self.bad(item.kind, item.text)
            rows.append(row if value is None else np.full(self.dim, value))
        self.embedded += len(inputs)
        return np.stack(rows).astype(np.float32)

    def close(self) -> None:
        pass


def run(bad: Bad, **kwargs) -> NiahResults:
    # Every fake has the same identity: a results cache would hand one fake's run to another.
    return run_experiment(CONFIG, embedder=FakeEmbedder(bad), **({"use_cache": False} | kwargs))


@pytest.mark.parametrize(
    "bad",
    [
        lambda kind, text: math.nan,
        lambda kind, text: math.nan if kind == "query" else None,
        lambda kind, text: 0.0 if kind == "document" else None,
        lambda kind, text: math.inf if kind == "document" else None,
        lambda kind, text: -math.inf if kind == "query" else None,
    ],
    ids=["all-nan", "nan-queries", "zero-documents", "inf-documents", "minus-inf-queries"],
)
def test_every_case_is_flagged(bad, tmp_path):
    results = run(bad)
    assert len(results.cases) == N_CASES
    assert all(case.problem == INVALID for case in results.cases)
    assert not any(case.found for case in results.cases)
    for length in CONFIG.lengths:
        row = results.row("onehop", length)
        assert row.invalid == N_CASES // 2
        assert math.isnan(row.auc) and math.isnan(row.comparative_ratio)
    # NaN survives the results file (as null) and loads back.
    again = NiahResults.load(results.save(tmp_path / "results.json"))
    assert [c.problem for c in again.cases] == [c.problem for c in results.cases]


def needle_text(case) -> str:
    return load_needle_set("builtin").group(case.group_id).needle("onehop", case.order, case.name)


def test_only_the_affected_cases_are_flagged():
    """A NaN needle haystack spoils its own case; the others are scored as usual."""
    clean = run(lambda kind, text: None)
    assert not any(case.problem for case in clean.cases)
    spoiled = needle_text(clean.cases[0])

    def bad(kind, text):
        return math.nan if kind == "document" and spoiled in text else None

    results = run(bad)
    flagged = {c.id for c in results.cases if c.problem}
    assert flagged == {c.id for c in clean.cases if needle_text(c) == spoiled}
    assert 0 < len(flagged) < N_CASES
    for case, before in zip(results.cases, clean.cases, strict=True):
        if case.id not in flagged:
            assert case.cos_qh == before.cos_qh
    row = results.row("onehop", clean.cases[0].length)
    assert row.invalid == sum(1 for c in results.cases if c.problem and c.length == row.length)
    assert 0.0 <= row.auc <= 1.0


def test_a_nan_control_spoils_the_cases_it_controls():
    """Controls are the filler without a needle: a NaN control makes its cases invalid."""
    clean = run(lambda kind, text: None)
    needles = {needle_text(c) for c in clean.cases}

    def bad(kind, text):
        control = kind == "document" and not any(n in text for n in needles) and len(text) > 300
        return math.nan if control else None

    results = run(bad)
    assert all(case.problem == INVALID for case in results.cases)


def test_nan_rows_are_never_cached(tmp_path):
    """Finite rows are stored; a second run reads them and embeds only the NaN ones again."""

    def bad(kind, text):
        return math.nan if "pork" in text.lower() else None

    first, report = FakeEmbedder(bad), RunReport()
    results = run_experiment(CONFIG, embedder=first, cache_dir=tmp_path, report=report)
    assert any(c.problem for c in results.cases if c.group_id == "dietary-01"), "pork is NaN"
    with EmbeddingStore(tmp_path / CACHE_FILE) as store:
        stored = store.count()
    assert 0 < stored < first.embedded == report.embedding.embedded
    conn = sqlite3.connect(tmp_path / CACHE_FILE)
    try:
        blobs = [
            np.frombuffer(b, np.float32) for (b,) in conn.execute("SELECT vector FROM vectors")
        ]
    finally:
        conn.close()
    assert all(np.isfinite(v).all() for v in blobs)
    for entry in (tmp_path / "results").iterdir():
        entry.unlink()  # or the results cache answers without embedding anything
    second, report = FakeEmbedder(bad), RunReport()
    again = run_experiment(CONFIG, embedder=second, cache_dir=tmp_path, report=report)
    # A batch stored in part (its NaN rows left out) is embedded again whole (#42.6).
    assert first.embedded - stored <= second.embedded < first.embedded
    assert 0 < report.embedding.read <= stored and report.embedding.dropped == 0
    assert again.without_speed().to_json() == results.without_speed().to_json()


class WrongShape(FakeEmbedder):
    def __init__(self, change: Callable[[np.ndarray], np.ndarray]) -> None:
        super().__init__(name="wrong-shape-model")
        self.change = change

    def encode(self, inputs):
        return self.change(super().encode(inputs))


@pytest.mark.parametrize(
    ("change", "shape"),
    [
        (lambda rows: rows[:-1], r"\(\d+, 16\)"),
        (lambda rows: rows[:, 0], r"\(\d+,\)"),
        (lambda rows: rows[None], r"\(1, \d+, 16\)"),
    ],
    ids=["one-row-short", "one-dimensional", "three-dimensional"],
)
def test_embeddings_of_the_wrong_shape_name_the_model(change, shape):
    with pytest.raises(EmbeddingError) as info:
        run_experiment(CONFIG, embedder=WrongShape(change))
    message = str(info.value)
    assert message.startswith("model 'wrong-shape-model' returned embeddings of shape ("), message
    assert re.search(f"of shape {shape} for \\d+ texts", message), message
    assert "Fix: check --niah-encode-kwargs and the model's own code" in message


def test_a_dimension_that_changes_mid_run_names_the_model():
    class Drifting(FakeEmbedder):
        def encode(self, inputs):
            self.dim = 16 if self.embedded == 0 else 17
            return super().encode(inputs)

    with pytest.raises(EmbeddingError) as info:
        run_experiment(CONFIG.replace(token_budget=0, batch_size=4), embedder=Drifting())
    assert str(info.value) == (
        "model 'fake' returned 17-dimensional embeddings after 16-dimensional ones. Fix: check "
        "--niah-encode-kwargs (truncate_dim) and the model's code"
    )


# --------------------------------------------------------------------------- plugin


@pytest.mark.parametrize("which", ["nan_model", "zero_model"])
def test_plugin_fails_every_case_with_invalid_data(niah_run, request, which):
    folder = request.getfixturevalue(which)
    result = niah_run.run(model=str(folder))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.assert_outcomes(failed=5)
    sections = niah_run.sections(result)
    cases = {k: v for k, v in sections.items() if k.startswith("test_needle")}
    gates = {k: v for k, v in sections.items() if k.startswith("test_gate")}
    assert len(cases) == 4 and len(gates) == 1
    for name, body in cases.items():
        # The node id names the depth (-d50); the message names the case as results and
        # cases.csv do (-p01): the same case, the part before the depth the same.
        node_case = name[name.index("[") + 1 : -1]
        said = re.fullmatch(r"invalid data for (\S+)-p\d\d: (.*)", body.strip())
        assert said is not None, body
        assert node_case.rsplit("-d", 1)[0] == said.group(1) and said.group(2) == INVALID
    assert next(iter(gates.values())).strip() == "4 cases at length 128 have invalid data"
    niah_run.no_traceback(result)


def test_plugin_never_caches_nan_embeddings(niah_run, nan_model):
    result = niah_run.run("--niah-cache-dir=cache", model=str(nan_model))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    assert "0 read from the cache" in result.stdout.str()
    with EmbeddingStore(niah_run.path / "cache" / CACHE_FILE) as store:
        assert store.count() == 0
