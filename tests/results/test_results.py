"""The results object and its file formats (pytest_niah.results.niah_results, .schema).

How a bad or hostile results file is refused is tested in test_results_reading.py.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from niah_synthetic import at, make_case, results, scored

from pytest_niah.errors import ResultsError
from pytest_niah.measure.records import EffectiveLength, IntervalRow, RetrievalRow
from pytest_niah.results import results_schema, storage
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.results_schema import (
    SCHEMA_FILES,
    json_schema,
    schema_path,
    schema_text,
    write_schemas,
)

ROOT = Path(__file__).resolve().parents[2]


def awkward() -> NiahResults:
    """Results whose floats are hard to write exactly: NaN, -0.0, subnormals, 0.1 + 0.2."""
    cases, negatives = scored(groups=("dietary-01", "location-02"), lengths=(1024,))
    odd = [
        make_case("dietary-01", 0.1 + 0.2, control=5e-324, position=1, cos_qn=1 / 3),
        make_case("location-02", -0.0, control=1e-300, position=2, cos_qn=0.0019),
    ]
    replaced = {(c.group_id, c.position) for c in odd}
    cases = [c for c in cases if (c.group_id, c.position) not in replaced]
    run = results([*cases, *odd], negatives, lengths=(1024,))
    return dataclasses.replace(
        run,
        intervals=(
            IntervalRow("literal", "whole", 1024, "auc", 0.9, math.nan, math.nan),
            IntervalRow("literal", "whole", 1024, "separation", 0.2, 0.1, 0.3, 0.05, 2),
        ),
        retrieval=(RetrievalRow("literal", "whole", 1024, 0.5, 2 / 3, math.nan),),
        effective_lengths=(EffectiveLength("literal", "whole", None, math.nan),),
        placement={"1024": {"sentences": 2, "words": 0, "shared_offsets": 0}},
    )


# -- round trip -----------------------------------------------------------------------------------


def test_to_json_from_json_round_trips_every_bit(frozen):
    run = awkward()
    assert math.isnan(run.case(make_case("location-02", 0, control=0, position=2).id).normalized)
    text = run.to_json()
    again = NiahResults.from_json(text)
    assert frozen(again) == frozen(run)
    assert again.to_json() == text
    assert math.copysign(1.0, again.case(run.cases[-1].id).cos_qh) == -1.0  # -0.0 kept


def test_nan_is_written_as_null_and_read_back_as_nan():
    run = awkward()
    text = run.to_json()
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    assert data["intervals"][0]["low"] is None
    assert data["effective_lengths"][0] == {
        "arm": "literal",
        "scoring": "whole",
        "length": None,
        "reference_auc": None,
    }
    assert math.isnan(NiahResults.from_json(text).intervals[0].low)


@given(scores=st.lists(st.floats(-1.0, 1.0) | st.just(math.nan), min_size=1, max_size=8))
def test_any_cosine_or_nan_score_round_trips_exactly(frozen, scores):
    run = results()
    first = run.negatives[0]
    ids = tuple(f"c-{i}" for i in range(len(scores)))
    negatives = (dataclasses.replace(first, control_ids=ids, scores=tuple(scores)),)
    run = dataclasses.replace(run, negatives=negatives)
    assert frozen(NiahResults.from_json(run.to_json()).negatives) == frozen(negatives)


def test_from_dict_rebuilds_to_dict_output(frozen):
    run = awkward()
    assert frozen(NiahResults.from_dict(run.to_dict())) == frozen(run)
    with pytest.raises(ResultsError, match="<dict>: not JSON data"):
        NiahResults.from_dict({"cases": [math.nan]})
    with pytest.raises(ResultsError, match="<dict>: not JSON data"):
        NiahResults.from_dict({"cases": object()})


def test_lookups():
    run = awkward()
    assert run.row("literal", 1024).length == 1024
    with pytest.raises(KeyError, match="no metrics"):
        run.row("literal", 2048)
    assert run.interval("literal", 1024, "separation").se == 0.05
    assert run.interval("literal", 1024, "normalized") is None
    assert run.effective_length("literal").length is None
    assert run.effective_length("onehop") is None
    with pytest.raises(KeyError, match="no case"):
        run.case("nope")
    assert run.variants == (("literal", "whole"),)
    assert {r.by for r in run.rows("category")} == {"category"}


# -- the published schemas ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCHEMA_FILES))
@pytest.mark.skipif(
    tuple(int(x) for x in __import__("pydantic").VERSION.split(".")[:2]) < (2, 14),
    reason="the shipped schemas are generated with pydantic >= 2.14; older ones spell less",
)
def test_the_shipped_schema_is_generated_from_the_models(name):
    path = schema_path(name)
    assert path.parent == ROOT / "pytest_niah" / "data" / "schemas"
    assert path.is_file(), "missing: run python -m pytest_niah.results.results_schema"
    assert path.read_text(encoding="utf-8") == schema_text(name), (
        f"{path.name} is out of date: run python -m pytest_niah.results.results_schema"
    )
    assert json.loads(path.read_text(encoding="utf-8"))["title"] == SCHEMA_FILES[name].__name__
    assert schema_text(name) == json.dumps(json_schema(SCHEMA_FILES[name]), indent=2) + "\n"


@pytest.mark.skipif(
    tuple(int(x) for x in __import__("pydantic").VERSION.split(".")[:2]) < (2, 14),
    reason="the shipped schemas are generated with pydantic >= 2.14; older ones spell less",
)
def test_schemas_are_regenerated_by_one_function_and_checked_by_the_module(tmp_path, capsys):
    written = write_schemas(tmp_path)
    assert [p.name for p in written] == ["results.schema.json", "saved-run.schema.json"]
    for path, name in zip(written, SCHEMA_FILES, strict=True):
        assert path.read_text(encoding="utf-8") == schema_path(name).read_text(encoding="utf-8")
    assert results_schema.main(["--check"]) == 0
    assert results_schema.main(["--out", str(tmp_path / "out")]) == 0
    assert str(tmp_path / "out") in capsys.readouterr().out


def test_the_schemas_are_package_data():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[tool.setuptools.package-data]", 1)[1].split("\n[", 1)[0]
    (line,) = [x for x in section.splitlines() if x.startswith("pytest_niah")]
    assert '"data/schemas/*.json"' in line


class Violation(Exception):
    pass


def check(value: Any, node: dict[str, Any], document: dict[str, Any], at: str = "$") -> None:
    """The part of JSON Schema the generated schemas use; any other keyword fails the test."""
    known = {"$schema", "$defs", "$ref", "title", "description", "default", "type", "anyOf"}
    known |= {"properties", "required", "additionalProperties", "items"}
    assert not set(node) - known, f"unknown keywords {set(node) - known}"
    if "$ref" in node:
        check(value, document["$defs"][node["$ref"].removeprefix("#/$defs/")], document, at)
    if "anyOf" in node:
        failures = 0
        for option in node["anyOf"]:
            try:
                check(value, option, document, at)
            except Violation:
                failures += 1
        if failures == len(node["anyOf"]):
            raise Violation(f"{at}: matches no option")
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    kind = node.get("type")
    if kind in ("integer", "number"):
        allowed = (int,) if kind == "integer" else (int, float)
        if isinstance(value, bool) or not isinstance(value, allowed):
            raise Violation(f"{at}: not {kind}")
    elif kind is not None and not isinstance(value, kinds[kind]):
        raise Violation(f"{at}: not {kind}")
    if isinstance(value, list):
        for index, item in enumerate(value):
            check(item, node.get("items", {}), document, f"{at}[{index}]")
    if isinstance(value, dict):
        for key in node.get("required", ()):
            if key not in value:
                raise Violation(f"{at}: misses {key}")
        properties = node.get("properties", {})
        for key, item in value.items():
            if key in properties:
                check(item, properties[key], document, f"{at}.{key}")
            elif node.get("additionalProperties", True) is False:
                raise Violation(f"{at}: unknown key {key}")


def test_a_written_results_file_and_saved_run_validate_against_the_published_schemas(tmp_path):
    data = json.loads(awkward().to_json())
    results_schema = json.loads(schema_path("results").read_text(encoding="utf-8"))
    check(data, results_schema, results_schema)  # nulls where scores are NaN included
    saved = storage.RunStore(tmp_path).save(awkward(), "base", label="model-a")
    run_schema = json.loads(schema_path("saved-run").read_text(encoding="utf-8"))
    check(json.loads(gzip.decompress(saved.read_bytes())), run_schema, run_schema)
    # And the schema is not vacuous.
    for bad in (
        at(data, lambda d: d["cases"][0].update(cos_qh="high")),
        at(data, lambda d: d["cases"][0].update(colour="red")),
        at(data, lambda d: d["negatives"][0].pop("scores")),
    ):
        with pytest.raises(Violation):
            check(bad, results_schema, results_schema)
