"""The tests pytest-niah adds to a run with ``--niah-model``.

Each test reads the one results object of its model; the experiment itself runs once,
in the session store, the first time any test asks for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from pytest_niah.haystacks.grid import CaseParam, GateParam
from pytest_niah.plugin.session import NiahRunError, NiahSession
from pytest_niah.results.niah_results import NiahResults

pytestmark = pytest.mark.niah
RecordProperty = Callable[[str, object], None]


def results_of(session: NiahSession, label: str) -> NiahResults:
    """The model's results; a known failure fails the test with its message only."""
    try:
        return session.results(label)
    except NiahRunError as exc:
        message = str(exc)
    pytest.fail(message, pytrace=False)  # outside the except: no chained traceback


def test_needle(
    niah_case: CaseParam, niah_session: NiahSession, record_property: RecordProperty
) -> None:
    """A needle haystack outscores its no-needle control (a miss xfails unless --niah-strict)."""
    results = results_of(niah_session, niah_case.model)
    case = results.case(niah_case.case_id)
    for key in ("cos_qh", "cos_qn", "normalized", "control_score", "needle_offset", "truncated"):
        record_property(key, getattr(case, key))
    if case.problem:
        pytest.fail(f"invalid data for {case.id}: {case.problem}", pytrace=False)
    if not 0 <= case.needle_offset <= case.length - case.needle_tokens or case.needle_tokens <= 0:
        pytest.fail(
            f"invalid data for {case.id}: needle at token {case.needle_offset} with "
            f"{case.needle_tokens} tokens does not fit a {case.length}-token haystack",
            pytrace=False,
        )
    if not (math.isfinite(case.cos_qh) and math.isfinite(case.control_score)):
        pytest.fail(f"invalid data for {case.id}: non-finite score", pytrace=False)
    if case.truncated:
        pytest.xfail(
            f"truncated: the needle starts at token {case.needle_offset}, past the "
            f"{results.model.max_tokens} tokens {niah_case.model} reads"
        )
    if not case.found:
        message = (
            f"missed: cos(q, haystack) {case.cos_qh:.4f} <= control {case.control_score:.4f} "
            f"(needle alone {case.cos_qn:.4f}, normalized {case.normalized:.3f}, "
            f"needle at token {case.needle_offset} of {case.length})"
        )
        if niah_session.strict:
            pytest.fail(message, pytrace=False)
        pytest.xfail(message)


def test_gate(
    niah_gate: GateParam, niah_session: NiahSession, record_property: RecordProperty
) -> None:
    """A length's AUC and comparative ratio meet --niah-min-auc and --niah-min-ratio."""
    results = results_of(niah_session, niah_gate.model)
    row = results.row(niah_gate.arm, niah_gate.length, niah_gate.scoring)
    for key in ("normalized", "comparative_ratio", "auc", "separation", "effect_size"):
        record_property(key, getattr(row, key))
    for key in ("found", "missed", "truncated", "invalid"):
        record_property(key, getattr(row, key))
    if row.invalid:
        pytest.fail(f"{row.invalid} cases at length {row.length} have invalid data", pytrace=False)
    for name in ("auc", "comparative_ratio"):
        value = getattr(row, name)
        assert math.isnan(value) or 0.0 <= value <= 1.0, f"{name} {value} is outside 0..1"
    failures = niah_session.gate_failures(row, results)
    failures += niah_session.regressions(niah_gate.model, row)
    if failures:
        pytest.fail(
            f"model {niah_gate.model}, arm {niah_gate.arm}, scoring {niah_gate.scoring}, "
            f"length {niah_gate.length}: "
            + "; ".join(failures)
            + ". The per-length table is in the terminal summary; write every number with "
            "--niah-json=FILE.",
            pytrace=False,
        )
