"""An interval in a table, or why there is none (found: ``[nan,nan]`` with one needle group)."""

from __future__ import annotations

import math

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import run_experiment
from pytest_niah.report.terminal_tables import interval_cell, length_table

NAN = math.nan


def test_an_interval_is_shown_with_its_bounds():
    assert interval_cell(0.8, 0.61, 0.78, 8, 2) == "[0.61,0.78]"
    assert interval_cell(-0.01, -0.02, 0.01, 8, 2, sign="+") == "[-0.02, +0.01]"


def test_a_missing_interval_says_why():
    assert interval_cell(0.8, NAN, NAN, 1, 2) == "(no CI: 1 needle group)"
    assert interval_cell(0.8, NAN, NAN, 0, 2) == "(no CI: 0 needle groups)"
    assert interval_cell(0.0, NAN, NAN, 8, 2, sign="+") == "(no CI: bootstrap off)"
    assert interval_cell(NAN, NAN, NAN, 8, 2, sign="+") == "(no CI: undefined)"
    assert interval_cell(0.8, 0.7, NAN, 8, 2) == "(no CI: bootstrap off)"


def test_the_length_table_of_one_needle_group_says_why_it_has_no_interval(
    shared_corpus_dir, hashing_embedder
):
    config = NiahConfig(
        model="hashing",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01",),
        lengths=(64,),
        positions=2,
        arms=("literal",),
        bootstrap=50,
    )
    results = run_experiment(config, embedder=hashing_embedder(None))
    [row] = length_table(results, "literal")[1:]
    assert "(no CI: 1 needle group)" in row
    assert "nan" not in row.lower()
