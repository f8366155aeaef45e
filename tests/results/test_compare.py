"""Comparing a run with a baseline (pytest_niah.results.compare): pairing like with like."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from niah_synthetic import (
    GROUPS,
    changed,
    results,
    scored,
    shifted,
    with_cases,
)

from pytest_niah.config.gate_expressions import Allowance, parse_allowances
from pytest_niah.config.niah import NiahConfig
from pytest_niah.errors import CompareError
from pytest_niah.experiment import run_experiment
from pytest_niah.measure.metric_tables import negatives_by_key, question_scores
from pytest_niah.measure.metrics import METRICS, point_metrics
from pytest_niah.measure.records import NegativeScores
from pytest_niah.report.comparison_table import comparison_table
from pytest_niah.results.compare import Comparison, compare_results
from pytest_niah.results.niah_results import NiahResults

AUC_002 = Allowance("auc", 0.02, relative=False)


def compare(current, baseline, **kwargs):
    return compare_results(current, baseline, n_resamples=200, seed=0, **kwargs)


@pytest.fixture(scope="module")
def base() -> NiahResults:
    return results()


# -- pairing ------------------------------------------------------------------------------------


def test_a_run_against_itself_changes_nothing_and_counts_cells_per_length(base):
    comparison = compare(base, base)
    assert (comparison.unpaired_current, comparison.unpaired_baseline) == (0, 0)
    assert comparison.paired == {("literal", "whole", 1024): 30, ("literal", "whole", 4096): 30}
    assert len(comparison.deltas) == 2 * len(METRICS)
    for d in comparison.deltas:
        assert (d.delta, d.low, d.high, d.se) == (0.0, 0.0, 0.0, 0.0)
        assert (d.cells, d.groups, d.unresolved) == (30, len(GROUPS), "")
        assert d.current == getattr(base.row(d.arm, d.length), d.metric)
        assert d.verdict(AUC_002).state == "within allowance"


def test_paired_cells_are_counted_per_length(base):
    fewer = with_cases(base, [c for c in base.cases if c.length == 1024 or c.position < 2])
    comparison = compare(fewer, base)
    assert comparison.paired == {("literal", "whole", 1024): 30, ("literal", "whole", 4096): 12}
    assert {d.length: d.cells for d in comparison.deltas} == {1024: 30, 4096: 12}
    assert (comparison.unpaired_current, comparison.unpaired_baseline) == (0, 18)
    # Both runs' metrics are computed on exactly the paired cells.
    assert all(d.delta == 0.0 for d in comparison.deltas)


def test_a_subset_of_groups_scores_as_in_the_full_run():
    """Found: metrics over the cells two runs share differed from the same cells in the full
    run. A run of some groups lists each question's negatives against every control of the
    set, so its cells score exactly as in the run of all groups."""
    full = results()
    part_cases, part_negatives = scored(groups=GROUPS[:3])
    part = results(part_cases, part_negatives)
    assert set(part_cases) <= set(full.cases)
    comparison = compare(part, full)
    assert comparison.unpaired_current == 0
    assert comparison.unpaired_baseline == len(full.cases) - len(part_cases)
    index = negatives_by_key(full.negatives)
    for d in comparison.deltas:
        assert d.delta == 0.0, d
        in_full = [c for c in full.cases if c.length == d.length and c.group_id in GROUPS[:3]]
        expected = point_metrics(question_scores(in_full, index))[d.metric]
        assert d.current == d.baseline == pytest.approx(expected, nan_ok=True)


def test_negatives_are_restricted_to_the_controls_both_runs_list(base):
    """A baseline scored against one more control (a group the current set lacks) compares on
    the controls both list: here, the same cells and scores give no change at all."""
    extra = "zebra-99-control-L{}-c0"
    wider = tuple(
        NegativeScores(
            n.arm,
            n.scoring,
            n.group_id,
            n.length,
            (*n.control_ids, extra.format(n.length)),
            (*n.scores, 0.99),  # outscores every needle haystack
        )
        for n in base.negatives
    )
    baseline = dataclasses.replace(base, negatives=wider)
    comparison = compare(base, baseline)
    for d in comparison.deltas:
        assert d.delta == 0.0 and d.baseline == d.current, d
    # Its own table, with the extra control, is lower: the restriction is what made them equal.
    assert results(base.cases, wider).row("literal", 1024).auc < base.row("literal", 1024).auc
    # Each side keeps only the ids both list, in its own order.
    shuffled = tuple(
        dataclasses.replace(n, control_ids=n.control_ids[::-1], scores=n.scores[::-1])
        for n in wider
    )
    again = compare(base, dataclasses.replace(base, negatives=shuffled))
    assert all(d.delta == pytest.approx(0.0, abs=1e-12) for d in again.deltas)  # sums reorder


def test_only_identical_positions_pair_when_the_grids_differ(base):
    cases, negatives = scored(positions=3)
    three = results(cases, negatives, positions=3)
    comparison = compare(three, base, allow=("positions",))
    # Index p of a 3-position grid is another cell than p of a 5-position grid, even at the
    # same depth (p02 of 3 and p04 of 5 both end the filler, but hold other needle names).
    assert comparison.paired == {("literal", "whole", 1024): 6, ("literal", "whole", 4096): 6}
    assert comparison.unpaired_current == 2 * 6 * 2
    assert comparison.unpaired_baseline == 2 * 6 * 4


def drawn(run: NiahResults, seeds: tuple[int, ...], shift: dict[int, float]) -> NiahResults:
    """``run``'s cases once per draw of ``seeds`` (ids tagged), each draw's scores moved."""
    cases = [
        dataclasses.replace(c, id=f"{c.id}-s{s}", seed=s, cos_qh=c.cos_qh + shift.get(s, 0.0))
        for s in seeds
        for c in run.cases
    ]
    pooled = with_cases(run, cases)
    return dataclasses.replace(pooled, config=run.config.replace(seeds=seeds))


def test_draws_of_several_seeds_pair_seed_with_seed(base):
    pooled = drawn(base, (1, 2), {})
    itself = compare(pooled, pooled)
    assert itself.paired == {("literal", "whole", 1024): 60, ("literal", "whole", 4096): 60}
    # Draw 2 of the current run fell: only its own cells in the baseline show it.
    fell = drawn(base, (1, 2), {2: -0.3})
    comparison = compare(fell, pooled)
    auc = comparison.delta("literal", 1024, "auc")
    assert auc.delta < 0 and auc.cells == 60
    # Other draws are another haystack sample: refused by name, paired on shared seeds.
    other = drawn(base, (2, 3), {})
    with pytest.raises(CompareError, match=r"seed: \[2, 3\] here, \[1, 2\] in the baseline"):
        compare(other, pooled)
    shared = compare(other, pooled, allow=("seed",))
    assert shared.paired == {("literal", "whole", 1024): 30, ("literal", "whole", 4096): 30}
    assert (shared.unpaired_current, shared.unpaired_baseline) == (60, 60)


def drawn_with_controls(run: NiahResults, seeds: tuple[int, ...]) -> NiahResults:
    """:func:`drawn`, its negatives too: each draw's controls, ids tagged as a run tags them."""
    pooled = drawn(run, seeds, {})
    negatives = [
        dataclasses.replace(
            n,
            control_ids=tuple(f"{cid}-s{s}" for s in seeds for cid in n.control_ids),
            scores=tuple(score for _ in seeds for score in n.scores),
        )
        for n in run.negatives
    ]
    return dataclasses.replace(pooled, negatives=tuple(negatives))


def test_draw_n_of_a_pooled_run_pairs_with_a_single_seed_n_run(base):
    """``--niah-seed=1`` against ``--niah-seeds=1,2``: draw 1 is the same haystacks."""
    single = dataclasses.replace(base, config=base.config.replace(seed=1))
    pooled = drawn_with_controls(base, (1, 2))
    with pytest.raises(CompareError, match=r"seed: 1 here, \[1, 2\] in the baseline"):
        compare(single, pooled)
    comparison = compare(single, pooled, allow=("seed",))
    assert comparison.paired == {("literal", "whole", 1024): 30, ("literal", "whole", 4096): 30}
    assert (comparison.unpaired_current, comparison.unpaired_baseline) == (0, 60)  # draw 2
    auc = comparison.delta("literal", 1024, "auc")
    assert auc.cells == 30 and auc.delta == pytest.approx(0.0)  # draw 1's own negatives too
    backwards = compare(pooled, single, allow=("seed",))
    assert sum(backwards.paired.values()) == 60


def test_a_single_seed_outside_the_pooled_draws_says_why_no_cell_pairs(base):
    pooled = drawn_with_controls(base, (1, 2))
    with pytest.raises(CompareError) as caught:
        compare(base, pooled, allow=("seed",))
    assert (
        "no haystack draw in common: this run drew --niah-seed=42 (one draw), the baseline "
        "--niah-seeds=1,2; draw N of --niah-seeds pairs only with draw N" in str(caught.value)
    )
    assert "drew one of the same seeds" in caught.value.hint


def test_intervals_follow_the_seed(base):
    worse = with_cases(base, [dataclasses.replace(c, cos_qh=c.cos_qh - 0.2) for c in base.cases])
    first = compare(worse, base)
    assert first.to_dict() == compare(worse, base).to_dict()
    other = compare_results(worse, base, n_resamples=200, seed=1)
    assert other.delta("literal", 1024, "auc").delta == first.delta("literal", 1024, "auc").delta
    assert other.to_dict() != first.to_dict()


# -- output --------------------------------------------------------------------------------------


def test_to_dict_is_strict_json(base):
    comparison = compare(shifted(changed(base, "seed"), 4096, -0.1), base, allow=("seed",))
    data = json.loads(json.dumps(comparison.to_dict(), allow_nan=False))
    assert (data["unpaired_current"], data["unpaired_baseline"]) == (0, 0)
    assert data["paired"] == [
        {"arm": "literal", "scoring": "whole", "length": 1024, "cells": 30},
        {"arm": "literal", "scoring": "whole", "length": 4096, "cells": 30},
    ]
    assert data["allowed"] == [{"field": "seed", "current": 7, "baseline": 42}]
    assert len(data["deltas"]) == len(comparison.deltas)
    assert set(data["deltas"][0]) == {
        "arm", "scoring", "length", "metric", "baseline", "current", "delta", "low", "high",
        "se", "groups", "cells", "unresolved", "run_cells", "current_not_meaningful",
        "baseline_not_meaningful",
    }  # fmt: skip


def test_to_dict_writes_nan_as_null():
    cases, negatives = scored(cos_qn=0.05)
    run = results(cases, negatives)
    data = compare(run, run).to_dict()
    assert any(d["baseline"] is None for d in data["deltas"])
    json.dumps(data, allow_nan=False)


def test_comparison_table_has_a_row_per_delta(base):
    comparison = compare(base, base)
    lines = comparison_table(comparison, parse_allowances("auc:0.02"))
    assert len(lines) == 1 + len(comparison.deltas)
    assert sum("within allowance" in line for line in lines) == 2
    empty = Comparison(deltas=(), paired={}, unpaired_current=3, unpaired_baseline=0)
    assert len(comparison_table(empty)) == 1


# -- real runs (the lexical baseline) ---------------------------------------------------------

REAL_GROUPS = ("dietary", "location", "medical", "vehicle")  # 16 needle groups
N_REAL_GROUPS = 16


def real_config(shared_corpus_dir, **changes) -> NiahConfig:
    base = dict(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128, 512),
        positions=4,
        arms=("onehop", "literal"),
        bootstrap=0,
        groups=REAL_GROUPS,
    )
    return NiahConfig(**(base | changes))


@pytest.fixture(scope="module")
def run(shared_corpus_dir) -> NiahResults:
    return run_experiment(real_config(shared_corpus_dir))


@pytest.fixture(scope="module")
def self_comparison(run) -> Comparison:
    return compare(run, run)


def test_a_real_run_against_itself_matches_its_own_tables(run, self_comparison):
    assert (self_comparison.unpaired_current, self_comparison.unpaired_baseline) == (0, 0)
    assert len(self_comparison.deltas) == 2 * 2 * len(METRICS)
    for d in self_comparison.deltas:
        assert d.cells == N_REAL_GROUPS * 2 * 4
        row = run.row(d.arm, d.length, d.scoring)
        assert getattr(row, d.metric) == pytest.approx(d.current, nan_ok=True)
        if math.isnan(d.baseline):
            # The lexical model gives one-hop needles no cosine, so no normalized similarity.
            assert (d.arm, d.metric) == ("onehop", "normalized")
            continue
        assert (d.delta, d.low, d.high) == (0.0, 0.0, 0.0), d
    allowances = parse_allowances("norm:0,ratio:0%,auc:0,auc-study:0,sep:0%,d:0")
    assert {v.outcome("fail") for _, v in self_comparison.verdicts(allowances)} == {"pass"}


def test_a_real_run_against_its_saved_copy_changes_nothing(run, tmp_path):
    loaded = NiahResults.load(run.save(tmp_path / "run.json"))
    comparison = compare_results(loaded, run, n_resamples=50, seed=0)
    assert all(d.delta == 0 or math.isnan(d.baseline) for d in comparison.deltas)


def test_a_real_run_of_fewer_groups_lists_the_same_negatives(shared_corpus_dir, run):
    part = run_experiment(real_config(shared_corpus_dir, groups=("dietary-01", "medical-02")))
    full = negatives_by_key(run.negatives)
    for n in part.negatives:
        assert n.control_ids == full[n.arm, n.scoring, n.group_id, n.length].control_ids
    comparison = compare(part, run)
    assert comparison.unpaired_current == 0
    assert set(comparison.paired.values()) == {2 * 2 * 4}
