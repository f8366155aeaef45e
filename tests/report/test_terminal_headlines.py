"""Honest headlines: no meaningless largest number, no effective length past the window."""

from __future__ import annotations

import dataclasses
import math

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.display import fmt
from pytest_niah.measure.records import EffectiveLength, IntervalRow
from pytest_niah.report.terminal_tables import (
    AT_CHANCE,
    NOT_MEANINGFUL,
    effective_length_text,
    length_table,
    normalized_cell,
    notes,
    title,
)
from pytest_niah.results.niah_results import NiahResults


@pytest.fixture(scope="module")
def results(shared_corpus_dir) -> NiahResults:
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01", "medical-02", "location-03"),
        lengths=(64, 256),
        positions=2,
        arms=("literal",),
    )
    return run_experiment(config, progress=False)


def with_row(results: NiahResults, length: int, **changes) -> NiahResults:
    metrics = tuple(
        dataclasses.replace(r, **changes) if (r.by, r.length) == ("length", length) else r
        for r in results.tables
    )
    return dataclasses.replace(results, tables=metrics)


def test_normalized_similarity_of_mostly_left_out_cases_is_not_shown(results):
    row = results.row("literal", 64)
    counted = row.n_cases - row.duplicates - row.invalid
    # The found case: a model at chance, most needles alone below the floor, reads 2.0.
    chance = with_row(results, 64, normalized=2.0, norm_excluded=counted - 1)
    assert normalized_cell(chance.row("literal", 64)) == NOT_MEANINGFUL
    table = "\n".join(length_table(chance, "literal"))
    assert "2.000" not in table and NOT_MEANINGFUL in table
    said = "\n".join(notes(chance, "literal", "whole"))
    assert f"norm.sim {NOT_MEANINGFUL} (not meaningful) at 64 tokens" in said
    assert "barely matches its question" in said


def test_normalized_similarity_of_mostly_kept_cases_is_shown(results):
    row = results.row("literal", 64)
    counted = row.n_cases - row.duplicates - row.invalid
    kept = with_row(results, 64, normalized=0.8, norm_excluded=counted // 2)
    assert normalized_cell(kept.row("literal", 64)) == "0.800"
    assert "not meaningful" not in "\n".join(notes(kept, "literal", "whole"))


def with_auc_interval(results: NiahResults, length: int, low: float, high: float) -> NiahResults:
    intervals = tuple(
        dataclasses.replace(r, low=low, high=high)
        if (r.arm, r.length, r.metric) == ("literal", length, "auc")
        else r
        for r in results.intervals
    )
    return dataclasses.replace(results, intervals=intervals)


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [(0.40, 0.62, False), (0.50, 0.70, False), (0.30, 0.50, False), (0.51, 0.70, True)],
)
def test_normalized_similarity_at_chance_is_not_shown(results, low, high, shown):
    # The found case: packaged-static at chance, few cases left out, reads ~2.1, the largest
    # number of the table. An AUC interval that holds 0.5 (its ends included) hides it.
    row = results.row("literal", 256)
    kept = with_row(results, 256, normalized=2.1, norm_excluded=0)
    doctored = with_auc_interval(kept, 256, low, high)
    auc = doctored.interval("literal", 256, "auc")
    assert isinstance(auc, IntervalRow) and row.n_cases > 0
    assert (normalized_cell(doctored.row("literal", 256), auc) == "2.100") is shown
    table = "\n".join(length_table(doctored, "literal"))
    assert ("2.100" in table) is shown
    said = "\n".join(notes(doctored, "literal", "whole"))
    assert (f"norm.sim {NOT_MEANINGFUL} (not meaningful) at 256 tokens: {AT_CHANCE}" in said) is (
        not shown
    )


def test_an_undefined_auc_interval_hides_nothing(results):
    kept = with_row(results, 256, normalized=0.7, norm_excluded=0)
    doctored = with_auc_interval(kept, 256, math.nan, math.nan)
    auc = doctored.interval("literal", 256, "auc")
    assert normalized_cell(doctored.row("literal", 256), auc) == "0.700"


def test_a_static_model_at_chance_shows_no_normalized_similarity():
    # The found model: packaged-static on one-hop needles is at chance at every length.
    config = NiahConfig(
        model="packaged-static",
        groups=("dietary-01", "medical-02", "location-03", "vehicle-04"),
        lengths=(1024,),
        positions=3,
        arms=("onehop",),
    )
    at_chance = run_experiment(config, progress=False)
    auc = at_chance.interval("onehop", 1024, "auc")
    assert auc is not None and auc.low <= 0.5 <= auc.high
    row = at_chance.row("onehop", 1024)
    assert row.normalized > 1.0  # the misleading number itself
    table = "\n".join(length_table(at_chance, "onehop"))
    assert fmt(row.normalized) not in table and NOT_MEANINGFUL in table


def test_effective_length_never_exceeds_what_the_model_reads(results):
    # The found case: "reads 62 tokens, effective length 256 tokens".
    short = dataclasses.replace(
        results,
        model=results.model.model_copy(update={"max_tokens": 62}),
        effective_lengths=(EffectiveLength("literal", "whole", 256, 0.9),),
    )
    line = title("lexical:tfidf", short, "literal")
    assert "reads 62 tokens" in line
    assert "effective length 256 tokens" not in line
    assert "effective length at most 62 tokens" in line


def test_effective_length_within_the_window_reads_as_before():
    effective = EffectiveLength("onehop", "whole", 128, 0.9)
    assert effective_length_text(effective, 256) == "128 tokens"
    assert effective_length_text(effective) == "128 tokens"
    unmeasured = EffectiveLength("onehop", "whole", None, 0.9)
    assert effective_length_text(unmeasured, 62) == "below the shortest length"


def test_chunked_scoring_reads_every_chunk_so_no_cap(results):
    chunked = dataclasses.replace(
        results,
        model=results.model.model_copy(update={"max_tokens": 62}),
        effective_lengths=(EffectiveLength("literal", "chunk-max", 256, 0.9),),
    )
    assert "effective length 256 tokens" in title("m", chunked, "literal", "chunk-max")
