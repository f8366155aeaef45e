"""Lengths past the model's window are flagged in the tables, never silently measured."""

from __future__ import annotations

import dataclasses

from pytest_niah.report.terminal_tables import length_table, notes


def with_window(results, window):
    return dataclasses.replace(
        results, model=results.model.model_copy(update={"max_tokens": window})
    )


def lengths_shown(lines):
    return [line.split()[0] for line in lines[1:]]


def test_a_length_past_the_window_is_marked_and_explained(results):
    narrow = with_window(results, 256)
    assert lengths_shown(length_table(narrow, "onehop", "whole")) == ["128", "512*"]
    explained = [n for n in notes(narrow, "onehop", "whole") if "past the window" in n]
    assert explained == [
        "  note: * past the window: at 512 tokens the model reads only the first 256 tokens "
        "of each haystack"
    ]


def test_chunked_scoring_and_unlimited_models_are_not_marked(results):
    narrow = with_window(results, 256)
    assert lengths_shown(length_table(narrow, "onehop", "chunk-max")) == ["128", "512"]
    assert not [n for n in notes(narrow, "onehop", "chunk-max") if "past the window" in n]
    assert lengths_shown(length_table(results, "onehop", "whole")) == ["128", "512"]
