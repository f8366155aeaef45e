"""The public fixtures: a user's own tests can read the results of every model."""

from __future__ import annotations

import pytest

USER_TEST = """
def test_user(niah_results, niah_config, niah_model, niah_embedder, niah_session):
    assert niah_model in niah_session.labels
    assert niah_results.config == niah_config == niah_session.configs[niah_model]
    assert niah_results.model.name == niah_config.model == niah_embedder.name
    row = niah_results.row("literal", 128)
    assert (row.found, row.missed, row.comparative_ratio) == (4, 0, 1.0)
    assert row.auc == niah_results.interval("literal", 128, "auc", "whole").point > 0.9
    with open("calls.txt", "a") as calls:
        calls.write(f"{niah_model} {len(niah_results.cases)}\\n")
"""
SMALL = ("--niah-arms=literal", "--niah-lengths=128", "--niah-positions=1")
# Without a path a run is the grid alone (#31): a user's test runs when named, the grid too.
WITH_GRID = ("test_user.py", "test_niah.py")


def test_user_test_runs_once_per_model(niah):
    niah.pytester.makepyfile(test_user=USER_TEST)
    result = niah.run(
        "-v", *SMALL, "--niah-model=a=lexical:tfidf", "--niah-model=b=lexical:tfidf", *WITH_GRID
    )
    per_model = 2 * 2 + 1  # cases and gate
    result.assert_outcomes(passed=2 * per_model + 2)
    result.stdout.fnmatch_lines_random(
        ["*test_user.py::test_user?a? *PASSED*", "*test_user.py::test_user?b? *PASSED*"]
    )
    calls = (niah.pytester.path / "calls.txt").read_text().splitlines()
    assert sorted(calls) == ["a 4", "b 4"]


def test_user_test_with_one_model(niah):
    niah.pytester.makepyfile(test_user=USER_TEST)
    result = niah.run("-v", *SMALL, *WITH_GRID)
    result.assert_outcomes(passed=2 * 2 + 1 + 1)
    result.stdout.fnmatch_lines(["*test_user.py::test_user?lexical-tfidf? PASSED*"])


def test_user_test_is_skipped_without_niah_model(niah):
    niah.pytester.makepyfile(test_user=USER_TEST)
    result = niah.run("-rs", model=None)
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED *pytest-niah is not active: add --niah-model=NAME"])


def test_naming_a_test_file_runs_only_it_and_naming_the_suite_adds_the_grid(niah):
    """Paths on the command line limit a run, as in any pytest run (#16)."""
    niah.pytester.makepyfile(test_user=USER_TEST)
    alone = niah.run("-v", *SMALL, "test_user.py")
    alone.assert_outcomes(passed=1)  # the user's test; the grid still runs for its fixture
    with_grid = niah.run("-v", *SMALL, "test_user.py", "test_niah.py")
    with_grid.assert_outcomes(passed=2 * 2 + 1 + 1)
