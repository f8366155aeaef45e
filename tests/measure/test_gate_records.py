"""A gate is a value (pytest_niah.measure.gating.Gate): immutable and hashable, like its verdict.

Found by mutation testing: ``frozen=True`` could be dropped without a test noticing. A gate
built for one row is shown in several places (test outcome, terminal notes); none may
change it, and equal gates collapse in a set.
"""

from __future__ import annotations

import dataclasses

import pytest

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.measure.comparison_verdicts import unpaired_verdict
from pytest_niah.measure.gating import COMPARE_FAIL, Gate


def test_a_gate_is_immutable_and_hashable():
    verdict = unpaired_verdict(Allowance("auc", 0.02, relative=False), 12)
    gate = Gate(COMPARE_FAIL, verdict, verdict.outcome("pass"))
    assert gate.outcome == "fail"  # nothing was compared: fails under every policy
    with pytest.raises(dataclasses.FrozenInstanceError):
        gate.outcome = "pass"  # type: ignore[misc]
    assert len({gate, Gate(COMPARE_FAIL, verdict, "fail")}) == 1
