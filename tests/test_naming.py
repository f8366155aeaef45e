"""The one label -> file name rule (``pytest_niah.naming``), and every file named by it."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from pytest_niah.naming import label_file_name, results_file_names
from pytest_niah.results.storage import RunStore

LABELS = ["a:b", "a_b", "x/y z", "a_b-2", "模型", "型号", ".", "..", "A", "a", "x" * 300]


def test_one_model_s_results_file_is_results_json() -> None:
    assert results_file_names(["only"]) == ["results.json"]
    assert results_file_names(["Only:Model"]) == ["results.json"]


def test_results_file_names_are_safe_and_distinct_even_ignoring_case() -> None:
    names = results_file_names(LABELS)
    assert len({n.casefold() for n in names}) == len(LABELS)
    assert all(re.fullmatch(r"results\.[A-Za-z0-9._-]+\.json", n) for n in names)
    assert all(".." not in n and "/" not in n and len(n) < 100 for n in names)
    assert results_file_names(["alpha-model", "beta-model"]) == [
        "results.alpha-model.json",
        "results.beta-model.json",
    ]


@pytest.mark.parametrize("labels", [["A", "a"], ["Prod", "prod", "PROD"], ["a:b", "a_b", "a-b"]])
def test_a_label_s_results_file_is_the_same_whatever_the_order_of_the_others(labels) -> None:
    # Found (#34.3): the report numbered clashing names in label order (a second label equal
    # to the first but for case became "-2"), so a model's file changed with the order of
    # the others, and its case rule folded one side only.
    by_label = {}
    for order in itertools.permutations(labels):
        named = dict(zip(order, results_file_names(list(order)), strict=True))
        for label, name in named.items():
            assert by_label.setdefault(label, name) == name, (label, order)
        assert len({name.casefold() for name in named.values()}) == len(labels), order


@pytest.mark.parametrize("label", [*LABELS, "Prod", "prod", "lexical:tfidf"])
def test_every_file_named_after_a_label_uses_the_one_rule(label: str, tmp_path: Path) -> None:
    # A report's results file and a store folder: both the label's label_file_name.
    name = label_file_name(label)
    assert results_file_names([label, label + "-other"])[0] == f"results.{name}.json"
    assert RunStore(tmp_path).folder(label, "m").relative_to(tmp_path) == Path(name, "m")
