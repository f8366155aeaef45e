"""Non-finite and zero-norm embeddings: flagged as invalid data, never scored, never cached.

Through the API the run completes and marks every affected case (``problem``) and row
(``invalid``); through the plugin those cases and gates fail with "invalid data".
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from pytest_niah import NiahConfig, NiahResults, run_experiment
from pytest_niah.embed.cache import CachingEmbedder, EmbeddingCache
from pytest_niah.embed.embedders import Embedder
from pytest_niah.inputs.needles import builtin_needle_set

REPO = Path(__file__).resolve().parents[2]
SHARED_CORPUS = REPO.parent / "shared" / "corpus" / "gutenberg"
INVALID = "non-finite or zero embedding"
CONFIG = NiahConfig(
    model="fake",
    corpus=str(SHARED_CORPUS),
    lengths=(128, 256),
    positions=2,
    groups=("dietary",),
    bootstrap=20,
)
N_CASES = 4 * 2 * 2 * 2  # groups x orders x lengths x positions

Bad = Callable[[str, str], float | None]  # (kind, text) -> value for every coordinate, or None


class FakeEmbedder(Embedder):
    """Seeded random vectors per text; ``bad`` replaces some rows with NaN, inf or zeros."""

    name = "fake"
    fingerprint = "fake-v1"
    max_tokens = None
    TOKEN = re.compile(r"\w+|[^\w\s]")

    def __init__(self, bad: Bad = lambda kind, text: None, dim: int = 16) -> None:
        self.bad = bad
        self.dim = dim

    def token_spans(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        return [[m.span() for m in self.TOKEN.finditer(t)] for t in texts]

    def _encode(self, texts: Sequence[str], kind: str) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(self.dim)
            value = self.bad(kind, text)
            rows.append(row if value is None else np.full(self.dim, value))
        return np.stack(rows).astype(np.float32)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "document")

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query")


def run(bad: Bad) -> NiahResults:
    return run_experiment(CONFIG, embedder=FakeEmbedder(bad))


@pytest.mark.parametrize(
    "bad",
    [
        lambda kind, text: math.nan,
        lambda kind, text: math.nan if kind == "query" else None,
        lambda kind, text: 0.0 if kind == "document" else None,
        lambda kind, text: math.inf if kind == "document" else None,
    ],
    ids=["all-nan", "nan-queries", "zero-documents", "inf-documents"],
)
def test_every_case_is_flagged(bad, tmp_path):
    results = run(bad)
    assert len(results.cases) == N_CASES
    assert all(case.problem and INVALID in case.problem for case in results.cases)
    assert not any(case.found for case in results.cases)
    for length in CONFIG.lengths:
        row = results.row("onehop", length)
        assert row.invalid == N_CASES // 2
        assert math.isnan(row.auc) and math.isnan(row.comparative_ratio)
    # NaN survives the results file (as null) and loads back.
    again = NiahResults.load(results.save(tmp_path / "results.json"))
    assert [c.problem for c in again.cases] == [c.problem for c in results.cases]


def needle_text(case) -> str:
    return builtin_needle_set().group(case.group_id).needle("onehop", case.order, case.name)


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
    assert all(case.problem and INVALID in case.problem for case in results.cases)


def test_nan_rows_are_never_cached(tmp_path):
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    inner = FakeEmbedder(lambda kind, text: math.nan if "pork" in text.lower() else None)
    embedder = CachingEmbedder(inner, cache)
    results = run_experiment(CONFIG, embedder=embedder)
    nan_query = any(c.problem for c in results.cases if c.group_id == "dietary-01")
    assert nan_query, "the pork question's embedding was NaN"
    stored = cache.count()
    assert 0 < stored < embedder.embedded
    # A second run reads the finite rows and embeds only the NaN ones again.
    again = CachingEmbedder(inner, cache)
    run_experiment(CONFIG, embedder=again)
    assert again.embedded == embedder.embedded - stored
    cache.close()


def test_wrong_number_of_rows_names_the_model():
    from pytest_niah.experiment import EmbeddingError

    class Short(FakeEmbedder):
        name = "short-model"

        def encode_documents(self, texts):
            return super().encode_documents(texts)[:2]

    with pytest.raises(EmbeddingError, match="short-model"):
        run_experiment(CONFIG, embedder=Short())


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
        case_id = name[name.index("[") + 1 : -1]
        assert (
            body.strip()
            == f"invalid data for {case_id}: {INVALID} (query, haystack, needle or control)"
        )
    assert next(iter(gates.values())).strip() == "4 cases at length 128 have invalid data"
    niah_run.no_traceback(result)


def test_plugin_never_caches_nan_embeddings(niah_run, nan_model):
    result = niah_run.run("--niah-cache-dir=cache", model=str(nan_model))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    with EmbeddingCache(niah_run.path / "cache" / "embeddings.sqlite") as cache:
        assert cache.count() == 0
