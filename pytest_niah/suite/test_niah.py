"""The tests pytest-niah adds to a run with ``--niah-model``.

Each test reads the one results object of its model; the experiment itself runs once,
before the first test, in the session store.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import NoReturn

import pytest

from pytest_niah.errors import NiahError, NiahGateWarning
from pytest_niah.haystacks.grid import CaseParam, GateParam
from pytest_niah.plugin.session import NiahSession

pytestmark = pytest.mark.niah
RecordProperty = Callable[[str, object], None]
_PER_TEST_FAMILIES = ("xunit1", "legacy")


def _writes_xunit2(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("xmlpath", None)) and (
        request.config.getini("junit_family") not in _PER_TEST_FAMILIES
    )


def _xfail(message: str) -> NoReturn:
    """``pytest.xfail(message)`` without a traceback: the message says it all.

    pytest renders every imperative xfail's traceback, parsing this file's source each time;
    on the default grid's 2,251 misses that was two thirds of a warm run.
    """
    raise pytest.xfail.Exception(message, pytrace=False)


@pytest.fixture
def niah_case_property(request: pytest.FixtureRequest) -> RecordProperty:
    """A case's numbers as test properties (``--junitxml`` under xunit1 or legacy).

    The xunit2 schema has no test properties (pytest's ``record_property`` warns there for
    every test): under xunit2 a case records nothing; its numbers are in the results file.
    """
    if _writes_xunit2(request):
        return lambda name, value: None
    return lambda name, value: request.node.user_properties.append((name, value))


@pytest.fixture
def niah_gate_property(request: pytest.FixtureRequest) -> RecordProperty:
    """A gate's numbers and verdicts as properties of its test.

    Under xunit2 they are suite properties named ``<gate id> <name>`` instead (what the
    xunit2 schema allows).
    """
    if _writes_xunit2(request):
        suite: RecordProperty = request.getfixturevalue("record_testsuite_property")
        gate_id = request.node.callspec.id
        return lambda name, value: suite(f"{gate_id} {name}", value)
    return lambda name, value: request.node.user_properties.append((name, value))


def test_needle(
    niah_case: CaseParam, niah_session: NiahSession, niah_case_property: RecordProperty
) -> None:
    """A needle haystack outscores its no-needle control (a miss xfails unless --niah-strict)."""
    results = niah_session.results_or_stop(niah_case.model)
    case = results.case(niah_case.case_id)
    for key in ("cos_qh", "cos_qn", "normalized", "control_score", "needle_offset", "truncated"):
        niah_case_property(key, getattr(case, key))
    if case.problem:
        pytest.fail(f"invalid data for {case.id}: {case.problem}", pytrace=False)
    if case.duplicate_of is not None:
        pytest.skip(f"same haystack as {case.duplicate_of}: the filler has too few gaps")
    if not 0 <= case.needle_offset <= case.length - case.needle_tokens or case.needle_tokens <= 0:
        pytest.fail(
            f"invalid data for {case.id}: needle at token {case.needle_offset} with "
            f"{case.needle_tokens} tokens does not fit a {case.length}-token haystack",
            pytrace=False,
        )
    if not (math.isfinite(case.cos_qh) and math.isfinite(case.control_score)):
        pytest.fail(f"invalid data for {case.id}: non-finite score", pytrace=False)
    if case.truncated or case.unread:
        _xfail(
            f"truncated: the needle starts at token {case.needle_offset}, past the "
            f"{results.model.max_tokens} tokens {niah_case.model} reads"
        )
    if not case.found:
        message = (
            f"missed: cos(q, haystack) {case.cos_qh:.4f} <= control {case.control_score:.4f} "
            f"(needle alone {case.cos_qn:.4f}, normalized {case.normalized:.3f}, "
            f"needle at token {case.needle_offset} of {case.length})"
        )
        if niah_session.settings.strict:
            pytest.fail(message, pytrace=False)
        _xfail(message)


def test_gate(
    niah_gate: GateParam, niah_session: NiahSession, niah_gate_property: RecordProperty
) -> None:
    """A length's metrics meet --niah-min-auc/--niah-min-ratio and --niah-compare-fail."""
    results = niah_session.results_or_stop(niah_gate.model)
    row = results.row(niah_gate.arm, niah_gate.length, niah_gate.scoring)
    for key in ("normalized", "comparative_ratio", "auc", "separation", "effect_size"):
        niah_gate_property(key, getattr(row, key))
    for key in ("found", "missed", "truncated", "unread", "invalid"):
        niah_gate_property(key, getattr(row, key))
    if row.invalid:
        pytest.fail(f"{row.invalid} cases at length {row.length} have invalid data", pytrace=False)
    for name in ("auc", "comparative_ratio"):
        value = getattr(row, name)
        assert math.isnan(value) or 0.0 <= value <= 1.0, f"{name} {value} is outside 0..1"
    try:
        gates = niah_session.gates(niah_gate.model, row, results)
    except NiahError as exc:
        pytest.fail(str(exc), pytrace=False)
    where = (
        f"model {niah_gate.model}, arm {niah_gate.arm}, scoring {niah_gate.scoring}, "
        f"length {niah_gate.length}"
    )
    for gate in gates:
        niah_gate_property(f"{gate.what} {gate.verdict.metric}", gate.verdict.state)
    failed = [g.message() for g in gates if g.outcome == "fail"]
    for gate in gates:
        if gate.outcome == "warn":
            warnings.warn(NiahGateWarning(f"{where}: {gate.message()}"), stacklevel=1)
    if failed:
        pytest.fail(f"{where}:\n  " + "\n  ".join(failed), pytrace=False)
