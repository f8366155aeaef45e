"""Benchmarks (pytest-benchmark) of the engine's parts, and a smoke run of the grid bench.

The test run passes ``--benchmark-disable`` (pyproject.toml; xdist, which CI runs with
``-n 2``, would turn benchmarks off anyway, with a warning): the fixture then calls the
function once and keeps no statistics.
These tests time every call themselves, so ``extra_info`` (tokens per second) is filled
either way, and they check what the benchmarked function returned in every mode. Speed
targets are ratios printed by ``benchmarks/bench_grid.py``, never asserted here.

    python -m pytest tests/test_benchmarks.py -p no:xdist --benchmark-enable   # timed
    python -m pytest tests/test_benchmarks.py -m "not slow"         # no model, checks only
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.grid import case_id, control_id
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, make_input
from pytest_niah.inputs.needles import builtin_needle_set
from pytest_niah.measure.metric_tables import summarize
from pytest_niah.measure.records import CaseResult, NegativeScores

LENGTHS = (128, 512, 2048)
ROUNDS = 3
SEED = 42
REPO = Path(__file__).resolve().parents[1]


class Clock:
    """Wraps a function and keeps the wall seconds of every call."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.durations: list[float] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.durations.append(time.perf_counter() - start)

    @property
    def mean(self) -> float:
        return sum(self.durations) / len(self.durations)


def record(benchmark: Any, clock: Clock, **rates: float) -> None:
    """Per-second rates from the mean call time, and how many calls that mean covers."""
    benchmark.extra_info["timed_calls"] = len(clock.durations)
    benchmark.extra_info["mean_s"] = round(clock.mean, 6)
    for name, amount in rates.items():
        benchmark.extra_info[f"{name}_per_s"] = round(amount / clock.mean, 1)


def run_script(name: str, argv: list[str], bench_script, capsys) -> str:
    """``python benchmarks/NAME.py ARGV`` in this interpreter (tests/conftest.py's
    ``bench_script``): stdout. ``cwd`` is the test's own; the script must return 0."""
    done = bench_script(name).main(argv)
    out, err = capsys.readouterr()
    assert done == 0, out + err
    return out


@pytest.fixture(scope="module")
def minilm():
    from pytest_niah.embed.st_backend import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder("packaged-minilm", device="cpu")
    yield embedder
    embedder.close()


def haystacks(corpus, tokenizer, length: int, groups=("dietary-01", "location-01")):
    """Needle haystacks and controls of two groups at one length (3 positions, one order)."""
    needle_set = builtin_needle_set()
    builder = HaystackBuilder(corpus, needle_set, tokenizer, SEED)
    chosen = [g for g in needle_set.groups if g.id in groups]
    out = []
    for group in chosen:
        block = builder.block(group, length, 3, ("onehop",), ("default",))
        out.extend(block.haystacks)
    return out


@pytest.mark.slow
@pytest.mark.benchmark(group="encode-documents")
@pytest.mark.parametrize("length", LENGTHS)
def test_encode_documents_throughput(benchmark, minilm, shared_corpus, length):
    built = haystacks(shared_corpus, minilm.tokenizer, length)
    window = minilm.windows.document
    encodings = minilm.tokenizer.encode_batch([h.text for h in built])
    inputs: list[ModelInput] = [
        make_input(DOCUMENT, encoding, h.text, window, keep_text=False)
        for encoding, h in zip(encodings, built, strict=True)
    ]
    assert len(inputs) == 2 * (3 + 1)
    clock = Clock(minilm.encode)
    vectors = benchmark.pedantic(clock, args=(inputs,), rounds=ROUNDS, iterations=1)
    assert vectors.shape == (len(inputs), 384)
    assert np.isfinite(vectors).all()
    read = min(length, window)  # MiniLM reads 254 document tokens of a longer haystack
    assert {i.tokens for i in inputs} == {read}
    benchmark.extra_info.update(length=length, texts=len(inputs), tokens_read_per_text=read)
    record(benchmark, clock, texts=len(inputs), model_tokens=read * len(inputs))


@pytest.mark.benchmark(group="build-haystacks")
def test_build_haystacks(benchmark, shared_corpus, minilm_tokenizer):
    """Token-exact assembly of one group's block at 512 and 2048 tokens (4 positions, 2 orders)."""
    needle_set = builtin_needle_set()
    group = needle_set.groups[0]
    for book in shared_corpus.books:
        _ = book.sentences  # split once, outside the timed calls

    def build() -> list[Any]:
        # A new builder per call: its sentence token counts start empty, as in a cold run.
        builder = HaystackBuilder(shared_corpus, needle_set, minilm_tokenizer, SEED)
        blocks = [
            builder.block(group, length, 4, ("onehop",), ("default", "inverted"))
            for length in (512, 2048)
        ]
        return [h for block in blocks for h in block.haystacks]

    clock = Clock(build)
    built = benchmark.pedantic(clock, rounds=ROUNDS, iterations=1)
    assert len(built) == 2 * (1 + 4 * 2)
    counts = [len(e.ids) for e in minilm_tokenizer.encode_batch([h.text for h in built])]
    assert counts == [h.length for h in built]
    record(benchmark, clock, haystacks=len(built), tokens=sum(counts))


def synthetic_cases(
    arms: int = 2, groups: int = 28, lengths: int = 7, positions: int = 10
) -> tuple[list[CaseResult], list[NegativeScores]]:
    """A results-sized case list: every arm x group x length x order x position, seeded."""
    rng = np.random.default_rng(SEED)
    categories = ("dietary", "medical", "language", "location", "profession", "hobby", "vehicle")
    ids = [f"{categories[g % len(categories)]}-{g:02d}" for g in range(groups)]
    cases, negatives = [], []
    for a in range(arms):
        arm = f"arm{a}"
        for length in (128 << i for i in range(lengths)):
            controls = [control_id(g, length, 0) for g in ids]
            control_scores = {g: float(rng.normal(0.2, 0.05)) for g in ids}
            for group_id in ids:
                scores = tuple(float(s) for s in rng.normal(0.2, 0.05, groups))
                negatives.append(
                    NegativeScores(arm, "whole", group_id, length, tuple(controls), scores)
                )
                for order in ("default", "inverted"):
                    for p in range(positions):
                        cos_qh = float(rng.normal(0.25, 0.05))
                        cos_qn = float(rng.uniform(0.3, 0.7))
                        offset = p * length // positions
                        cases.append(
                            CaseResult(
                                id=case_id(group_id, arm, order, length, p),
                                group_id=group_id,
                                category=group_id.split("-")[0],
                                arm=arm,
                                scoring="whole",
                                order=order,
                                length=length,
                                position=p,
                                relative_position=p / (positions - 1),
                                name="Name",
                                needle_offset=offset,
                                needle_tokens=12,
                                truncated=offset >= 254,
                                cos_qh=cos_qh,
                                cos_qn=cos_qn,
                                normalized=cos_qh / cos_qn,
                                control_score=control_scores[group_id],
                                found=cos_qh > control_scores[group_id],
                                control_id=control_id(group_id, length, 0),
                                unread=offset >= 254,
                            )
                        )
    return cases, negatives


@pytest.mark.benchmark(group="metric-tables")
def test_summarize_large_case_list(benchmark):
    cases, negatives = synthetic_cases()
    assert len(cases) == 2 * 28 * 7 * 2 * 10
    clock = Clock(summarize)
    rows = benchmark.pedantic(clock, args=(cases, negatives), rounds=ROUNDS, iterations=1)
    # Per arm and length: the length row, 7 categories, 2 orders, 10 positions.
    assert len(rows) == 2 * 7 * (1 + 7 + 2 + 10)
    per_length = [r for r in rows if r.by == "length"]
    assert all(r.n_cases == 28 * 2 * 10 and r.n_questions == 28 for r in per_length)
    assert all(0.0 <= r.auc <= 1.0 for r in per_length)
    assert sum(r.unread for r in per_length) == sum(c.unread for c in cases)
    record(benchmark, clock, cases=len(cases), rows=len(rows))


@pytest.mark.slow
def test_the_grid_bench_runs_and_prints_its_ratios(
    tmp_path: Path, shared_corpus_dir: Path, monkeypatch: pytest.MonkeyPatch, bench_script, capsys
):
    """``benchmarks/bench_grid.py`` on a tiny grid: every step reports a number and a verdict.

    In-process: (a) and (b) run in the bench's own process anyway, and (c) starts its own
    pytest subprocesses; a fresh interpreter would only import torch again.
    """
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "bench.json"
    command = [
        "--model=packaged-static",
        f"--corpus={shared_corpus_dir}",
        "--lengths=128,512",
        "--positions=3",
        "--groups=dietary,vehicle",
        "--skip=d,e",
        "--repeat=2",
        f"--json={out}",
    ]
    stdout = run_script("bench_grid", command, bench_script, capsys)
    report = json.loads(out.read_text(encoding="utf-8"))
    ratios = report["ratios"]
    assert set(ratios) == {"cold", "cold_tokens_cached", "warm"}, ratios
    assert min(ratios.values()) > 0, ratios
    assert "(b) cold run / (a) bare encode" in stdout and "(c) warm pytest" in stdout
    assert report["machine"]["python"] and report["grid"]["model"] == "packaged-static"
    cached = report["results"]["b"]["sentences_cached"]
    for step in (report["results"]["a"], report["results"]["b"], cached):
        times = step["all_seconds"]  # each timed twice, the fastest counted
        assert len(times) == 2 and step["seconds"] == min(times)
    assert "sentence cache warm" in stdout and "split (fastest run): build" in stdout
    warm = report["results"]["c"]
    assert warm["warm_rc"] == warm["cold_rc"] == 0, warm
    assert warm["outcomes"] == warm["trivial_outcomes"], warm


@pytest.mark.slow
def test_the_long_bench_reports_memory_and_time_per_length(tmp_path: Path, shared_corpus_dir: Path):
    """``benchmarks/bench_long.py``: one fresh interpreter per length, peak RSS and time each."""
    out = tmp_path / "long.json"
    command = [
        sys.executable,
        str(REPO / "benchmarks" / "bench_long.py"),
        f"--corpus={shared_corpus_dir}",
        "--lengths=128,256",
        f"--json={out}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads(out.read_text(encoding="utf-8"))["rows"]
    assert [row["length"] for row in rows] == [128, 256], rows
    for row in rows:
        assert row["rss_mib"] > 50 and row["seconds"] > 0 and row["tokens"] > 0, row
    assert rows[1]["tokens"] > rows[0]["tokens"]
    assert "peak RSS" in done.stdout


@pytest.mark.slow
def test_the_readme_speed_figure_is_drawn_from_three_real_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bench_script, capsys
):
    """``benchmarks/readme_speed_figure.py``: the report's speed figure, a PNG, and its rates.

    In-process: the three runs are in-process in the script too.
    """
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "speed.png"
    stdout = run_script(
        "readme_speed_figure", ["--lengths=128,256", f"--out={out}"], bench_script, capsys
    )
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    lines = [line for line in stdout.splitlines() if "tokens/s:" in line]
    assert [line.split(" (")[0] for line in lines] == ["baseline", "minilm", "static"]
    for line in lines:
        assert re.search(r"128: [\d,]+, 256: [\d,]+$", line), line
