"""Metric tables from hand-built scored cases (pytest_niah.measure.analysis)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pytest_niah.haystacks.grid import case_id
from pytest_niah.measure.analysis import SPLITS, metric_row, summarize
from pytest_niah.measure.records import CaseResult, MetricRow, NegativeScores


def case(
    group_id: str,
    cos_qh: float,
    *,
    control: float,
    order: str = "default",
    position: int = 0,
    arm: str = "onehop",
    length: int = 128,
    cos_qn: float = 0.5,
    truncated: bool = False,
    problem: str | None = None,
) -> CaseResult:
    """A case with the needle at ``position`` of 10 evenly spaced positions."""
    return CaseResult(
        id=case_id(group_id, arm, order, length, position),
        group_id=group_id,
        category=group_id.rsplit("-", 1)[0],
        arm=arm,
        scoring="whole",
        order=order,
        length=length,
        position=position,
        relative_position=position / 9,
        name="Katarina",
        needle_offset=position * 10,
        needle_tokens=12,
        truncated=truncated,
        cos_qh=cos_qh,
        cos_qn=cos_qn,
        normalized=cos_qh / cos_qn,
        control_score=control,
        found=cos_qh > control,
        problem=problem,
    )


# Q1 dietary-01: positives 0.5, 0.3, 0.4 vs negatives 0.35, 0.2
#   AUC = (2 + 1 + 2) / 6 = 5/6; separation = 0.4 - 0.275 = 0.125
#   d = 0.125 / sqrt((2 * 0.01 + 1 * 0.01125) / 3)
# Q2 location-02: positives 0.2, 0.2 vs negatives 0.2, 0.1, 0.3
#   AUC = (1.5 + 1.5) / 6 = 0.5; separation = 0; d = 0
CASES = [
    case("dietary-01", 0.5, control=0.35, order="default", position=0),
    case("dietary-01", 0.3, control=0.35, order="default", position=5),
    case("dietary-01", 0.4, control=0.2, order="inverted", position=9, truncated=True),
    case("location-02", 0.2, control=0.1, order="default", position=0),
    case("location-02", 0.2, control=0.3, order="inverted", position=5),
]
NEGATIVES = [
    NegativeScores("onehop", "whole", "dietary-01", 128, (0.35, 0.2)),
    NegativeScores("onehop", "whole", "location-02", 128, (0.2, 0.1, 0.3)),
]
AUC_Q1, AUC_Q2 = 5 / 6, 0.5
SEP_Q1, SEP_Q2 = 0.125, 0.0
D_Q1, D_Q2 = 0.125 / math.sqrt((2 * 0.01 + 1 * 0.01125) / 3), 0.0


def rows_by(rows, by):
    return {r.key: r for r in rows if r.by == by}


def neg_index(negatives):
    return {
        (n.arm, n.scoring, n.group_id, n.length): np.asarray(n.scores, float) for n in negatives
    }


def test_length_row_averages_two_sample_metrics_over_questions():
    (row,) = [r for r in summarize(CASES, NEGATIVES) if r.by == "length"]
    assert (row.arm, row.length, row.key) == ("onehop", 128, "")
    assert row.n_cases == 5
    assert row.n_questions == 2
    assert row.auc == pytest.approx((AUC_Q1 + AUC_Q2) / 2)  # 2/3
    assert row.auc == pytest.approx(2 / 3)
    assert row.separation == pytest.approx((SEP_Q1 + SEP_Q2) / 2, abs=1e-12)
    assert row.effect_size == pytest.approx((D_Q1 + D_Q2) / 2, abs=1e-9)


def test_length_row_is_not_a_pooled_auc():
    (row,) = [r for r in summarize(CASES, NEGATIVES) if r.by == "length"]
    pooled_pos = [0.5, 0.3, 0.4, 0.2, 0.2]
    pooled_neg = [0.35, 0.2, 0.2, 0.1, 0.3]
    pairs = [(p > n) + 0.5 * (p == n) for p in pooled_pos for n in pooled_neg]
    assert sum(pairs) / len(pairs) != pytest.approx(row.auc)


def test_length_row_means_counts_and_comparative_ratio():
    (row,) = [r for r in summarize(CASES, NEGATIVES) if r.by == "length"]
    assert row.cos_qh == pytest.approx(0.32)
    assert row.cos_qn == pytest.approx(0.5)
    assert row.normalized == pytest.approx(0.64)  # mean of 1.0, 0.6, 0.8, 0.4, 0.4
    # above own control: 0.5>0.35, 0.4>0.2, 0.2>0.1; below: 0.3<0.35, 0.2<0.3
    assert row.comparative_ratio == pytest.approx(3 / 5)
    assert (row.found, row.missed, row.truncated, row.invalid) == (3, 2, 1, 0)


def test_length_row_position_effects():
    (row,) = [r for r in summarize(CASES, NEGATIVES) if r.by == "length"]
    # normalized by position: p00 (rel 0) 1.0, 0.4; p05 (rel 5/9) 0.6, 0.4; p09 (rel 1) 0.8
    assert row.begin == pytest.approx(0.7)
    assert row.middle == pytest.approx(0.5)
    assert row.end == pytest.approx(0.8)
    x = np.array([0, 5 / 9, 1, 0, 5 / 9])
    y = np.array([1.0, 0.6, 0.8, 0.4, 0.4])
    assert row.pearson_r == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert row.slope == pytest.approx(np.polyfit(x, y, 1)[0])


def test_comparative_ratio_counts_ties_with_own_control_half():
    cases = [
        case("dietary-01", 0.4, control=0.4),
        case("dietary-01", 0.5, control=0.4, position=1),
        case("dietary-01", 0.3, control=0.4, position=2),
        case("dietary-01", 0.6, control=0.7, position=3),
    ]
    row = metric_row("onehop", "whole", 128, "length", "", cases, {})
    assert row.comparative_ratio == pytest.approx((0.5 + 1 + 0 + 0) / 4)
    assert (row.found, row.missed) == (1, 3)


def test_splits_produce_expected_keys_and_metrics():
    rows = summarize(CASES, NEGATIVES)
    assert [r.by for r in rows] == ["length"] + ["category"] * 2 + ["order"] * 2 + ["position"] * 3
    assert set(SPLITS) == {"category", "order", "position"}

    by_category = rows_by(rows, "category")
    assert list(by_category) == ["dietary", "location"]
    assert by_category["dietary"].auc == pytest.approx(AUC_Q1)
    assert by_category["dietary"].separation == pytest.approx(SEP_Q1)
    assert by_category["dietary"].n_cases == 3
    assert by_category["dietary"].n_questions == 1
    assert by_category["location"].auc == pytest.approx(AUC_Q2)
    assert by_category["location"].comparative_ratio == pytest.approx(0.5)

    by_order = rows_by(rows, "order")
    assert list(by_order) == ["default", "inverted"]
    # default: Q1 [0.5, 0.3] vs [0.35, 0.2] = 3/4; Q2 [0.2] vs [0.2, 0.1, 0.3] = 1/2
    assert by_order["default"].auc == pytest.approx((3 / 4 + 1 / 2) / 2)
    # inverted: Q1 [0.4] = 1; Q2 [0.2] = 1/2
    assert by_order["inverted"].auc == pytest.approx((1 + 1 / 2) / 2)
    assert by_order["default"].n_cases == 3
    assert by_order["inverted"].truncated == 1

    by_position = rows_by(rows, "position")
    assert list(by_position) == ["p00", "p05", "p09"]
    # p00: Q1 [0.5] = 1; Q2 [0.2] = 1/2
    assert by_position["p00"].auc == pytest.approx(0.75)
    assert by_position["p09"].n_questions == 1
    assert by_position["p09"].found == 1
    for row in rows:
        assert (row.arm, row.length) == ("onehop", 128)


def test_summarize_separates_arms_and_lengths():
    literal = [
        case("dietary-01", 0.9, control=0.1, arm="literal"),
        case("dietary-01", 0.1, control=0.2, arm="literal", length=256, position=3),
    ]
    negatives = [
        *NEGATIVES,
        NegativeScores("literal", "whole", "dietary-01", 128, (0.0, 0.95)),
        NegativeScores("literal", "whole", "dietary-01", 256, (0.0,)),
    ]
    rows = summarize(CASES + literal, negatives)
    length_rows = [(r.arm, r.length) for r in rows if r.by == "length"]
    # Rows follow the cases (config order), not alphabetical order.
    assert length_rows == [("onehop", 128), ("literal", 128), ("literal", 256)]
    lit128 = next(r for r in rows if r.by == "length" and r.arm == "literal" and r.length == 128)
    assert lit128.auc == pytest.approx(0.5)  # its own arm's negatives, not onehop's
    lit256 = next(r for r in rows if r.by == "length" and r.arm == "literal" and r.length == 256)
    assert lit256.auc == pytest.approx(1.0)
    assert lit256.n_cases == 1
    onehop = next(r for r in rows if r.by == "length" and r.arm == "onehop")
    assert onehop.auc == pytest.approx(2 / 3)  # unchanged by the literal arm


def test_invalid_case_is_counted_and_left_out_of_every_metric():
    bad = case(
        "dietary-01",
        0.99,
        control=0.0,
        order="inverted",
        position=2,
        truncated=True,
        problem="non-finite embedding",
    )
    only_bad = case("location-03", 0.9, control=0.0, problem="non-finite embedding")
    negatives = [*NEGATIVES, NegativeScores("onehop", "whole", "location-03", 128, (0.1, 0.2))]
    clean = summarize(CASES, NEGATIVES)
    dirty = summarize([*CASES, bad, only_bad], negatives)

    row = next(r for r in dirty if r.by == "length")
    ref = next(r for r in clean if r.by == "length")
    assert row.n_cases == 7
    assert row.invalid == 2
    assert row.n_questions == 2  # location-03 has no valid case
    assert (row.found, row.missed, row.truncated) == (3, 2, 1)
    skip = {"n_cases", "invalid"}
    for f in dataclasses.fields(MetricRow):
        if f.name not in skip:
            assert getattr(row, f.name) == getattr(ref, f.name), f.name

    dirty_category = rows_by(dirty, "category")
    assert dirty_category["location"].invalid == 1
    assert dirty_category["location"].auc == pytest.approx(AUC_Q2)


def test_slice_of_only_invalid_cases_has_nan_metrics():
    bad = case("dietary-01", 0.5, control=0.1, problem="empty haystack")
    row = metric_row("onehop", "whole", 128, "length", "", [bad], neg_index(NEGATIVES))
    assert (row.n_cases, row.invalid, row.n_questions, row.found, row.missed) == (1, 1, 0, 0, 0)
    for name in ("cos_qh", "normalized", "comparative_ratio", "auc", "separation", "effect_size"):
        assert math.isnan(getattr(row, name)), name


def test_question_with_nan_negatives_ignores_them():
    # Q3: positive 0.6 vs negatives (0.1, nan, 0.7) -> (0.1, 0.7): AUC 1/2, separation 0.2,
    # d = 0.2 / sqrt(((0 + 1 * 0.18) / 1))
    cases = [*CASES, case("location-03", 0.6, control=0.4, position=9)]
    negatives = [
        *NEGATIVES,
        NegativeScores("onehop", "whole", "location-03", 128, (0.1, math.nan, 0.7)),
    ]
    (row,) = [r for r in summarize(cases, negatives) if r.by == "length"]
    assert row.n_questions == 3
    assert row.auc == pytest.approx((AUC_Q1 + AUC_Q2 + 0.5) / 3)
    assert row.separation == pytest.approx((SEP_Q1 + SEP_Q2 + 0.2) / 3)
    d_q3 = 0.2 / math.sqrt(0.18)
    assert row.effect_size == pytest.approx((D_Q1 + D_Q2 + d_q3) / 3)

    location = rows_by(summarize(cases, negatives), "category")["location"]
    assert location.auc == pytest.approx((AUC_Q2 + 0.5) / 2)


def test_question_with_only_nan_or_no_negatives_is_left_out_of_two_sample_means():
    cases = [
        *CASES,
        case("location-03", 0.6, control=0.4, position=9),
        case("medical-01", 0.6, control=0.4, position=9),
    ]
    negatives = [
        *NEGATIVES,
        NegativeScores("onehop", "whole", "location-03", 128, (math.nan, math.nan)),
    ]
    (row,) = [r for r in summarize(cases, negatives) if r.by == "length"]
    assert row.n_questions == 4
    assert row.auc == pytest.approx((AUC_Q1 + AUC_Q2) / 2)
    assert row.separation == pytest.approx((SEP_Q1 + SEP_Q2) / 2, abs=1e-12)
    assert row.effect_size == pytest.approx((D_Q1 + D_Q2) / 2, abs=1e-9)
    assert row.comparative_ratio == pytest.approx(5 / 7)


def test_metric_row_takes_by_and_key_as_given():
    row = metric_row("onehop", "whole", 128, "category", "dietary", CASES[:3], neg_index(NEGATIVES))
    assert (row.by, row.key, row.n_cases) == ("category", "dietary", 3)
    assert row.auc == pytest.approx(AUC_Q1)
    assert row.effect_size == pytest.approx(D_Q1)


def test_summarize_of_nothing_is_empty():
    assert summarize([], []) == ()
