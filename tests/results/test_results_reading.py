"""Reading results files strictly: one ResultsError naming the file, the JSON path and the fix.

Any input, valid or not, gives a result or a ResultsError, never another exception.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from niah_synthetic import at, results

from pytest_niah.errors import ResultsError
from pytest_niah.results import run_reading
from pytest_niah.results.niah_results import NiahResults, package_versions
from pytest_niah.results.results_schema import (
    RESULTS_SCHEMA_VERSION,
    ResultsDocument,
    RunDocument,
)

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
        for read in (NiahResults.load, run_reading.load_run):
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
