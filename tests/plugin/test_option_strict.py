"""--niah-strict: a missed needle fails its test instead of xfailing."""

from __future__ import annotations

import pytest


def test_missed_needles_xfail_without_strict(niah):
    result = niah.run("-rx")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    result.stdout.fnmatch_lines(
        [
            "XFAIL *test_needle?dietary-01-onehop-default-L128-d0? - missed: cos(q, haystack) "
            "0.0000 <= control 0.0000 (needle alone *, needle at token 0 of 128)"
        ]
    )


def test_missed_needles_fail_with_strict(niah):
    result = niah.run("--niah-strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, failed=niah.n_cases // 2)
    failed = [r.nodeid for r in result.reprec.getfailures()]
    assert all("-onehop-" in nodeid for nodeid in failed)
    result.stdout.fnmatch_lines(["*missed: cos(q, haystack) 0.0000 <= control 0.0000*"])


def test_strict_does_not_touch_found_needles(niah):
    result = niah.run("--niah-strict", "--niah-arms=literal")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates // 2)
