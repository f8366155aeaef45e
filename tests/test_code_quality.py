"""The package's own rules, checked on every CI run: types, import direction, lint.

Each is a tool configured in pyproject.toml; running them here means a change that breaks
one fails the suite like any other regression.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_the_package_type_checks_under_mypy_strict():
    done = run(sys.executable, "-m", "mypy", "--strict", "pytest_niah")
    assert done.returncode == 0, done.stdout + done.stderr


def test_imports_flow_one_way_through_the_pipeline():
    """``plugin | cli > report > experiment > results > measure > embed > haystacks > ...``."""
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert linter is not None, "import-linter is missing: install the test extra"
    done = run(linter)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_ruff_finds_nothing_in_the_package_tests_and_benchmarks():
    done = run(sys.executable, "-m", "ruff", "check", "pytest_niah", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout + done.stderr
