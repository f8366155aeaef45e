"""The results object and its file formats (pytest_niah.results.niah_results, .schema)."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from niah_synthetic import make_case, results, scored

from pytest_niah.errors import ResultsError
from pytest_niah.measure.records import EffectiveLength, IntervalRow, RetrievalRow
from pytest_niah.results import results_schema, storage
from pytest_niah.results.niah_results import NiahResults, package_versions
from pytest_niah.results.results_schema import (
    RESULTS_SCHEMA_VERSION,
    SCHEMA_FILES,
    ResultsDocument,
    RunDocument,
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


# -- strict reading: one ResultsError naming the file, the JSON path and the fix -----------------


def document() -> dict[str, Any]:
    return results().to_dict()


def write(tmp_path: Path, data: Any, name: str = "niah.json") -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def load_error(path: Path) -> str:
    with pytest.raises(ResultsError) as info:
        NiahResults.load(path)
    message = str(info.value)
    assert str(path) in message
    assert "Fix: " in message
    return message


def at(data: dict[str, Any], edit) -> dict[str, Any]:
    data = copy.deepcopy(data)
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "path", "words"),
    [
        (lambda d: d["cases"][3].update(cos_qh="high"), "$.cases[3].cos_qh", "valid number"),
        (lambda d: d["cases"][3].update(length=True), "$.cases[3].length", "valid integer"),
        (lambda d: d["cases"][3].update(length="1024"), "$.cases[3].length", "valid integer"),
        (lambda d: d["cases"][0].update(colour="red"), "$.cases[0].colour", "unknown key"),
        (lambda d: d.update(extra=1), "$.extra", "Fix: remove $.extra"),
        (lambda d: d["negatives"][1].pop("control_ids"), "$.negatives[1].control_ids", "required"),
        (lambda d: d.pop("cases"), "$.cases", "required"),
        (lambda d: d["model"].pop("fingerprint"), "$.model.fingerprint", "required"),
        (lambda d: d.update(schema_version=1), "$.schema_version", "schema version 1 is not 2"),
        (lambda d: d.update(cases={}), "$.cases", "valid array"),
        (lambda d: d["negatives"][0].update(scores="0.1"), "$.negatives[0].scores", "valid array"),
    ],
    ids=[
        "wrong-type",
        "bool-for-int",
        "string-for-int",
        "unknown-case-key",
        "unknown-top-key",
        "missing-control-ids",
        "missing-cases",
        "missing-fingerprint",
        "old-version",
        "object-for-list",
        "string-for-tuple",
    ],
)
def test_a_bad_results_file_names_the_file_the_json_path_and_a_fix(tmp_path, edit, path, words):
    message = load_error(write(tmp_path, at(document(), edit)))
    assert f"at {path}," in message
    assert words in message


@pytest.mark.parametrize(
    ("where", "literal"),
    [
        (("cases", 0, "cos_qh"), "NaN"),
        (("cases", 0, "cos_qh"), "1e400"),  # overflows to infinity
        (("negatives", 1, "scores", 0), "-Infinity"),
        (("config", "model_kwargs"), '{"scale": NaN}'),
        (("corpus", "weights"), "[1, Infinity]"),
    ],
    ids=["nan-score", "overflowing-score", "infinite-negative", "nan-in-config", "inf-in-corpus"],
)
def test_non_json_numbers_are_refused_where_they_are(tmp_path, where, literal):
    """The format spells an undefined number null; NaN or Infinity would not write back."""
    data = document()
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = "@@here@@"
    text = json.dumps(data).replace('"@@here@@"', literal)
    message = load_error(write(tmp_path, text))
    if where[0] in ("cases", "negatives"):  # a score: its own path
        path = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in where)
        assert f"at {path}" in message and "finite number" in message
    else:  # a free-form object: its path, then where inside it
        assert f"at $.{where[0]}, value error, {where[1]}" in message
        assert "not a JSON number" in message


def test_deeply_nested_json_is_a_results_error(tmp_path):
    message = load_error(write(tmp_path, "[" * 100_000 + "]" * 100_000))
    assert "recursion" in message or "nested too deeply" in message
    nested = '{"schema_version": 2, "config": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}"
    load_error(write(tmp_path, nested, "nested.json"))


def test_a_lone_surrogate_is_a_results_error(tmp_path):
    data = document()
    data["model"]["name"] = "\ud800"
    text = json.dumps(data)  # ASCII: the surrogate as an escape, "\\ud800"
    assert "\\ud800" in text
    message = load_error(write(tmp_path, text))
    assert "invalid JSON" in message and "$.model.name" not in message
    # Encoded as bytes (CESU-8 style), it is not UTF-8 at all.
    raw = json.dumps(document()).replace('"model-a"', '"model-\ud800"', 1)
    cesu = raw.encode("utf-8", "surrogatepass")
    assert "not UTF-8" in load_error(write(tmp_path, cesu, "cesu.json"))


def test_non_utf8_bytes_are_a_results_error(tmp_path):
    latin1 = (
        json.dumps(document(), ensure_ascii=False).replace("model-a", "modèle").encode("latin-1")
    )
    assert "not UTF-8" in load_error(write(tmp_path, latin1))
    assert "not UTF-8" in load_error(write(tmp_path, b"\xff\xfe{}", "bom.json"))


def test_not_json_names_the_file(tmp_path):
    message = load_error(write(tmp_path, "{not json", "broken.json"))
    assert "broken.json: not a valid pytest-niah results file: at $, invalid JSON" in message


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(ResultsError, match=r"nope\.json: cannot read"):
        NiahResults.load(tmp_path / "nope.json")


def test_a_folder_is_a_results_error(tmp_path):
    with pytest.raises(ResultsError, match="cannot read"):
        NiahResults.load(tmp_path)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["config"].update(lengths="abc"),
        lambda d: d["config"].update(positions={"a": 1}),
        lambda d: d["config"].update(colour="red"),
        lambda d: d["config"].pop("model"),
        lambda d: d["audit"].update(term_hits=[1, 2]),
        lambda d: d["audit"].update(snippets_used="many"),
        lambda d: d["audit"].update(snippets_used=[1]),
        lambda d: d["audit"].pop("sentences_too_long"),
    ],
    ids=[
        "lengths",
        "positions",
        "unknown-config-key",
        "no-model",
        "term-hits-list",
        "count-text",
        "count-list",
        "audit-key",
    ],
)
def test_a_bad_config_or_audit_is_a_results_error(tmp_path, edit):
    message = load_error(write(tmp_path, at(document(), edit)))
    assert "config or audit is not valid" in message


def test_wrong_shape_is_refused():
    with pytest.raises(ResultsError, match="<dict>: not a valid pytest-niah results file"):
        NiahResults.from_dict({"schema_version": RESULTS_SCHEMA_VERSION, "config": {"model": "x"}})


def test_package_versions_reads_metadata_only():
    versions = package_versions(["pytest", "no-such-package-xyz"])
    assert set(versions) == {"pytest"}


def test_a_run_records_the_version_of_every_library_in_its_embeddings_identity():
    """Found (issue 21): two lists of packages; a run left model2vec's version out."""
    from pytest_niah.embed.identity import library_versions

    embedding = library_versions()
    assert "model2vec" in embedding  # installed with the test extra: the case that drifted
    recorded = package_versions()
    assert {name: recorded.get(name) for name in embedding} == embedding
    assert {"pytest-niah", "numpy", "scikit-learn"} <= set(recorded)


# -- any input: ResultsError or a result, never another exception ---------------------------------

KEYS = [
    *ResultsDocument.model_fields,
    *RunDocument.model_fields,
    "cos_qh",
    "control_ids",
    "term_hits",
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=24,
)


def loads_or_refuses(text: str | bytes) -> None:
    """Load a file's bytes with both readers: a result, or a ResultsError naming the file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        for read in (NiahResults.load, storage.load_run):
            try:
                read(path)
            except ResultsError as exc:
                assert str(path) in str(exc), exc


@given(value=json_values)
def test_any_json_value_loads_or_is_a_results_error(value):
    loads_or_refuses(json.dumps(value))
    loads_or_refuses(json.dumps({"run_schema_version": 2, "results": value}))


@given(data=st.binary(max_size=64))
def test_any_bytes_load_or_are_a_results_error(data):
    loads_or_refuses(data)
    loads_or_refuses(b'{"run_schema_version": ' + data)


VALID = results().to_dict()


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON value (the first two items of each list only)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value[:2]):
            out.extend(paths(item, (*prefix, index)))
    return out


PATHS = [p for p in paths(VALID) if p]


@given(where=st.sampled_from(PATHS), value=json_values, drop=st.booleans())
def test_a_valid_file_with_one_node_changed_loads_or_is_a_results_error(where, value, drop):
    data = copy.deepcopy(VALID)
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    if drop:
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    loads_or_refuses(json.dumps(data))
    run = {"run_schema_version": 2, "name": "n", "label": "l", "saved_at": "now"}
    loads_or_refuses(json.dumps({**run, "machine": {}, "commit": {}, "results": data}))


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
