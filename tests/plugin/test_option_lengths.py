"""--niah-lengths: which haystack lengths run, in tokens of the model's tokenizer."""

from __future__ import annotations

import pytest


def test_lengths_become_ids_sorted_and_unique(niah):
    result = niah.run("--collect-only", "-q", "--niah-lengths=512,128,512")
    ids = niah.ids(result)
    assert {i.rsplit("-", 2)[1] for i in ids if not i.startswith("gate-")} == {"L128", "L512"}
    assert [i for i in ids if i.startswith("gate-literal")] == [
        "gate-literal-L128",
        "gate-literal-L512",
    ]
    assert len(ids) == 2 * 2 * 2 * 2 * 3 + 2 * 2


def test_one_length(niah):
    result = niah.run("--collect-only", "-q", "--niah-lengths=256")
    ids = niah.ids(result)
    assert ids
    assert all("-L256" in i for i in ids)
    assert len(ids) == niah.n_cases // 2 + niah.n_gates // 2


def test_haystacks_have_the_asked_lengths(niah):
    result = niah.run("--niah-lengths=128,384", "--niah-json=r.json")
    result.assert_outcomes(passed=24 + 4, xfailed=24)  # literal cases + gates pass
    results = niah.load("r.json")
    assert results.config.lengths == (128, 384)
    assert {c.length for c in results.cases} == {128, 384}
    for case in results.cases:
        assert 0 <= case.needle_offset <= case.length - case.needle_tokens, case.id
    assert sorted(niah.tables(result)["literal"]["rows"]) == [128, 384]


@pytest.mark.parametrize("value", ["8", "2000000"])
def test_out_of_range_length_is_a_usage_error(niah, value):
    result = niah.run("--collect-only", f"--niah-lengths={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--niah-lengths*out of range*16..1,000,000 tokens*"])


def test_a_doubling_range_extends_the_grid_past_8k(niah):
    result = niah.run("--collect-only", "-q", "--niah-lengths=128..32768")
    lengths = {i.rsplit("-", 2)[1] for i in niah.ids(result) if not i.startswith("gate-")}
    assert lengths == {f"L{128 * 2**k}" for k in range(9)}  # L128 ... L32768
    assert "gate-literal-L32768" in niah.ids(result)


def test_a_range_the_doubling_never_ends_on_is_a_usage_error(niah):
    result = niah.run("--collect-only", "--niah-lengths=128..30000")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--niah-lengths*doubling from 128 never reaches 30,000*'128..16384' or '128..32768'*"]
    )
