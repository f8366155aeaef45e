"""With ``--niah-model`` and no path, a run is the grid alone, in any project (#31).

The scratch project here is what a team's repository looks like to a CI job that installs
only ``pytest-niah[all]``: its own ``tests/`` under ``testpaths``, and a conftest importing
a module that job does not install. Paths named on the command line keep their meaning.
"""

from __future__ import annotations

import pytest

SMALL = ("--niah-arms=literal", "--niah-lengths=128", "--niah-positions=1")
GRID_TESTS = 2 * 2 + 1  # 2 groups x 2 orders at one length and position, and the gate


@pytest.fixture
def project(niah):
    """A project with testpaths, unit tests and a conftest that cannot be imported here."""
    niah.pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    tests = niah.pytester.mkpydir("tests")
    (tests / "conftest.py").write_text("import a_module_this_job_did_not_install\n")
    (tests / "test_unit.py").write_text("def test_unit():\n    pass\n")
    niah.pytester.makepyfile(test_top="def test_top():\n    pass\n")
    return niah


def test_the_projects_own_run_meets_its_conftest(project):
    """The scratch project is a real trap: without --niah-model its conftest stops pytest."""
    result = project.run(model=None)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "a_module_this_job_did_not_install" in result.stderr.str() + result.stdout.str()


def test_no_path_runs_only_the_grid_ignoring_testpaths_and_conftests(project):
    result = project.run("-v", *SMALL)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=GRID_TESTS)
    out = result.stdout.str()
    assert "test_unit" not in out and "test_top" not in out
    assert "a_module_this_job_did_not_install" not in out


def test_no_path_from_a_subfolder_runs_only_the_grid(project, monkeypatch):
    """The Quick start's ``mkdir niah-try && cd niah-try`` inside a checkout."""
    folder = project.pytester.mkdir("niah-try")
    (folder / "test_here.py").write_text("def test_here():\n    pass\n")
    monkeypatch.chdir(folder)
    result = project.run("-v", *SMALL)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=GRID_TESTS)
    assert "test_here" not in result.stdout.str()


def test_paths_on_the_command_line_keep_their_meaning(project):
    """A named file limits the run; naming the suite adds the grid beside it."""
    alone = project.run("-v", *SMALL, "test_top.py")
    alone.assert_outcomes(passed=1)
    both = project.run("-v", *SMALL, "test_top.py", "test_niah.py")
    both.assert_outcomes(passed=1 + GRID_TESTS)
    # A named tests/ folder is the project's own: its conftest loads, and fails, as always.
    named = project.run(*SMALL, "tests")
    assert named.ret == pytest.ExitCode.USAGE_ERROR
