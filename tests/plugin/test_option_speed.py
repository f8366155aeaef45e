"""--niah-speed: one test_speed[LENGTH] per length, timed through pytest-benchmark.

The packaged static model on two groups at 128 and 256 tokens; pytest-benchmark's own
options (--benchmark-json, --benchmark-save, --benchmark-compare-fail) do what they do for
any benchmark. Without pytest-benchmark the option is a usage error before any model loads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("pytest_benchmark")
pytest.importorskip("static_model")

STATIC = "packaged-static"
GRID = ("--niah-arms=literal", "--niah-lengths=128,256", "--niah-positions=2")
# Few, short rounds: the tests check the plumbing, not the numbers.
QUICK = ("--benchmark-min-rounds=2", "--benchmark-max-time=0.01", "--benchmark-warmup=off")
SPEED_LINE = re.compile(r"^speed \(tokens/s of model time, per length\): 128: [\d,]+, 256: [\d,]+$")


def run(niah, *args: str, benchmark: bool = True) -> pytest.RunResult:
    """A run of the static model; pytest-benchmark stays on unless ``benchmark`` is False."""
    full = niah.args(*GRID, *args, model=STATIC)
    if benchmark:
        at = full.index("no:benchmark")
        del full[at - 1 : at + 1]
    with pytest.MonkeyPatch.context() as patch:
        # pytest-benchmark disables itself in an xdist worker (this suite runs with -n 2),
        # and an in-process run inherits the worker's variable: the inner run has no workers.
        patch.delenv("PYTEST_XDIST_WORKER", raising=False)
        return niah.pytester.runpytest(*full)


def benchmarks(path: Path) -> dict[str, dict]:
    """{test name: benchmark} of a --benchmark-json file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {entry["name"]: entry for entry in data["benchmarks"]}


def test_speed_adds_one_benchmark_per_length_with_tokens_per_second(niah):
    result = run(
        niah, "--niah-speed", "--benchmark-json=bench.json", "--niah-json=out.json", *QUICK
    )
    result.assert_outcomes(passed=2 * 2 * 2 * 2 + 2 + 2)  # cases, gates, test_speed x2
    found = benchmarks(niah.pytester.path / "bench.json")
    assert sorted(found) == ["test_speed[128]", "test_speed[256]"]
    for length in (128, 256):
        extra = found[f"test_speed[{length}]"]["extra_info"]
        assert extra["length"] == length and extra["model"] == STATIC
        assert extra["haystacks"] > 0
        assert extra["tokens"] == extra["haystacks"] * length  # the static model reads all
        assert extra["tokens_per_second"] > 0
        assert found[f"test_speed[{length}]"]["stats"]["rounds"] >= 2
    # The run's own speed record, and its line in the summary.
    speed = niah.load("out.json").speed
    assert speed is not None and [e.length for e in speed.lengths] == [128, 256]
    assert all(e.tokens_per_second and e.tokens_per_second > 0 for e in speed.lengths)
    assert any(SPEED_LINE.match(line) for line in result.outlines), result.stdout.str()


def test_without_the_option_there_is_no_speed_test(niah):
    result = run(niah, "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert not [line for line in result.outlines if "test_speed" in line]
    result = run(niah, "--niah-speed", "--collect-only", "-q")
    speed = [line for line in result.outlines if "test_speed" in line]
    assert speed == [
        "test_niah_speed.py::test_speed[128]",
        "test_niah_speed.py::test_speed[256]",
    ]


@pytest.mark.slow  # three runs of the model
def test_benchmark_compare_fail_fails_a_slower_run(niah):
    saved = run(niah, "--niah-speed", "--benchmark-save=base", "--benchmark-storage=bench", *QUICK)
    assert saved.ret == pytest.ExitCode.OK, saved.stdout.str()
    (stored,) = (niah.pytester.path / "bench").rglob("*_base.json")
    # The baseline made impossibly fast: this run is a regression of every statistic.
    data = json.loads(stored.read_text(encoding="utf-8"))
    for entry in data["benchmarks"]:
        entry["stats"] = {
            k: v * 1e-6 if isinstance(v, float) else v for k, v in entry["stats"].items()
        }
    stored.write_text(json.dumps(data), encoding="utf-8")
    compared = run(
        niah,
        "--niah-speed",
        "--benchmark-storage=bench",
        "--benchmark-compare=0001",
        "--benchmark-compare-fail=mean:5%",
        *QUICK,
    )
    out = compared.stdout.str() + compared.stderr.str()
    # pytest-benchmark raises PerformanceRegression at the end: the run does not pass.
    assert compared.ret != pytest.ExitCode.OK, out
    assert "Performance has regressed" in out, out
    assert "test_speed[128]" in out and "test_speed[256]" in out  # the compared benchmarks


def test_speed_without_pytest_benchmark_is_a_usage_error_before_any_model_loads(niah):
    result = run(niah, "--niah-speed", benchmark=False)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "--niah-speed" in out and "pytest-benchmark" in out
    assert "Fix: pip install pytest-benchmark, or drop --niah-speed" in out
    assert "texts embedded" not in out and "Traceback" not in out


@pytest.mark.slow  # two runs of the model
def test_speed_does_not_change_a_verdict(niah):
    gates = ("--niah-min-auc=0.99",)  # a threshold the static model misses at some length
    plain = run(niah, *gates, benchmark=False).parseoutcomes()
    timed = run(niah, *gates, "--niah-speed", *QUICK).parseoutcomes()
    timed["passed"] -= 2  # the two speed tests
    assert timed == plain
