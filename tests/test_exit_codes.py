"""The plugin's and the command's exit codes: one table in docs/errors.md, and they agree (#44).

Found: a refused comparison exited 4 under pytest and 2 from ``pytest-niah summary``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_niah.cli import common, main

ERRORS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"


def documented() -> dict[int, tuple[str, str]]:
    """The exit-code table of docs/errors.md: code -> (plugin, command)."""
    text = ERRORS_PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- exit-codes: checked by tests/test_exit_codes.py -->\n", 1)[1]
    rows = re.findall(r"^\| (\d+) \| (.+?) \| (.+?) \|$", table.split("\n\n", 1)[0], re.M)
    return {int(code): (plugin, command) for code, plugin, command in rows}


def test_the_table_names_every_code_the_command_returns_with_pytests_meaning():
    table = documented()
    assert common.EXIT_OK == pytest.ExitCode.OK == 0
    assert common.EXIT_FAILED == pytest.ExitCode.TESTS_FAILED == 1
    assert common.EXIT_INTERRUPTED == pytest.ExitCode.INTERRUPTED == 2
    assert common.EXIT_USAGE == pytest.ExitCode.USAGE_ERROR == 4
    for code in (common.EXIT_OK, common.EXIT_FAILED, common.EXIT_INTERRUPTED, common.EXIT_USAGE):
        plugin, command = table[code]
        assert command != "-" and plugin != "-"
    assert "refused" in table[4][0] and "refused" in table[4][1]


def test_a_usage_error_of_the_command_exits_as_pytests_does(capsys):
    # argparse's own usage error (an unknown command) exits 2 in argparse: 4 here.
    assert main(["no-such-command"]) == pytest.ExitCode.USAGE_ERROR
    assert main(["summary"]) == pytest.ExitCode.USAGE_ERROR  # a missing argument
    capsys.readouterr()
