"""--niah-seeds: several haystack draws pooled in one run, paired seed with seed in a comparison.

The lexical baseline on the literal arm of the tiny grid (2 groups x 2 orders x 2 lengths x 3
positions = 24 cases per draw): every case runs once per seed, its id ends ``-sN``, the metrics
pool the draws, and each draw is the run ``--niah-seed=N`` would have drawn.
"""

from __future__ import annotations

import pytest

from pytest_niah.api import compare
from pytest_niah.errors import CompareError

LITERAL = ("--niah-arms=literal",)
PER_DRAW = 2 * 2 * 2 * 3  # groups x orders x lengths x positions


def test_every_case_runs_once_per_seed_with_the_seed_in_its_id(niah):
    result = niah.run(*LITERAL, "--niah-seeds=5,3", "--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    cases = [i for i in niah.ids(result) if not i.startswith("gate-")]
    assert len(cases) == 2 * PER_DRAW
    # Seeds are sorted (5,3 is the run 3,5 is); the draw follows the length in test order.
    assert cases[:4] == [
        "dietary-01-literal-default-L128-d0-s3",
        "dietary-01-literal-default-L128-d50-s3",
        "dietary-01-literal-default-L128-d100-s3",
        "dietary-01-literal-inverted-L128-d0-s3",
    ]
    assert cases[6] == "dietary-01-literal-default-L128-d0-s5"
    assert [i for i in niah.ids(result) if i.startswith("gate-")] == [
        "gate-literal-L128",
        "gate-literal-L256",
    ]


def test_each_draw_is_the_single_seed_run_of_its_seed_and_the_tables_pool_them(niah):
    niah.run(*LITERAL, "--niah-seeds=3,5", "--niah-json=pooled.json").assert_outcomes(
        passed=2 * PER_DRAW + 2
    )
    niah.run(*LITERAL, "--niah-seed=5", "--niah-json=five.json").assert_outcomes(
        passed=PER_DRAW + 2
    )
    pooled, five = niah.load("pooled.json"), niah.load("five.json")
    assert pooled.config.seeds == (3, 5)
    assert {c.seed for c in pooled.cases} == {3, 5}
    assert {c.seed for c in five.cases} == {None}  # a single draw tags nothing
    # Results order: within a group and length, draw by draw, then order and position.
    assert [c.seed for c in pooled.cases[:12]] == [3] * 6 + [5] * 6
    drawn = {c.id.removesuffix("-s5"): c for c in pooled.cases if c.seed == 5}
    assert set(drawn) == {c.id for c in five.cases}
    # The same haystacks (TF-IDF's weights come from every text a run embeds, so scores
    # differ; tests/haystacks/test_builder.py compares the texts).
    for case in five.cases:
        mine = drawn[case.id]
        assert (mine.name, mine.needle_offset, mine.needle_tokens) == (
            case.name,
            case.needle_offset,
            case.needle_tokens,
        )
        assert mine.control_id == case.control_id + "-s5"
    # The other draw is other haystacks: other names and offsets.
    three = [c for c in pooled.cases if c.seed == 3]
    other = [drawn[c.id.removesuffix("-s3")] for c in three]
    assert [(c.name, c.needle_offset) for c in three] != [(c.name, c.needle_offset) for c in other]
    # Pooled: twice the cases, the same questions; a question's negatives are the controls
    # of every draw; the bootstrap resamples needle groups, not group x seed.
    for row in (r for r in pooled.tables if r.by == "length"):
        single = next(r for r in five.tables if (r.by, r.length) == ("length", row.length))
        assert (row.n_cases, row.n_questions) == (2 * single.n_cases, single.n_questions)
    alone = {len(n.control_ids) for n in five.negatives}  # the needle set's every group
    assert {len(n.control_ids) for n in pooled.negatives} == {2 * n for n in alone}
    assert {i.groups for i in pooled.intervals} == {2}


def test_the_title_line_names_the_pooled_seeds(niah):
    result = niah.run(*LITERAL, "--niah-seeds=3,5")
    titles = [
        line
        for line in result.outlines
        if line.startswith(niah.label) and ", arm literal, scoring whole: " in line
    ]
    assert titles and all(line.endswith(", seeds 3, 5 pooled") for line in titles), titles


def test_a_comparison_pairs_seed_with_seed(niah):
    niah.run(*LITERAL, "--niah-seeds=3,5", "--niah-json=a.json").assert_outcomes(
        passed=2 * PER_DRAW + 2
    )
    niah.run(*LITERAL, "--niah-seeds=5,7", "--niah-json=b.json").assert_outcomes(
        passed=2 * PER_DRAW + 2
    )
    a, b = niah.load("a.json"), niah.load("b.json")
    itself = compare(a, a, n_resamples=0)
    assert sum(itself.paired.values()) == len(a.cases) == 2 * PER_DRAW
    assert itself.unpaired_current == itself.unpaired_baseline == 0
    # Other draws measured other haystacks: refused, naming both lists, unless allowed.
    with pytest.raises(CompareError, match=r"seed: \[3, 5\] here, \[5, 7\] in the baseline"):
        compare(a, b, n_resamples=0)
    shared = compare(a, b, n_resamples=0, allow=["seed"])
    assert sum(shared.paired.values()) == PER_DRAW  # seed 5's cells, each with its own
    assert shared.unpaired_current == shared.unpaired_baseline == PER_DRAW
    fives = [d for d in shared.deltas if d.metric == "auc"]
    assert fives and all(d.cells == PER_DRAW // 2 for d in fives)  # per length


def test_a_saved_pooled_run_is_a_baseline_through_the_plugin(niah):
    niah.run(*LITERAL, "--niah-seeds=3,5", "--niah-save=base").assert_outcomes(
        passed=2 * PER_DRAW + 2
    )
    result = niah.run(
        *LITERAL, "--niah-seeds=3,5", "--niah-compare=base", "--niah-compare-fail=auc:0"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines([f"{niah.label} versus *"])
    refused = niah.run(*LITERAL, "--niah-seeds=3", "--niah-compare=base")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stdout.fnmatch_lines(["*seed: [[]3[]] here, [[]3, 5[]] in the baseline*"])


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("1,x", "*--niah-seeds*'x' is not a whole number*"),
        ("2,-1", "*--niah-seeds*-1 is too small*at least 0*"),
        (",".join(map(str, range(101))), "*--niah-seeds*101 seeds are too many (the most is 100)*"),
    ],
)
def test_bad_seeds_are_a_usage_error_before_any_work(niah, value, problem):
    result = niah.run(*LITERAL, f"--niah-seeds={value}", "--niah-json=r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([problem])
    assert not (niah.pytester.path / "r.json").exists()
