"""Comparing a run with a baseline (pytest_niah.results.compare): like with like, or refuse."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from niah_synthetic import (
    CORPUS_FINGERPRINT,
    GROUPS,
    NEEDLES_FINGERPRINT,
    make_case,
    model,
    results,
    scored,
    with_cases,
)

from pytest_niah.config.gate_expressions import Allowance, parse_allowances
from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.vocabulary import COMPARED
from pytest_niah.errors import CompareError
from pytest_niah.experiment import run_experiment
from pytest_niah.measure.metric_tables import negatives_by_key, question_scores
from pytest_niah.measure.metrics import METRICS, point_metrics
from pytest_niah.measure.records import NegativeScores
from pytest_niah.report.terminal_tables import comparison_table
from pytest_niah.results.compare import Comparison, Delta, compare_results
from pytest_niah.results.compatibility import FIELDS, check_comparable, differences
from pytest_niah.results.niah_results import NiahResults

AUC_002 = Allowance("auc", 0.02, relative=False)


def compare(current, baseline, **kwargs):
    return compare_results(current, baseline, n_resamples=200, seed=0, **kwargs)


# -- compatibility (found: another seed paired silently; corpus, needles never checked) --------


def changed(run: NiahResults, field: str) -> NiahResults:
    """``run`` as if measured with another value of one compared field."""
    config = run.config
    if field in ("seed", "lengths", "positions", "controls", "orders", "arms", "scoring"):
        other = {
            "seed": 7,
            "lengths": (1024,),
            "positions": 3,
            "controls": 2,
            "orders": ("default", "inverted"),
            "arms": ("literal", "onehop"),
            "scoring": ("whole", "chunk-max"),
        }[field]
        return dataclasses.replace(run, config=config.replace(**{field.replace("-", "_"): other}))
    if field == "chunk-tokens":
        return dataclasses.replace(run, config=config.replace(chunk_tokens=64))
    if field == "corpus":
        return dataclasses.replace(run, corpus={**run.corpus, "fingerprint": "d1" * 32})
    if field == "needles":
        return dataclasses.replace(run, needle_set={**run.needle_set, "fingerprint": "5f" * 32})
    if field == "expansions":
        return dataclasses.replace(run, needle_set={**run.needle_set, "expansions": "e" * 64})
    if field == "tokenizer":
        return dataclasses.replace(run, model=model(tokenizer="bert-wordpiece"))
    raise AssertionError(field)


@pytest.fixture(scope="module")
def base() -> NiahResults:
    return results()


@pytest.fixture(scope="module")
def chunked() -> NiahResults:
    """A run with a chunk scoring: its effective chunk size is compared."""
    return results(scoring=("whole", "chunk-max"))


def test_every_field_the_option_names_is_compared():
    assert tuple(FIELDS) == COMPARED


@pytest.mark.parametrize("field", COMPARED)
def test_a_baseline_that_measured_something_else_is_refused_naming_both_values(
    base, chunked, field
):
    baseline = chunked if field == "chunk-tokens" else base
    current = changed(baseline, field)
    [difference] = differences(current, baseline)
    assert difference.field == field
    with pytest.raises(CompareError) as info:
        compare(current, baseline, source="runs/base.json")
    message = str(info.value)
    assert f"{field}: " in message
    assert f"--niah-compare-allow={field}" in message
    assert "(runs/base.json)" in message
    mine, theirs = FIELDS[field](current), FIELDS[field](baseline)
    for value in (mine, theirs):
        text = str(value)
        assert (text[:12] if isinstance(value, str) and len(text) == 64 else text) in message
    # Allowed by name, the comparison goes on and records what it accepted.
    comparison = compare(current, baseline, allow=(field,))
    assert [d.field for d in comparison.allowed] == [field]
    assert comparison.deltas


def test_another_seed_names_both_seeds(base):
    with pytest.raises(CompareError, match=r"seed: 7 here, 42 in the baseline"):
        compare(changed(base, "seed"), base)


def test_another_corpus_or_needle_set_names_both_fingerprints(base):
    with pytest.raises(CompareError) as info:
        compare(changed(changed(base, "corpus"), "needles"), base)
    message = str(info.value)
    assert f"corpus: {'d1' * 6} here, {CORPUS_FINGERPRINT[:12]} in the baseline" in message
    assert f"needles: {'5f' * 6} here, {NEEDLES_FINGERPRINT[:12]} in the baseline" in message
    assert "--niah-compare-allow=corpus,needles" in message


def test_another_tokenizer_names_both(base):
    with pytest.raises(CompareError, match="tokenizer: bert-wordpiece here, word-regex-v1 in"):
        compare(changed(base, "tokenizer"), base)


def test_allowing_one_difference_does_not_allow_another(base):
    current = changed(changed(base, "seed"), "tokenizer")
    with pytest.raises(CompareError) as info:
        check_comparable(current, base, allow=("seed",))
    assert "tokenizer" in str(info.value) and "seed:" not in str(info.value)
    assert [d.field for d in check_comparable(current, base, allow=("seed", "tokenizer"))] == [
        "seed",
        "tokenizer",
    ]


def test_another_model_with_the_same_grid_is_comparable(base):
    other = dataclasses.replace(base, model=model("model-b", fingerprint="another"))
    assert differences(other, base) == []


def test_the_chunk_size_counts_only_with_a_chunk_scoring(base, chunked):
    # Whole-haystack scoring reads no chunk size: a different --niah-chunk-tokens is no change.
    assert (
        differences(dataclasses.replace(base, config=base.config.replace(chunk_tokens=64)), base)
        == []
    )
    # With chunks, an unset chunk size is the model's window.
    windowed = dataclasses.replace(chunked, model=model(max_tokens=64))
    explicit = dataclasses.replace(windowed, config=windowed.config.replace(chunk_tokens=64))
    assert differences(explicit, windowed) == []


def test_a_comparison_pairing_no_cell_is_refused_never_passed(base):
    cases, negatives = scored(groups=("pet-05",))
    other = results(cases, negatives)
    only_mine = with_cases(base, [c for c in base.cases if c.group_id != "pet-05"])
    with pytest.raises(CompareError, match="shares no cell"):
        compare(other, only_mine)


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


# -- verdicts on the deltas ------------------------------------------------------------------


def shifted(run: NiahResults, length: int, by: float) -> NiahResults:
    return with_cases(
        run,
        [
            make_case(
                c.group_id,
                c.cos_qh + by,
                control=c.control_score,
                length=c.length,
                position=c.position,
            )
            if c.length == length
            else c
            for c in run.cases
        ],
    )


def test_a_clear_drop_regresses_that_length_only(base):
    comparison = compare(shifted(base, 4096, -0.4), base)
    verdicts = {d.length: v for d, v in comparison.verdicts([AUC_002])}
    assert verdicts[4096].state == "regressed" and verdicts[4096].outcome() == "fail"
    assert verdicts[1024].state == "within allowance"
    d = comparison.delta("literal", 4096, "auc")
    assert d.delta == pytest.approx(d.current - d.baseline)
    assert d.high < 0
    assert [v.metric for _, v in comparison.verdicts([AUC_002], ("literal", "whole", 1024))] == [
        "auc"
    ]


def test_verdicts_pair_each_delta_with_each_allowance_of_its_metric(base):
    comparison = compare(base, base)
    allowances = parse_allowances("auc:0.02,ratio:5%,auc:1%")
    pairs = comparison.verdicts(allowances)
    assert [(d.length, d.metric) for d, _ in pairs] == [
        (1024, "comparative_ratio"),
        (1024, "auc"),
        (1024, "auc"),
        (4096, "comparative_ratio"),
        (4096, "auc"),
        (4096, "auc"),
    ]


def test_a_relative_allowance_scales_with_the_baseline():
    d = Delta("literal", "whole", 1024, "auc", 0.8, 0.77, -0.03, -0.04, -0.02, 0.005, 16, 64)
    assert d.verdict(Allowance("auc", 5, relative=True)).state == "within allowance"  # 0.04
    assert d.verdict(Allowance("auc", 2, relative=True)).state == "regressed"  # 0.016
    assert d.verdict(Allowance("auc", 2, relative=True)).limit == pytest.approx(0.016)


def test_a_metric_that_becomes_undefined_regresses(base):
    broken = with_cases(
        base,
        [
            dataclasses.replace(c, problem="non-finite") if c.length == 4096 else c
            for c in base.cases
        ],
    )
    comparison = compare(broken, base)
    d = comparison.delta("literal", 4096, "auc")
    assert math.isnan(d.current) and not math.isnan(d.baseline)
    verdict = d.verdict(AUC_002)
    assert verdict.state == "regressed" and "undefined in this run" in verdict.reason


def test_a_metric_undefined_in_both_runs_has_nothing_to_fall_from():
    # Every needle alone scores below the floor: no normalized similarity in either run.
    cases, negatives = scored(cos_qn=0.05)
    run = results(cases, negatives)
    d = compare(run, run).delta("literal", 1024, "normalized")
    assert math.isnan(d.baseline) and math.isnan(d.current)
    for allowance in (Allowance("normalized", 0.0, False), Allowance("normalized", 5, True)):
        verdict = d.verdict(allowance)
        assert verdict.state == "within allowance" and verdict.outcome("fail") == "pass"
        assert "undefined in the baseline" in verdict.reason


def test_an_interval_past_the_allowance_is_inconclusive_not_a_pass():
    # A point drop of 0.01 passed a point gate at auc:0.02; its interval reaches -0.05.
    d = Delta("literal", "whole", 1024, "auc", 0.8, 0.79, -0.01, -0.05, 0.03, 0.02, 16, 64)
    verdict = d.verdict(AUC_002)
    assert verdict.state == "inconclusive" and verdict.outcome("auto") == "warn"
    assert verdict.mde == pytest.approx(0.056)


def test_without_resamples_no_change_has_an_interval_and_no_verdict_is_settled(base):
    """Found: --niah-bootstrap=0 still bootstrapped comparisons 1000 times (the session and
    the command line replaced 0 with the default): 0 gives no interval, and no settled verdict."""
    comparison = compare_results(shifted(base, 4096, -0.4), base, n_resamples=0, seed=0)
    for d in comparison.deltas:
        assert math.isnan(d.low) and math.isnan(d.high) and math.isnan(d.se), d
        assert d.groups == len(GROUPS) and d.cells == 30
    verdicts = {d.length: v for d, v in comparison.verdicts([AUC_002])}
    assert {v.state for v in verdicts.values()} == {"inconclusive"}
    assert verdicts[1024].reason == "no interval: bootstrap off"
    assert (verdicts[1024].outcome(), verdicts[4096].outcome()) == ("warn", "fail")  # the point
    table = comparison_table(comparison, [AUC_002])
    assert all("(no CI: bootstrap off)" in line for line in table[1:])


def test_every_gated_slice_of_this_run_gets_a_verdict_paired_or_not(base):
    only_1024 = with_cases(base, [c for c in base.cases if c.length == 1024])
    comparison = compare(base, only_1024, allow=("lengths",))
    assert comparison.run_cells == {("literal", "whole", 1024): 30, ("literal", "whole", 4096): 30}
    assert comparison.paired == {("literal", "whole", 1024): 30}
    [(_, unpaired)] = [(w, v) for w, v in comparison.slice_verdicts([AUC_002]) if w[2] == 4096]
    assert unpaired.state == "no paired cells"
    assert (unpaired.paired_cells, unpaired.run_cells) == (0, 30)
    [paired] = comparison.gate_verdicts([AUC_002], ("literal", "whole", 1024))
    assert (paired.state, paired.paired_cells, paired.run_cells) == ("within allowance", 30, 30)


def test_a_length_pairing_a_minority_of_this_runs_cells_cannot_pass(base):
    """Found: allowing a grid difference (as the refusal's fix suggested), a run that paired a
    few of its cells passed on them. Fewer than half: inconclusive, and auto fails it."""
    cases, negatives = scored(positions=9)
    nine = results(cases, negatives, positions=9)
    # p0, p2, p4, p6, p8 of 9 sit at the depths of p0..p4 of 5, but only p0 keeps its index.
    comparison = compare(nine, base, allow=("positions",))
    assert comparison.paired == {("literal", "whole", 1024): 6, ("literal", "whole", 4096): 6}
    for d, verdict in comparison.verdicts([AUC_002]):
        assert (d.cells, d.run_cells) == (6, 54)
        assert verdict.state == "inconclusive" and verdict.outcome("auto") == "fail"
        assert "only 6 of this run's 54 cells" in verdict.reason
    # The same paired cells as half of a smaller run, or all of it, can pass.
    for kept, run_cells in (((0, 5), 12), ((0,), 6)):
        part = with_cases(nine, [c for c in nine.cases if c.position in kept])
        for d, verdict in compare(part, base, allow=("positions",)).verdicts([AUC_002]):
            assert (d.cells, d.run_cells) == (6, run_cells)
            assert verdict.state == "within allowance", verdict


def test_the_refusal_of_a_grid_difference_says_what_allowing_it_does(base):
    with pytest.raises(CompareError) as info:
        compare(changed(base, "positions"), base)
    message = str(info.value)
    assert "compare with a run of the same positions, or accept the difference (only the cells" in (
        message
    )
    assert "a length where fewer than half of this run's cells pair cannot pass its gate" in message
    # A field outside the grid pairs every cell: no such caveat.
    with pytest.raises(CompareError) as info:
        compare(changed(base, "tokenizer"), base)
    assert str(info.value).endswith(
        "Fix: compare with a run of the same tokenizer, or accept the difference with "
        "--niah-compare-allow=tokenizer"
    )


# -- coverage: windows that differ where no needle sits ---------------------------------------


def windows_run(max_tokens: int | None, step: dict[int, int]) -> NiahResults:
    cases, negatives = scored(positions=10, offset=lambda length, p, _: p * step[length])
    return results(cases, negatives, model_info=model(max_tokens=max_tokens), positions=10)


def test_a_length_whose_needles_miss_the_region_between_the_windows_is_unresolved():
    step = {1024: 112, 4096: 455}  # offsets 0, 112, 224, ... and 0, 455, 910, ...
    current, baseline = windows_run(254, step), windows_run(126, step)
    comparison = compare(current, baseline)
    at_4096 = comparison.delta("literal", 4096, "auc")
    at_1024 = comparison.delta("literal", 1024, "auc")
    assert "254" in at_4096.unresolved and "126" in at_4096.unresolved
    assert at_1024.unresolved == ""  # the needle at 224 sits between the windows
    # The interval alone says "within allowance" (the scores are the same); coverage cannot.
    verdict = at_4096.verdict(AUC_002)
    assert verdict.state == "inconclusive" and verdict.reason == at_4096.unresolved
    assert "--niah-positions" in verdict.resolve
    assert verdict.outcome("auto") == "warn"
    assert at_1024.verdict(AUC_002).state == "within allowance"
    # A clear regression stays a regression.
    worse = compare(shifted(current, 4096, -0.4), baseline).delta("literal", 4096, "auc")
    assert worse.verdict(AUC_002).state == "regressed"


@pytest.mark.parametrize(
    ("windows", "step", "unresolved"),
    [
        ((254, 254), {1024: 112, 4096: 455}, False),  # the same window: nothing to probe
        ((None, 126), {1024: 112, 4096: 455}, False),  # one reads all: 455 lies between
        ((126, None), {1024: 112, 4096: 455}, False),
        ((254, 126), {1024: 112, 4096: 200}, False),  # a needle at 200
        ((254, 126), {1024: 300, 4096: 455}, True),  # 0, 300, ...: both lengths miss it
    ],
)
def test_coverage_rule_cases(windows, step, unresolved):
    current, baseline = windows_run(windows[0], step), windows_run(windows[1], step)
    comparison = compare(current, baseline)
    assert bool(comparison.delta("literal", 4096, "auc").unresolved) is unresolved
    if step[1024] == 300:
        assert comparison.delta("literal", 1024, "auc").unresolved


def test_a_short_length_read_whole_by_both_windows_is_resolved():
    cases, negatives = scored(lengths=(128,), positions=10, offset=lambda n, p, _: p * 12)
    current = results(
        cases, negatives, model_info=model(max_tokens=254), lengths=(128,), positions=10
    )
    baseline = results(
        cases, negatives, model_info=model(max_tokens=126), lengths=(128,), positions=10
    )
    # Offsets 0..108: every needle lies inside both windows.
    assert compare(current, baseline).delta("literal", 128, "auc").unresolved == ""


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


# -- allowances (the option's expressions) ----------------------------------------------------


def test_parse_allowances():
    assert parse_allowances("auc:0.02,ratio:5%") == (
        Allowance("auc", 0.02, relative=False),
        Allowance("comparative_ratio", 5.0, relative=True),
    )
    assert parse_allowances(" AUC : 0.02 , effect-size:0.5%, ") == (
        Allowance("auc", 0.02, relative=False),
        Allowance("effect_size", 0.5, relative=True),
    )
    assert parse_allowances("auc:0,ratio:100%") == (
        Allowance("auc", 0.0, relative=False),
        Allowance("comparative_ratio", 100.0, relative=True),
    )


def test_allowance_describe_and_allowed():
    assert Allowance("auc", 0.02, relative=False).describe() == "AUC may fall at most 0.02"
    assert (
        Allowance("comparative_ratio", 5.0, relative=True).describe()
        == "comparative ratio may fall at most 5% of the baseline"
    )
    assert Allowance("auc", 5, relative=True).allowed(0.5) == pytest.approx(0.025)
    assert Allowance("auc", 0.05, relative=False).allowed(0.5) == 0.05
    assert Allowance("separation", 10, relative=True).allowed(-0.2) == pytest.approx(0.02)


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
