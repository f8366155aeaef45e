"""Node ids of gates and cases paste back, and ``--lf`` after a failed gate re-runs that gate."""

from __future__ import annotations

import json
import re

import pytest


def test_a_pasted_gate_id_is_reported_whole_and_last_failed_reruns_only_it(niah):
    # --lf needs the cache provider, which the niah fixture's runs turn off: drop that.
    args = niah.args("--niah-min-auc=0.99")[2:]
    gate = "test_niah.py::test_gate[gate-onehop-L128]"
    first = niah.pytester.runpytest(*args, gate)
    first.assert_outcomes(failed=1, deselected=niah.n_cases + niah.n_gates - 1)
    assert f"FAILED {gate} - " in first.stdout.str()
    assert not re.search(r"(FAILED|^_+) ::test_gate", first.stdout.str(), re.MULTILINE)
    cache = niah.pytester.path / ".pytest_cache" / "v" / "cache" / "lastfailed"
    assert json.loads(cache.read_text(encoding="utf-8")) == {gate: True}
    # The next run with --lf, and no path: only that gate runs again.
    again = niah.pytester.runpytest(*args, "--lf")
    again.assert_outcomes(failed=1, deselected=niah.n_cases + niah.n_gates - 1)
    assert f"FAILED {gate} - " in again.stdout.str()


def test_a_pasted_function_id_runs_each_of_its_parameters(niah):
    result = niah.run("test_niah.py::test_gate", "-v")
    result.assert_outcomes(passed=niah.n_gates, deselected=niah.n_cases)
    assert re.search(
        r"^test_niah\.py::test_gate\[gate-onehop-L128\] PASSED", result.stdout.str(), re.M
    )


def test_a_pasted_id_of_no_test_is_a_usage_error_naming_it(niah):
    result = niah.run("test_niah.py::test_gate[gate-onehop-L99]")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "not found: test_niah.py::test_gate[gate-onehop-L99]" in err and "Fix: " in err


def test_own_tests_beside_a_pasted_id_still_run(niah):
    niah.pytester.makepyfile(test_mine="def test_mine():\n    pass\n")
    result = niah.run("test_mine.py", "test_niah.py::test_gate[gate-literal-L128]", "-v")
    result.assert_outcomes(passed=2, deselected=niah.n_cases + niah.n_gates - 1)
    assert "test_mine.py::test_mine PASSED" in result.stdout.str()


def test_an_id_names_its_depth_so_another_grids_id_selects_nothing_and_says_why(niah):
    # The tiny grid has 3 positions: depths 0, 50 and 100 percent. d25 is a case of a
    # 5-position run; once it was p01, the 3-position grid's halfway case, run silently.
    pasted = "test_niah.py::test_needle[dietary-01-onehop-default-L128-d25]"
    result = niah.run(pasted)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"not found: {pasted}" in err
    assert "its needle depths: d0, d50, d100" in err and "--niah-* options" in err


def test_an_id_of_the_same_depth_from_another_grid_runs_that_case(niah):
    # Halfway is d50 with 3 positions or 5: the same case, whatever the grid.
    result = niah.run("test_niah.py::test_needle[dietary-01-literal-default-L128-d50]", "-v")
    result.assert_outcomes(passed=1, deselected=niah.n_cases + niah.n_gates - 1)


def test_a_pasted_id_runs_where_the_projects_own_conftest_cannot_import(niah):
    # The bare command leaves the team's tests and conftests out; a pasted id does too.
    niah.pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    tests = niah.pytester.mkdir("tests")
    (tests / "conftest.py").write_text("import a_module_ci_does_not_install\n")
    (tests / "test_unit.py").write_text("def test_unit():\n    pass\n")
    result = niah.run("test_niah.py::test_gate[gate-literal-L128]")
    result.assert_outcomes(passed=1, deselected=niah.n_cases + niah.n_gates - 1)
    assert "ImportError" not in result.stdout.str() + result.stderr.str()
