"""--niah-groups: keep some needle groups, by id or by category."""

from __future__ import annotations

import pytest

from pytest_niah.inputs.needles import builtin_needle_set


def _groups(niah, result):
    return {i.rsplit("-", 4)[0] for i in niah.ids(result) if not i.startswith("gate-")}


def test_by_id(niah):
    result = niah.run("--collect-only", "-q", "--niah-groups=location-02")
    assert _groups(niah, result) == {"location-02"}


def test_by_category(niah):
    location = {g.id for g in builtin_needle_set().groups if g.category == "location"}
    assert len(location) >= 2
    result = niah.run("--collect-only", "-q", "--niah-groups=location")
    assert _groups(niah, result) == location


def test_ids_and_categories_mix_case_insensitively(niah):
    result = niah.run("--collect-only", "-q", "--niah-groups=MEDICAL, dietary-02")
    medical = {g.id for g in builtin_needle_set().groups if g.category == "medical"}
    assert _groups(niah, result) == medical | {"dietary-02"}


def test_empty_keeps_every_group(niah):
    result = niah.run("--collect-only", "-q", omit=["groups"])
    assert _groups(niah, result) == {g.id for g in builtin_needle_set().groups}


def test_selected_groups_are_the_ones_run(niah):
    result = niah.run("--niah-groups=medical-01", "--niah-arms=literal", "--niah-json=r.json")
    result.assert_outcomes(passed=2 * 2 * 3 + 2)
    results = niah.load("r.json")
    assert {c.group_id for c in results.cases} == {"medical-01"}
    assert results.needle_set["groups"] == 1


def test_unknown_group_is_a_usage_error_listing_the_choices(niah):
    result = niah.run("--collect-only", "--niah-groups=dietary-01,nosuch-07")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "pytest-niah" in err
    assert "'nosuch-07'" in err
    assert "dietary, hobby" in err  # the valid categories
    assert "location-04" in err  # and ids
    assert "dietary-01-" not in result.stdout.str()  # nothing collected
