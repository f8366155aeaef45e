"""--niah-orders: the needle's default and inverted word orders."""

from __future__ import annotations

import pytest


def test_inverted_only(niah):
    result = niah.run("--collect-only", "-q", "--niah-orders=inverted")
    cases = [i for i in niah.ids(result) if not i.startswith("gate-")]
    assert len(cases) == niah.n_cases // 2
    assert all("-inverted-" in i for i in cases)


def test_both_orders_by_default(niah):
    cases = [i for i in niah.ids(niah.run("--collect-only", "-q")) if not i.startswith("gate-")]
    assert sum("-default-" in i for i in cases) == sum("-inverted-" in i for i in cases) == 24


def test_default_order_only_in_results(niah):
    result = niah.run("--niah-orders=default", "--niah-arms=literal", "--niah-json=r.json")
    result.assert_outcomes(passed=niah.n_cases // 4 + 2)
    results = niah.load("r.json")
    assert results.config.orders == ("default",)
    assert {c.order for c in results.cases} == {"default"}


def test_unknown_order_is_a_usage_error(niah):
    result = niah.run("--niah-orders=sideways")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--niah-orders*'sideways'*choose from default, inverted*"])
