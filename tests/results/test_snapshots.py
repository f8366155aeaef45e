"""Snapshot tables (pytest_niah.results.snapshots): a snapshot belongs to a role, not a model."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from niah_synthetic import model, results, scored

from pytest_niah.measure.records import EffectiveLength
from pytest_niah.results.snapshots import SNAPSHOT_COLUMNS, metric_table, model_dir


def strings(value):
    """Every key and string anywhere in a JSON-like value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def test_the_table_holds_no_model_name():
    """Found: snapshots stored the model's name, so a candidate checked against the snapshot
    of the model it replaces always failed, whatever its numbers."""
    run = results(model_info=model("org/prod-model-v1"))
    table = metric_table(run)
    assert "model" not in table
    assert not any("prod-model" in text or "fp-" in text for text in strings(table))


def test_two_models_with_equal_numbers_have_equal_tables():
    cases, negatives = scored()
    prod = results(cases, negatives, model_info=model("org/prod-model-v1", max_tokens=256))
    candidate = results(
        cases,
        negatives,
        model_info=model(
            "org/candidate-v2",
            max_tokens=512,
            fingerprint="another",
            identity={"source": {"kind": "hub", "revision": "abc"}},
        ),
        model="org/candidate-v2",
    )
    assert prod.model != candidate.model and prod.config != candidate.config
    assert metric_table(prod) == metric_table(candidate)


def test_the_table_is_the_per_length_rows_rounded():
    run = results()
    effective = EffectiveLength("literal", "whole", 1024, 0.9)
    run = dataclasses.replace(run, effective_lengths=(effective,))
    table = metric_table(run, digits=3)
    assert list(table) == ["literal/whole"]
    rows = table["literal/whole"]
    assert list(rows) == ["L1024", "L4096", "effective_length"]
    assert rows["effective_length"] == 1024
    for length in (1024, 4096):
        row = run.row("literal", length)
        assert list(rows[f"L{length}"]) == list(SNAPSHOT_COLUMNS)
        for column in SNAPSHOT_COLUMNS:
            value = getattr(row, column)
            expected = round(value, 3) if isinstance(value, float) else value
            assert rows[f"L{length}"][column] == expected, column
    json.dumps(table, allow_nan=False)  # syrupy-friendly: plain values, no NaN


def test_nan_is_a_string_and_negative_zero_is_zero():
    cases, negatives = scored(cos_qn=0.05)  # no normalized similarity anywhere
    run = results(cases, negatives)
    rows = metric_table(run)["literal/whole"]
    assert rows["L1024"]["normalized"] == "nan"
    assert math.isnan(run.row("literal", 1024).normalized)
    assert rows["effective_length"] is None
    small = dataclasses.replace(
        run,
        tables=tuple(
            dataclasses.replace(r, separation=-0.0001) if r.by == "length" else r
            for r in run.tables
        ),
    )
    value = metric_table(small)["literal/whole"]["L1024"]["separation"]
    assert value == 0.0 and math.copysign(1.0, value) == 1.0


def test_snapshot_folders_are_per_label(tmp_path):
    assert model_dir(tmp_path, "prod") == tmp_path / "prod"
    assert model_dir(tmp_path, "org/model v2").name.startswith("org-model-v2-")


@pytest.mark.parametrize("labels", [("..", "."), ("模型", "型号"), ("a/b", "a-b"), ("../x", "x")])
def test_snapshot_folders_never_collide_or_leave_the_root(tmp_path, labels):
    folders = [model_dir(tmp_path, label) for label in labels]
    assert len(set(folders)) == len(labels)
    for folder in folders:
        assert folder.parent == tmp_path and folder.name not in (".", "..")
