"""The gate column of the summary table: the worst outcome of a length's gates."""

from __future__ import annotations

import itertools

import pytest

from pytest_niah.measure.gating import Gate, gate_cell
from pytest_niah.measure.stats import Interval
from pytest_niah.measure.verdicts import minimum_verdict

VERDICT = minimum_verdict(Interval("auc", 0.8, 0.7, 0.9, 0.01, 8), 0.6)


def gate(outcome: str) -> Gate:
    return Gate("--niah-min-auc", VERDICT, outcome)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("outcomes", "cell"),
    [
        ((), "-"),
        (("pass",), "pass"),
        (("warn",), "warn"),
        (("fail",), "FAIL"),
        (("pass", "warn"), "warn"),
        (("fail", "warn"), "FAIL"),  # found: no test had a failing and a warning gate
        (("pass", "fail"), "FAIL"),
        (("pass", "warn", "fail"), "FAIL"),
    ],
)
def test_the_worst_outcome_whatever_the_order(outcomes, cell):
    for order in itertools.permutations(outcomes):
        assert gate_cell([gate(o) for o in order]) == cell


@pytest.mark.parametrize("size", range(4))
def test_the_summary_tables_use_the_same_worst_outcome_rule(size):
    """One rule (measure.gating.worst_outcome) for the terminal's column and summary.md's."""
    from pytest_niah.report.headline import worst

    for outcomes in itertools.product(("pass", "warn", "fail"), repeat=size):
        assert worst(outcomes) == gate_cell([gate(o) for o in outcomes]).lower()
