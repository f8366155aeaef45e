"""--niah-speed-fail: test_speed gated on relative_speed against pytest-benchmark's compared run.

The rule (:class:`SpeedChange`) is unit-tested on numbers at its boundary; the plugin on the
packaged static model: a run saved with ``--benchmark-save``, its JSON edited so that the
verdict does not depend on this machine's load (10x this run's figure, 0.1x, or none), and
compared. No assertion here depends on how fast anything ran.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from pytest_niah.config.gate_expressions import parse_speed_fail
from pytest_niah.config.options import BY_NAME
from pytest_niah.errors import ConfigError
from pytest_niah.experiment.speed import REFERENCE, SpeedChange, compared_relative_speed
from pytest_niah.report.speed_text import speed_test_line

STATIC = "packaged-static"
QUICK = ("--benchmark-min-rounds=2", "--benchmark-max-time=0.01", "--benchmark-warmup=off")


# -- the rule ---------------------------------------------------------------------------------


def test_a_fall_of_exactly_the_allowance_passes_and_just_past_it_fails():
    assert not SpeedChange(current=3.0, compared=4.0, allowance=25.0).failed  # -25% exactly
    assert SpeedChange(current=2.999, compared=4.0, allowance=25.0).failed
    assert not SpeedChange(current=80.0, compared=100.0, allowance=20.0).failed
    assert SpeedChange(current=79.99, compared=100.0, allowance=20.0).failed


def test_a_faster_or_equal_run_passes_even_with_no_allowance():
    assert not SpeedChange(current=5.0, compared=4.0, allowance=0.0).failed
    assert not SpeedChange(current=4.0, compared=4.0, allowance=0.0).failed
    assert SpeedChange(current=3.99, compared=4.0, allowance=0.0).failed


def test_the_change_is_relative_to_the_compared_run():
    assert SpeedChange(3.0, 4.0, 20.0).change == pytest.approx(-0.25)
    assert SpeedChange(6.0, 4.0, 20.0).change == pytest.approx(0.5)


def test_the_description_names_both_figures_the_change_and_the_allowance():
    text = SpeedChange(3.0, 4.0, 20.0).describe("Linux/0001_base.json")
    assert text == "relative_speed 3 vs 4 in run Linux/0001_base.json: -25.0% (allowed: -20%)"


def entry(**extra: object) -> dict[str, object]:
    """A saved benchmark of test_speed[128] with this ``extra_info`` over a valid one."""
    base = {"model": STATIC, "length": 128, "reference": REFERENCE, "relative_speed": 400.0}
    return {"name": "test_speed[128]", "extra_info": base | extra}


def test_the_compared_figure_is_read_only_for_the_same_model_and_length():
    assert compared_relative_speed(entry(), STATIC, 128) == 400.0
    with pytest.raises(ValueError, match="has no benchmark of this test"):
        compared_relative_speed(None, STATIC, 128)
    with pytest.raises(ValueError, match="timed model 'packaged-minilm' at length 128"):
        compared_relative_speed(entry(model="packaged-minilm"), STATIC, 128)
    with pytest.raises(ValueError, match="at length 256 under this test's name, not"):
        compared_relative_speed(entry(length=256), STATIC, 128)
    with pytest.raises(ValueError, match="another reference workload"):
        compared_relative_speed(entry(reference="something else"), STATIC, 128)


@pytest.mark.parametrize("value", [None, 0, -1.0, "400", True, float("nan")])
def test_a_compared_run_without_a_usable_relative_speed_has_none(value):
    with pytest.raises(ValueError, match="has no relative_speed"):
        compared_relative_speed(entry(relative_speed=value), STATIC, 128)
    saved_before_it_existed = {"name": "test_speed[128]", "extra_info": {"model": STATIC}}
    with pytest.raises(ValueError, match=r"has no relative_speed \(found None\)"):
        compared_relative_speed(saved_before_it_existed, STATIC, 128)
    # Found (mutation seed 981343202, speed.py:250): a benchmark saved without any
    # extra_info (pytest-benchmark's own, or a null) has no figure, not an AttributeError.
    for bare in ({"name": "test_speed[128]"}, {"name": "test_speed[128]", "extra_info": None}):
        with pytest.raises(ValueError, match=r"has no relative_speed \(found None\)"):
            compared_relative_speed(bare, STATIC, 128)


def test_the_terminal_line_shows_the_change_versus_each_compared_run():
    run = "Linux/0001_base.json"
    info = {"tokens_per_second": 900.0, "rounds": 5, "relative_speed": 3.052}
    line = speed_test_line({128: info | {"speed_compared": [{"run": run, "change": -0.125}]}})
    assert line is not None
    assert line.endswith("128: 900, 3.05 per reference (-12.5% vs Linux/0001_base.json)")
    line = speed_test_line({128: info | {"relative_speed": 444.6, "speed_compared": []}})
    assert line is not None and line.endswith("128: 900, 445 per reference")


# -- the option -------------------------------------------------------------------------------


def test_the_percentage_parses():
    assert parse_speed_fail("20%") == 20.0
    assert parse_speed_fail(" 0% ") == 0.0
    assert parse_speed_fail("99.5%") == 99.5


@pytest.mark.parametrize("text", ["20", "0.2", "abc%", "%", "-5%", "100%", "150%", "nan%", ""])
def test_a_bad_percentage_is_refused_with_the_fix(text):
    with pytest.raises(ConfigError) as error:
        parse_speed_fail(text)
    assert "e.g. 20%" in str(error.value)


def test_a_bad_percentage_on_the_command_line_is_a_usage_error(capsys):
    option = BY_NAME["speed-fail"]
    parser = argparse.ArgumentParser(prog="pytest")
    parser.add_argument(option.flag_name, dest=option.dest, type=option.argparse_type)
    assert parser.parse_args(["--niah-speed-fail=20%"]).niah_speed_fail == 20.0
    with pytest.raises(SystemExit):
        parser.parse_args(["--niah-speed-fail=20"])
    err = capsys.readouterr().err
    assert "--niah-speed-fail: '20' is not a percentage" in err and "e.g. 20%" in err


# -- the plugin -------------------------------------------------------------------------------


def run(niah, *args: str, lengths: str = "128") -> pytest.RunResult:
    """A run of the static model with pytest-benchmark on and no xdist in the inner run."""
    grid = ("--niah-arms=literal", f"--niah-lengths={lengths}", "--niah-positions=2")
    full = niah.args(*grid, "--niah-groups=dietary-01", *args, model=STATIC)
    at = full.index("no:benchmark")
    del full[at - 1 : at + 1]
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTEST_XDIST_WORKER", raising=False)  # see test_option_speed.py
        return niah.pytester.runpytest(*full)


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


def usage_error(result: pytest.RunResult) -> str:
    out = output(result)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, out
    assert "texts embedded" not in out and "Traceback" not in out
    return out


def test_the_gate_without_speed_is_a_usage_error(niah):
    out = usage_error(run(niah, "--niah-speed-fail=20%", "--benchmark-compare"))
    assert "--niah-speed-fail=20% gates test_speed, which only --niah-speed adds" in out
    assert "Fix: add --niah-speed, or drop --niah-speed-fail" in out


def test_the_gate_without_a_compared_run_is_a_usage_error(niah):
    out = usage_error(run(niah, "--niah-speed", "--niah-speed-fail=20%"))
    assert "--niah-speed-fail=20% has no compared run" in out
    assert "--benchmark-save=NAME" in out and "--benchmark-compare" in out


def test_a_compare_that_finds_no_saved_run_is_a_usage_error(niah):
    args = ("--niah-speed", "--niah-speed-fail=20%", "--benchmark-storage=empty")
    out = usage_error(run(niah, *args, "--benchmark-compare"))
    assert "--niah-speed-fail: --benchmark-compare found no saved run in the benchmark" in out
    out = usage_error(run(niah, *args, "--benchmark-compare=0007"))
    assert "--benchmark-compare=0007 found no saved run in the benchmark storage (empty)" in out
    assert "--niah-speed --benchmark-save=NAME" in out


def test_the_bad_percentage_is_a_usage_error_before_any_work(niah):
    out = usage_error(run(niah, "--niah-speed", "--niah-speed-fail=20"))
    assert "--niah-speed-fail: '20' is not a percentage" in out


def test_each_length_is_gated_on_relative_speed_versus_the_compared_run(niah):
    """One saved run, edited: a million times this machine's figure at 128 (fails), a
    millionth at 256 (passes), none at 512 (saved before it existed: fails, saying how to fix
    it). Not 10x and 0.1x: on the loaded 2-CPU machine the static model's relative speed moved
    3x between runs minutes apart, and once over 12x (0.1x failed). No load moves it 1e6x."""
    saved = run(
        niah,
        "--niah-speed",
        "--benchmark-save=base",
        "--benchmark-storage=bench",
        *QUICK,
        lengths="128,256,512",
    )
    assert saved.ret == pytest.ExitCode.OK, output(saved)
    (stored,) = Path(niah.pytester.path / "bench").rglob("0001_base.json")
    data = json.loads(stored.read_text(encoding="utf-8"))
    extra = {e["name"]: e["extra_info"] for e in data["benchmarks"]}
    before = {name: info["relative_speed"] for name, info in extra.items()}
    extra["test_speed[128]"]["relative_speed"] *= 1e6
    extra["test_speed[256]"]["relative_speed"] *= 1e-6
    del extra["test_speed[512]"]["relative_speed"]
    stored.write_text(json.dumps(data), encoding="utf-8")

    compared = run(
        niah,
        "--niah-speed",
        "--niah-speed-fail=20%",
        "--benchmark-storage=bench",
        "--benchmark-compare=0001",
        "--benchmark-json=now.json",
        *QUICK,
        lengths="128,256,512",
    )
    out = output(compared)
    assert compared.ret == pytest.ExitCode.TESTS_FAILED, out
    failed = [line for line in compared.outlines if line.startswith("FAILED")]
    assert len(failed) == 2, out
    assert [f for f in failed if "test_speed[128]" in f] and [
        f for f in failed if "test_speed[512]" in f
    ]
    now = {
        e["name"]: e["extra_info"]
        for e in json.loads((niah.pytester.path / "now.json").read_text())["benchmarks"]
    }
    # 128: a fall of ~100%, both figures, the allowance, the run and the option named
    fell = re.search(
        r"--niah-speed-fail=20%: speed fell by more than the allowance: relative_speed ([\d,.e+]+) "
        r"vs ([\d,.e+]+) in run (\S+): -(\d+\.\d)% \(allowed: -20%\)",
        out,
    )
    assert fell, out
    assert fell.group(3).endswith("0001_base.json")
    assert float(fell.group(2).replace(",", "")) == pytest.approx(
        before["test_speed[128]"] * 1e6, rel=1e-3
    )
    assert float(fell.group(1).replace(",", "")) == pytest.approx(
        now["test_speed[128]"]["relative_speed"], rel=1e-3
    )
    # 256: within the allowance (faster), the change recorded and shown
    [change] = now["test_speed[256]"]["speed_compared"]
    assert change["relative_speed"] == pytest.approx(before["test_speed[256]"] * 1e-6)
    assert change["change"] == pytest.approx(
        now["test_speed[256]"]["relative_speed"] / change["relative_speed"] - 1
    )
    [line] = [line for line in compared.outlines if line.startswith("speed test (")]
    assert re.search(r"256: .* \(\+[\d,.]+% vs \S+0001_base\.json\)", line), line
    # 512: nothing to compare with, and how to fix it
    assert re.search(
        r"--niah-speed-fail=20%: the compared run \S+0001_base\.json has no relative_speed "
        r"\(found None\): nothing to compare\. Fix: save a run with --niah-speed",
        out,
    ), out
