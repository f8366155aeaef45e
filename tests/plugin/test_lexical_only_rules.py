"""Model options refused only where no model of the run would use them (lexical baselines
alone), each named with its fix."""

from __future__ import annotations

import pytest

from pytest_niah.config.niah import ModelSpec
from pytest_niah.plugin.problems import Problems
from pytest_niah.plugin.setting_checks import check_lexical_only

GIVEN = {"max_seq_length": 128, "model_kwargs": {"a": 1}, "encode_kwargs": {"b": 2}}
NONE = {"max_seq_length": None, "model_kwargs": {}, "encode_kwargs": {}}


def _problems(names: list[str], values: dict) -> list[str]:
    problems = Problems()
    check_lexical_only([ModelSpec(n, n) for n in names], values, problems)
    return [str(e) for e in problems.errors]


def test_options_no_lexical_baseline_reads_are_each_named():
    found = _problems(["lexical:tfidf", "lexical:bm25"], GIVEN)
    assert len(found) == 3
    assert all("(lexical:bm25, lexical:tfidf)" in p for p in found)
    assert [p.split()[0] for p in found] == [
        "--niah-max-seq-length", "--niah-model-kwargs", "--niah-encode-kwargs",
    ]  # fmt: skip


@pytest.mark.parametrize("names", [["packaged-minilm"], ["lexical:tfidf", "packaged-minilm"]])
def test_with_a_model_in_the_run_the_options_are_its_own(names):
    assert _problems(names, GIVEN) == []


def test_options_not_given_are_never_refused():
    assert _problems(["lexical:tfidf"], NONE) == []
