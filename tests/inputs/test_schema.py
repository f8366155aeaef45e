"""File formats: pydantic models and their published JSON Schemas.

Strict types, the fixes error messages suggest, and the names rule are tested in
test_schema_messages.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.inputs import schema, schema_values

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "pytest_niah" / "data"
NEEDLE_FIXTURES = REPO / "fixtures" / "needles"
EXPANSION_FIXTURES = REPO / "fixtures" / "expansions"

# --- the shipped schemas ----------------------------------------------------------------


@pytest.mark.parametrize("kind", schema.SCHEMA_KINDS)
@pytest.mark.skipif(
    tuple(int(x) for x in __import__("pydantic").VERSION.split(".")[:2]) < (2, 14),
    reason="the shipped schemas are generated with pydantic >= 2.14; older ones spell less",
)
def test_shipped_schema_is_generated_from_the_models(kind):
    # Fails when a model changes without `python -m pytest_niah.inputs.schema`.
    shipped = DATA / "schemas" / f"{kind}.schema.json"
    assert shipped.read_text(encoding="utf-8") == schema.schema_json(kind), (
        f"{shipped} is out of date: run python -m pytest_niah.inputs.schema"
    )
    assert schema.schema_path(kind) == shipped


@pytest.mark.parametrize("kind", schema.SCHEMA_KINDS)
def test_schema_names_itself(kind):
    document = schema.schema_dict(kind)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == f"urn:pytest-niah:schema:{kind}:1"
    assert document["title"].startswith("pytest-niah ")
    assert document["description"]
    assert document["additionalProperties"] is False
    assert document["properties"]["schema_version"]["const"] == schema.INPUT_SCHEMA_VERSION


def test_main_checks_and_writes_the_schemas(tmp_path, capsys):
    assert schema.main(["--check"]) == 0
    assert schema.main(["--out", str(tmp_path)]) == 0
    for kind in schema.SCHEMA_KINDS:
        written = (tmp_path / f"{kind}.schema.json").read_text(encoding="utf-8")
        assert written == schema.schema_json(kind)
    assert str(tmp_path) in capsys.readouterr().out


# --- validating with the published schema ------------------------------------------------------


class SchemaViolation(Exception):
    pass


class MiniValidator:
    """The part of JSON Schema 2020-12 the published schemas use; any other keyword fails.

    Used when the ``jsonschema`` package is not installed, so that the shipped files are
    still checked as JSON Schema documents (not only through the pydantic models).
    """

    KNOWN: ClassVar[frozenset[str]] = frozenset(
        {
            *("$schema", "$id", "$defs", "$ref", "title", "description", "default", "type"),
            *("properties", "required", "additionalProperties", "propertyNames"),
            *("minProperties", "items", "minItems", "uniqueItems", "pattern", "const"),
        }
    )
    TYPES: ClassVar[dict[str, Any]] = {
        "object": dict,
        "array": list,
        "string": str,
        "integer": int,
        "boolean": bool,
        "null": type(None),
    }

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def validate(self, value: Any, node: dict[str, Any] | None = None, at: str = "$") -> None:
        node = self.document if node is None else node
        unknown = set(node) - self.KNOWN
        assert not unknown, f"MiniValidator does not know {unknown}"
        if "$ref" in node:
            name = node["$ref"].removeprefix("#/$defs/")
            self.validate(value, self.document["$defs"][name], at)
        if "type" in node:
            expected = self.TYPES[node["type"]]
            if not isinstance(value, expected) or (
                node["type"] == "integer" and isinstance(value, bool)
            ):
                raise SchemaViolation(f"{at}: not {node['type']}")
        if "const" in node and (value != node["const"] or isinstance(value, bool)):
            raise SchemaViolation(f"{at}: not {node['const']}")
        if "pattern" in node and isinstance(value, str) and not re.search(node["pattern"], value):
            raise SchemaViolation(f"{at}: does not match {node['pattern']}")
        if isinstance(value, list):
            if len(value) < node.get("minItems", 0):
                raise SchemaViolation(f"{at}: too short")
            if node.get("uniqueItems") and len({json.dumps(v) for v in value}) < len(value):
                raise SchemaViolation(f"{at}: repeats an item")
            for index, item in enumerate(value):
                self.validate(item, node.get("items", {}), f"{at}[{index}]")
        if isinstance(value, dict):
            self._object(value, node, at)

    def _object(self, value: dict[str, Any], node: dict[str, Any], at: str) -> None:
        if len(value) < node.get("minProperties", 0):
            raise SchemaViolation(f"{at}: too few keys")
        for key in node.get("required", ()):
            if key not in value:
                raise SchemaViolation(f"{at}: misses {key}")
        properties = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        for key, item in value.items():
            if "propertyNames" in node:
                self.validate(key, node["propertyNames"], f"{at} key {key!r}")
            if key in properties:
                self.validate(item, properties[key], f"{at}.{key}")
            elif extra is False:
                raise SchemaViolation(f"{at}: unknown key {key!r}")
            elif isinstance(extra, dict):
                self.validate(item, extra, f"{at}.{key}")


def schema_errors(kind: schema.SchemaKind, value: Any) -> list[str]:
    document = json.loads((DATA / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:
        try:
            MiniValidator(document).validate(value)
        except SchemaViolation as exc:
            return [str(exc)]
        return []
    validator = jsonschema.Draft202012Validator(document)
    return [error.message for error in validator.iter_errors(value)]


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("needle-set", DATA / "needles.json"),
        ("expansion-set", DATA / "expansions.json"),
        *[("needle-set", p) for p in sorted(NEEDLE_FIXTURES.glob("valid_*.json"))],
        ("expansion-set", EXPANSION_FIXTURES / "good_small.json"),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else value,
)
def test_valid_files_validate_against_the_shipped_schema(kind, path):
    assert schema_errors(kind, json.loads(path.read_text(encoding="utf-8"))) == []


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("needle-set", "bad_top_level_array.json"),
        ("needle-set", "bad_schema_version.json"),
        ("needle-set", "bad_missing_name.json"),
        ("needle-set", "bad_unknown_top_key.json"),
        ("needle-set", "bad_empty_groups.json"),
        ("needle-set", "bad_group_not_object.json"),
        ("needle-set", "bad_wrong_type.json"),
        ("needle-set", "bad_empty_keywords.json"),
        ("needle-set", "bad_unknown_group_key.json"),
        ("needle-set", "bad_id_pattern.json"),
        ("needle-set", "bad_category_not_slug.json"),
        ("needle-set", "bad_missing_needle.json"),
        ("needle-set", "bad_unknown_needle_kind.json"),
        ("needle-set", "bad_placeholder_missing.json"),
        ("needle-set", "bad_placeholder_twice.json"),
        ("needle-set", "bad_stray_brace.json"),
        ("needle-set", "bad_names_empty.json"),
        ("needle-set", "bad_names_duplicate.json"),
        ("needle-set", "bad_names_wrong_type.json"),
        ("expansion-set", "bad_brace_term.json"),
        ("expansion-set", "bad_empty_list.json"),
        ("expansion-set", "bad_empty_term.json"),
        ("expansion-set", "bad_group_id.json"),
        ("expansion-set", "bad_missing_expansions.json"),
        ("expansion-set", "bad_not_object.json"),
        ("expansion-set", "bad_schema_version.json"),
        ("expansion-set", "bad_term_not_string.json"),
        ("expansion-set", "bad_terms_not_list.json"),
        ("expansion-set", "bad_unknown_key.json"),
    ],
)
def test_the_shipped_schema_refuses_what_it_can_express(kind, name):
    folder = NEEDLE_FIXTURES if kind == "needle-set" else EXPANSION_FIXTURES
    assert schema_errors(kind, json.loads((folder / name).read_text(encoding="utf-8")))


PATTERN_CHECKS = [
    (schema.SLUG_PATTERN, "_check_slug"),
    (schema.TEXT_PATTERN, "_check_text"),
    (schema.NAME_PATTERN, "_check_name"),
    (schema.TEMPLATE_PATTERN, "_check_template"),
    (schema.TERM_PATTERN, "_check_term"),
]
SAMPLE_TEXT = st.lists(st.sampled_from([*"ab09-_ {}\t\nZé", "{name}", "{Name}"]), max_size=10).map(
    "".join
)


@pytest.mark.parametrize(("pattern", "check"), PATTERN_CHECKS, ids=[c for _, c in PATTERN_CHECKS])
@given(value=SAMPLE_TEXT)
def test_schema_patterns_say_what_the_validators_say(pattern, check, value):
    try:
        getattr(schema_values, check)(value)
        accepted = True
    except Exception:
        accepted = False
    assert accepted == bool(re.search(pattern, value)), (pattern, value)
