"""File formats: pydantic models, their published JSON Schemas, errors with fixes that work."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.inputs import schema, schema_values
from pytest_niah.inputs.expansions import ExpansionError, ExpansionSet, load_expansions
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, NeedleSetError, load_needle_set

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "pytest_niah" / "data"
NEEDLE_FIXTURES = REPO / "fixtures" / "needles"
EXPANSION_FIXTURES = REPO / "fixtures" / "expansions"
VALID = json.loads((NEEDLE_FIXTURES / "valid_custom.json").read_text(encoding="utf-8"))

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


# --- strict types ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "phrase"),
    [
        ({"name": 3}, "name", "expected a string, got number"),
        ({"schema_version": "1"}, "schema_version", "expected the number 1, got string '1'"),
        ({"schema_version": True}, "schema_version", "got boolean"),
        ({"schema_version": 1.0}, "schema_version", "got number"),
        ({"description": None}, "description", "expected a string, got null"),
        ({"names": ["Tomas", 7]}, "names[1]", "expected a string, got number"),
    ],
)
def test_no_value_is_coerced(change, field, phrase):
    data = {**copy.deepcopy(VALID), **change}
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert info.value.field == field
    assert phrase in str(info.value)


def test_group_values_are_not_coerced():
    group = copy.deepcopy(VALID["groups"][0])
    group["keywords"] = ["dog", 1]
    with pytest.raises(NeedleSetError, match="expected a string, got number") as info:
        NeedleGroup.from_dict(group)
    assert info.value.field == "keywords[1]"
    assert info.value.group_id == "pet-01"
    with pytest.raises(ExpansionError, match="expected a string, got boolean"):
        ExpansionSet.from_dict({"schema_version": 1, "name": "x", "expansions": {"a": [True]}})


def test_a_schema_key_for_editors_is_accepted_and_ignored(tmp_path):
    data = {"$schema": "../pytest_niah/data/schemas/needle-set.schema.json", **VALID}
    loaded = NeedleSet.from_dict(data)
    assert loaded == NeedleSet.from_dict(VALID)
    assert loaded.fingerprint() == NeedleSet.from_dict(VALID).fingerprint()
    assert "$schema" not in loaded.to_dict()
    expansions = json.loads((EXPANSION_FIXTURES / "good_small.json").read_text(encoding="utf-8"))
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"$schema": "expansion-set.schema.json", **expansions}))
    assert load_expansions(path).ids == ("dietary-01", "location-01")


def test_the_message_counts_the_other_problems():
    data = copy.deepcopy(VALID)
    data["name"] = 3
    data["groups"][0]["keywords"] = "dog"
    data["groups"][1]["question"] = ""
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert "(2 more problems in the file)" in str(info.value)
    del data["name"]
    data["nmae"] = "pets"
    data["groups"][0]["keywords"] = ["dog"]
    data["groups"][1]["question"] = "Which character keeps a parrot?"
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    # A misspelt key is one problem (an unknown key and a missing one), reported as a rename.
    assert "more problem" not in str(info.value)
    assert "rename it to 'name'" in str(info.value)
    assert info.value.field == "nmae"


# --- every fix a message suggests works ----------------------------------------------------------


def last_quoted(hint: str) -> str:
    return re.findall(r"""['"]([^'"]+)['"]""", hint)[-1]


def with_change(group: int, key: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    if value is DELETE:
        del data["groups"][group][key]
    else:
        data["groups"][group][key] = value
    return data


DELETE = object()

ID_AND_CATEGORY_CASES = {
    "id not a slug": (1, "id", "Pet-2", "pet-2"),
    "id with spaces": (1, "id", "Fast Food 1", "fast-food-1"),
    "id a number": (1, "id", 7, "pet-02"),
    "id empty": (1, "id", "", "pet-02"),
    "id only symbols": (1, "id", "!!!", "pet-02"),
    "id missing": (1, "id", DELETE, "pet-02"),
    "id duplicate": (1, "id", "pet-01", "pet-02"),
    "category not a slug": (1, "category", "Pet Birds", "pet-birds"),
    "category with hyphen and caps": (1, "category", "Fast-Food", "fast-food"),
    "category a number": (1, "category", 3, "pet"),
    "category empty": (1, "category", "", "pet"),
    "category missing": (1, "category", DELETE, "pet"),
}


@pytest.mark.parametrize("case", sorted(ID_AND_CATEGORY_CASES))
def test_the_suggested_id_or_category_makes_the_set_load(tmp_path, case):
    index, key, bad, suggested = ID_AND_CATEGORY_CASES[case]
    data = with_change(index, key, bad)
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(NeedleSetError) as info:
        load_needle_set(path)
    assert info.value.field == f"groups[{index}].{key}"
    value = last_quoted(info.value.hint)
    assert value == suggested
    data["groups"][index][key] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_needle_set(path).groups[index].to_dict()[key] == value


def test_the_suggested_id_is_free_and_the_category_need_not_be_its_prefix(tmp_path):
    # The old rule refused a hyphenated category, and refused its own suggested fix too.
    data = copy.deepcopy(VALID)
    data["groups"][0].update(id="fast-food-01", category="fast-food")
    data["groups"][1].update(id="fast-food-01", category="fast-food")
    data["groups"].append({**copy.deepcopy(VALID["groups"][1]), "id": "fast-food-02"})
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    suggested = last_quoted(info.value.hint)
    assert suggested == "fast-food-03"
    data["groups"][1]["id"] = suggested
    assert NeedleSet.from_dict(data).ids == ("fast-food-01", "fast-food-03", "fast-food-02")


def test_a_single_group_gets_a_suggestion_too():
    group = copy.deepcopy(VALID["groups"][0])
    group["id"] = "Dog Owner"
    with pytest.raises(NeedleSetError) as info:
        NeedleGroup.from_dict(group)
    assert info.value.field == "id"
    group["id"] = last_quoted(info.value.hint)
    assert NeedleGroup.from_dict(group).id == "dog-owner"


def test_the_suggested_expansion_group_id_makes_the_set_load():
    data = json.loads((EXPANSION_FIXTURES / "bad_group_id.json").read_text(encoding="utf-8"))
    with pytest.raises(ExpansionError) as info:
        ExpansionSet.from_dict(data)
    fixed = last_quoted(info.value.hint)
    data["expansions"] = {
        (fixed if key == "Location 1" else key): terms for key, terms in data["expansions"].items()
    }
    assert fixed in ExpansionSet.from_dict(data).ids


def apply_key_fix(data: Any, field: str, hint: str) -> None:
    """Do what the fix of an unknown key says: rename it, or remove it."""
    *parents, old = [p for p in re.split(r"\.|\[(\d+)\]", field) if p]
    target: Any = data
    for step in parents:
        target = target[int(step)] if step.isdigit() else target[step]
    rename = re.match(r"rename it to '([^']+)'", hint)
    if rename:
        target[rename.group(1)] = target.pop(old)
    else:
        assert hint.startswith("remove it"), hint
        del target[old]


def misspell(path: tuple[Any, ...], typo: str) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    target[typo] = target.pop(path[-1])
    return data


TYPOS = {
    "top-level": (("name",), "nmae", "nmae"),
    "groups": (("groups",), "group", "group"),
    "group": (("groups", 1, "answer_cues"), "answer_cue", "groups[1].answer_cue"),
    "needle kind": (("groups", 0, "needles", "onehop"), "onehopp", "groups[0].needles.onehopp"),
    "needle order": (
        ("groups", 1, "needles", "literal", "default"),
        "defualt",
        "groups[1].needles.literal.defualt",
    ),
}


@pytest.mark.parametrize("case", sorted(TYPOS))
def test_the_suggested_rename_of_a_misspelt_key_makes_the_set_load(case):
    path, typo, field = TYPOS[case]
    data = misspell(path, typo)
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert info.value.field == field
    assert info.value.hint.startswith(f"rename it to '{path[-1]}'")
    apply_key_fix(data, info.value.field, info.value.hint)
    assert NeedleSet.from_dict(data) == NeedleSet.from_dict(VALID)


@pytest.mark.parametrize(
    "name",
    [
        "bad_unknown_group_key.json",
        "bad_unknown_needle_kind.json",
        "bad_unknown_top_key.json",
        "expansions/bad_unknown_key.json",
        "robustness/bad_top_level_typo.json",
    ],
)
def test_the_fix_of_an_unknown_key_in_a_fixture_makes_it_load(name):
    folder, _, name = name.rpartition("/")
    folder = {"": NEEDLE_FIXTURES, "expansions": EXPANSION_FIXTURES}.get(
        folder, REPO / "fixtures" / "robustness" / "needles"
    )
    loader = ExpansionSet.from_dict if folder == EXPANSION_FIXTURES else NeedleSet.from_dict
    data = json.loads((folder / name).read_text(encoding="utf-8"))
    with pytest.raises((NeedleSetError, ExpansionError)) as info:
        loader(data)
    apply_key_fix(data, info.value.field, info.value.hint)
    loader(data)


def test_an_unknown_key_beside_the_key_it_resembles_is_to_be_removed():
    data = json.loads((NEEDLE_FIXTURES / "bad_unknown_top_key.json").read_text(encoding="utf-8"))
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert info.value.hint.startswith("remove it ('groups' is there already)")


# --- the names rule ----------------------------------------------------------------------------


def test_a_name_that_is_a_word_of_a_question_is_refused():
    data = copy.deepcopy(VALID)
    data["names"] = ["Tomas", "Parrot"]
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert info.value.group_id == "pet-02"
    assert info.value.field == "names[1]"
    assert "'Parrot' matches the question word 'parrot'" in str(info.value)
    assert "remove 'Parrot' from names" in info.value.hint
    data["names"] = ["Tomas"]
    assert NeedleSet.from_dict(data).names == ("Tomas",)


@pytest.mark.parametrize(
    ("name", "what", "word"),
    [
        ("Dachshunds", "answer cue", "dachshund"),  # a form of an answer cue
        ("Cockatoo", "answer cue", "cockatoo"),
        ("Dogsley", "question", "dog"),  # shares no stem... but "dog" is 3 letters: exact only
    ],
)
def test_names_are_compared_by_stem(name, what, word):
    data = copy.deepcopy(VALID)
    data["names"] = ["Tomas", name]
    if name == "Dogsley":
        assert NeedleSet.from_dict(data).names == ("Tomas", name)
        return
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert f"the {what} word '{word}'" in str(info.value)


def test_builtin_names_used_by_a_set_without_names_are_checked_too():
    data = copy.deepcopy(VALID)
    del data["names"]
    data["groups"][1]["question"] = "Which character has met Yuki?"
    data["groups"][1]["keywords"] = ["yuki"]
    data["groups"][1]["needles"]["literal"] = {
        "default": "{name} has met Yuki twice.",
        "inverted": "Yuki has been met twice by {name}.",
    }
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert info.value.field == "names"
    assert "the built-in name 'Yuki'" in str(info.value)
    assert 'add a "names" array' in info.value.hint
