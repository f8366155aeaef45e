"""Without --niah-model the plugin adds nothing and imports nothing heavy."""

from __future__ import annotations

import json

import pytest

PROBE = """
import json, sys
from pathlib import Path

HEAVY = {"torch", "sentence_transformers", "transformers", "sklearn", "numpy", "scipy"}

def pytest_collection_finish(session):
    mods = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    Path("modules.json").write_text(json.dumps(mods))
"""
OWN_TEST = """
def test_own():
    assert True
"""


def test_collects_only_the_projects_tests_and_imports_nothing_heavy(niah):
    niah.pytester.makeconftest(PROBE)
    niah.pytester.makepyfile(test_own=OWN_TEST)
    result = niah.pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_own.py::test_own", "1 test collected in *"])
    assert "test_niah" not in result.stdout.str()
    # The plugin's hook modules are imported by pytest itself, so they are rewritten and
    # pytest has nothing to warn about (a module imported first warned in every run).
    assert "PytestAssertRewriteWarning" not in result.stdout.str()
    assert json.loads((niah.pytester.path / "modules.json").read_text()) == []


def test_probe_does_see_heavy_imports_when_active(niah):
    """The probe above can fail: with the plugin active and run, scikit-learn is imported."""
    # A plugin, not a conftest: a run of the grid alone loads no conftest of the project.
    niah.pytester.makepyfile(
        probe=PROBE.replace("pytest_collection_finish", "pytest_sessionfinish")
    )
    result = niah.run(
        "-p",
        "probe",
        "--niah-arms=literal",
        "--niah-lengths=128",
        "--niah-positions=1",
        subprocess=True,
    )
    assert result.ret == pytest.ExitCode.OK
    assert "sklearn" in json.loads((niah.pytester.path / "modules.json").read_text())


def test_runs_add_no_tests_no_summary_and_ignore_other_niah_options(niah):
    niah.pytester.makepyfile(test_own=OWN_TEST)
    result = niah.run("-q", model=None)  # every grid option, but no --niah-model
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "pytest-niah" not in out
    assert "test_needle" not in out


def test_empty_project_collects_nothing(niah):
    result = niah.run("--collect-only", "-q", model=None)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
