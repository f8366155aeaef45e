"""--niah-seed: every random choice comes from it; the same seed gives the same bytes."""

from __future__ import annotations

import pytest

SMALL = ("--niah-arms=literal", "--niah-lengths=256")


def test_same_seed_same_bytes(niah):
    niah.run(*SMALL, "--niah-seed=7", "--niah-json=a.json").assert_outcomes(passed=13)
    niah.run(*SMALL, "--niah-seed=7", "--niah-json=b.json").assert_outcomes(passed=13)
    first = (niah.pytester.path / "a.json").read_bytes()
    assert first == (niah.pytester.path / "b.json").read_bytes()
    results = niah.load("a.json")
    assert results.seed == results.config.seed == 7


def test_another_seed_other_haystacks(niah):
    niah.run(*SMALL, "--niah-seed=7", "--niah-json=a.json").assert_outcomes(passed=13)
    niah.run(*SMALL, "--niah-seed=8", "--niah-json=b.json").assert_outcomes(passed=13)
    a, b = niah.load("a.json"), niah.load("b.json")
    assert [c.id for c in a.cases] == [c.id for c in b.cases]
    assert [c.name for c in a.cases] != [c.name for c in b.cases]  # other character names
    assert [c.cos_qh for c in a.cases] != [c.cos_qh for c in b.cases]  # other snippets


def test_default_seed_is_42(niah):
    niah.run(*SMALL, "--niah-json=r.json").assert_outcomes(passed=13)
    assert niah.load("r.json").seed == 42


def test_seed_zero_is_allowed_and_negative_is_not(niah):
    assert niah.run("--collect-only", "--niah-seed=0").ret == pytest.ExitCode.OK
    result = niah.run("--collect-only", "--niah-seed=-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--niah-seed*-1 is too small*at least 0*"])
