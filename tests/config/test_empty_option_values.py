"""An empty value of any option that takes one is refused, not read as "not given".

Found: ``--niah-groups=`` and ``--niah-json=`` (an unset variable in CI) meant "not given":
every group ran, no JSON was written, nothing was said; ``--niah-min-ratio=`` was accepted
and gated nothing. Only ``--niah-seeds=`` was refused. One rule now covers the whole table.
"""

from __future__ import annotations

import argparse

import pytest

from pytest_niah.cli.shared_options import add_shared_option, shared_value
from pytest_niah.config.options import BY_NAME, OPTIONS
from pytest_niah.errors import ConfigError

TAKES_A_VALUE = [option.name for option in OPTIONS if not option.flag]


def test_every_option_with_a_value_is_in_the_table_checked():
    assert {"groups", "json", "report", "needles", "corpus", "min-ratio", "storage"} <= set(
        TAKES_A_VALUE
    )
    assert "cache-dir" in TAKES_A_VALUE and "compare-fail" in TAKES_A_VALUE


@pytest.mark.parametrize("empty", ["", "  ", ",", " , "], ids=["empty", "blank", "comma", "commas"])
@pytest.mark.parametrize("name", TAKES_A_VALUE)
def test_an_empty_value_is_a_usage_error_naming_the_option(name, empty):
    option = BY_NAME[name]
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument(option.flag_name, type=option.argparse_type)  # as the plugin adds it
    with pytest.raises(argparse.ArgumentError) as caught:
        parser.parse_args([f"{option.flag_name}={empty}"])
    assert str(caught.value).startswith(f"argument {option.flag_name}: ")


@pytest.mark.parametrize("name", TAKES_A_VALUE)
def test_a_blank_value_says_it_is_empty_and_how_to_leave_it_out(name):
    option = BY_NAME[name]
    try:
        option.parse(" ")
    except ConfigError:
        return  # the option's own parser refuses it, in its own words
    with pytest.raises(ConfigError) as caught:
        option.parse_given(" ")
    assert "is empty (an unset variable?)" in caught.value.problem
    assert f"leave {option.flag_name} out" in caught.value.hint


@pytest.mark.parametrize("flag", ["--niah-groups=", "--niah-json=", "--niah-min-ratio="])
def test_a_run_with_an_empty_value_stops_before_any_work(pytester, flag):
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--niah-model=packaged-static", flag)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"argument {flag[:-1]}: '' is empty (an unset variable?)" in result.stderr.str()


def test_a_command_refuses_an_empty_shared_option_too():
    parser = argparse.ArgumentParser()
    add_shared_option(parser, "compare-allow")
    args = parser.parse_args(["--compare-allow="])
    with pytest.raises(ConfigError, match=r"--compare-allow: .*empty"):
        shared_value(args, "compare-allow")


@pytest.mark.parametrize(
    "argv",
    [
        ["history", "--storage="],
        ["history", "--out="],
        ["history", "--arm="],
        ["report", "--out=", "x.json"],
        ["summary", "x.json", "--compare="],
        ["summary", "x.json", "--label= "],
    ],
    ids=" ".join,
)
def test_the_commands_refuse_an_empty_value_of_their_own_options(argv, tmp_path):
    # Found: `pytest-niah history --storage=` read the default folder, `--out=` wrote nothing.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "pytest_niah", *argv],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    # A usage error: exit 4, as pytest's; 2 would mean interrupted.
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    flag = next(a for a in argv if a.startswith("--")).split("=")[0]
    assert f"argument {flag}: " in done.stderr and "is empty (an unset variable?)" in done.stderr
    assert list(tmp_path.iterdir()) == []
