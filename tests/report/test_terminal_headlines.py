"""Honest headlines: no meaningless largest number, no effective length past the window."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.measure.records import EffectiveLength
from pytest_niah.report.terminal_tables import (
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
