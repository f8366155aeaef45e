"""``action.yml`` passes ``extra-args`` to pytest without word-splitting surprises or globs.

Found: the action's step expanded ``$IN_EXTRA_ARGS`` unquoted, so a ``*`` was expanded to
the files of the checkout and every white space split. The step is run here with bash, as
the runner does, with ``pytest`` a stub that prints the arguments it got.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
(STEP,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == "niah"]


def pytest_args(tmp_path: Path, extra: str) -> list[str]:
    """The arguments after the action's own that the step hands pytest."""
    stub = tmp_path / "bin" / "pytest"
    stub.parent.mkdir()
    stub.write_text(f"#!{sys.executable}\nimport sys\nprint(repr(sys.argv[1:]))\n")
    stub.chmod(0o755)
    job = tmp_path / "job"
    job.mkdir()
    (job / "conftest.py").write_text("")  # what a glob would find
    (job / "notes.txt").write_text("")
    env = {
        **os.environ,
        "PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}",
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        **{key: "" for key in STEP["env"]},
        "IN_MODEL": "m",
        "IN_LENGTHS": "128",
        "IN_POSITIONS": "2",
        "IN_REPORT_DIR": "r",
        "IN_EXTRA_ARGS": extra,
    }
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", STEP["run"]],
        cwd=job, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = eval(done.stdout.strip())  # the stub's repr of a list of strings
    return got[4:]  # after --niah-model, --niah-lengths, --niah-positions, --niah-report


def test_a_glob_stays_a_glob(tmp_path):
    assert pytest_args(tmp_path, "-k * --niah-groups=a*") == ["-k", "*", "--niah-groups=a*"]


def test_white_space_separates_and_nothing_else(tmp_path):
    assert pytest_args(tmp_path, "  -x\t --niah-groups=a,b  ") == ["-x", "--niah-groups=a,b"]


def test_empty_gives_no_argument(tmp_path):
    assert pytest_args(tmp_path, "") == []


def test_one_argument_per_line_keeps_its_spaces(tmp_path):
    extra = "--niah-json=my results.json\n\n-k\nnot slow and *\n"
    assert pytest_args(tmp_path, extra) == ["--niah-json=my results.json", "-k", "not slow and *"]
