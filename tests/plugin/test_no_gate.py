"""No silent pass: a run that gates nothing says so, with the thresholds it would support."""

from __future__ import annotations

import re

LINE = re.compile(
    r"pytest-niah: nothing was gated \(no threshold, no baseline allowance\): this run "
    r"checked nothing\. Its own 95% intervals support (--niah-min-auc=\S+) \(per length"
)


def test_a_run_without_gates_ends_with_one_line_and_the_flag_that_would_gate_it(niah):
    result = niah.run("-q")
    assert result.ret == 0
    found = [m for line in result.outlines if (m := LINE.match(line))]
    assert len(found) == 1, result.stdout.str()
    flag = found[0].group(1)
    assert re.fullmatch(r"--niah-min-auc=128=0\.\d\d,256=0\.\d\d", flag)
    # The suggested thresholds are what these results support: the same grid passes them.
    gated = niah.run(flag, "-q")
    gated.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    assert "nothing was gated" not in gated.stdout.str()


def test_a_gated_run_has_no_such_line(niah):
    result = niah.run("--niah-min-auc=0.1")
    assert "nothing was gated" not in result.stdout.str()
