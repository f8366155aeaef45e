from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest

from pytest_niah.errors import InputError, NiahError
from pytest_niah.inputs.expansions import (
    EXPANSION_SIZES,
    INPUT_SCHEMA_VERSION,
    ExpansionError,
    ExpansionSet,
    arm_size,
    builtin_expansions,
    load_expansions,
)
from pytest_niah.inputs.needles import builtin_needle_set

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "expansions"
DATA_FILE = Path(__file__).resolve().parents[2] / "pytest_niah" / "data" / "expansions.json"
NEEDLES = builtin_needle_set()
EXPANSIONS = builtin_expansions()
GROUPS = NEEDLES.groups
NAMES = frozenset(name.casefold() for name in NEEDLES.names)


def words_of(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.casefold())


def by_group(test):
    return pytest.mark.parametrize("group", GROUPS, ids=[g.id for g in GROUPS])(test)


# --- the built-in set ------------------------------------------------------------------


def test_builtin_covers_exactly_the_builtin_needle_groups():
    assert set(EXPANSIONS.ids) == set(NEEDLES.ids)
    assert EXPANSIONS.ids == NEEDLES.ids  # same order too, for readable files
    assert EXPANSIONS.name == "builtin"
    assert EXPANSIONS.source == "builtin"


def test_builtin_file_is_the_schema_shape():
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    assert set(data) == {"schema_version", "name", "description", "expansions"}
    assert data["schema_version"] == INPUT_SCHEMA_VERSION
    assert data["description"].strip()
    assert EXPANSIONS.to_dict() == data


@by_group
def test_builtin_group_has_enough_terms(group):
    assert len(EXPANSIONS.terms_for(group.id)) >= max(EXPANSION_SIZES)


@by_group
def test_builtin_terms_are_unique_case_insensitively(group):
    terms = EXPANSIONS.terms_for(group.id)
    folded = [t.casefold() for t in terms]
    repeated = sorted({t for t in folded if folded.count(t) > 1})
    assert not repeated


@by_group
def test_builtin_terms_are_short_plain_phrases(group):
    for term in EXPANSIONS.terms_for(group.id):
        assert term == term.strip() and term, term
        assert "{" not in term and "}" not in term, term
        assert ";" not in term, term  # the separator of expanded queries
        assert 1 <= len(term.split()) <= 4, term


@by_group
def test_builtin_terms_name_no_character(group):
    for term in EXPANSIONS.terms_for(group.id):
        assert not NAMES & set(words_of(term)), term


@by_group
def test_builtin_terms_copy_no_needle_sentence(group):
    # No term may repeat four consecutive words of any of the group's needles.
    spans: set[str] = set()
    for _kind, _order, template in group.needles:
        words = words_of(template.replace("{name}", " "))
        spans.update(" ".join(words[i : i + 4]) for i in range(len(words) - 3))
    for term in EXPANSIONS.terms_for(group.id):
        assert " ".join(words_of(term)) not in spans, term


@by_group
def test_builtin_terms_are_mostly_lowercase(group):
    # Proper nouns and acronyms are capitalised; a term that is not must start lowercase.
    terms = EXPANSIONS.terms_for(group.id)
    lower = sum(term[0].islower() or not term[0].isalpha() for term in terms)
    assert lower >= len(terms) // 4


@by_group
def test_builtin_expansions_lead_with_the_topic(group):
    # The best short expansion names the question's key word or the one-hop answer.
    head = " ".join(EXPANSIONS.terms_for(group.id)[:10]).casefold()
    cues = (*group.keywords, *group.answer_cues)
    assert any(cue in head for cue in cues), (group.id, cues)


@by_group
def test_builtin_expand_sizes_are_nested_prefixes(group):
    expanded = {size: EXPANSIONS.expand(group.question, group.id, size) for size in EXPANSION_SIZES}
    lists = {}
    for size, text in expanded.items():
        assert text.startswith(group.question + " ")
        lists[size] = text[len(group.question) + 1 :].split("; ")
        assert len(lists[size]) == size
    assert lists[100] == list(EXPANSIONS.terms_for(group.id)[:100])
    assert lists[150][:100] == lists[100]
    assert lists[250][:150] == lists[150]


def test_builtin_is_cached_and_loadable_by_name():
    assert builtin_expansions() is EXPANSIONS
    assert load_expansions() is EXPANSIONS
    assert load_expansions("builtin") is EXPANSIONS


def test_builtin_loaded_from_its_path_has_the_same_fingerprint():
    from_path = load_expansions(DATA_FILE)
    assert from_path == EXPANSIONS
    assert from_path.source == str(DATA_FILE)
    assert from_path.fingerprint() == EXPANSIONS.fingerprint()


# --- expand and terms_for --------------------------------------------------------------


def small_set() -> ExpansionSet:
    return ExpansionSet.from_dict(
        {
            "schema_version": 1,
            "name": "small",
            "expansions": {"dietary-01": ["pork", "kosher", "halal"], "hobby-01": ["chess"]},
        }
    )


def test_expand_joins_the_first_terms():
    assert small_set().expand("Which one?", "dietary-01", 2) == "Which one? pork; kosher"
    assert small_set().expand("Which one?", "dietary-01", 3) == "Which one? pork; kosher; halal"


def test_expand_with_too_few_terms_names_group_count_and_size():
    with pytest.raises(ExpansionError) as info:
        small_set().expand("Which one?", "hobby-01", 100)
    message = str(info.value)
    assert "hobby-01" in message and "1 expansion terms" in message and "100" in message
    assert info.value.group_id == "hobby-01"


@pytest.mark.parametrize("size", [0, -5, True, 2.0, "100"])
def test_expand_rejects_a_size_that_is_not_a_positive_int(size):
    with pytest.raises(ExpansionError, match="positive integer"):
        small_set().expand("Which one?", "dietary-01", size)


def test_terms_for_unknown_group_is_a_helpful_key_error():
    with pytest.raises(KeyError) as info:
        small_set().terms_for("dietary-02")
    message = str(info.value)
    assert "dietary-02" in message and "dietary-01" in message and "hobby-01" in message
    with pytest.raises(KeyError):
        small_set().expand("Which one?", "nope-01", 1)


def test_terms_are_read_only_tuples():
    expansion_set = small_set()
    assert expansion_set.terms_for("dietary-01") == ("pork", "kosher", "halal")
    with pytest.raises(TypeError):
        expansion_set.terms["dietary-01"] = ("x",)  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        expansion_set.name = "other"  # type: ignore[misc]


def test_terms_are_copied_from_the_caller():
    source = {"dietary-01": ["pork", "kosher"]}
    expansion_set = ExpansionSet(name="x", source="<dict>", terms=source)
    source["dietary-01"].append("halal")
    assert expansion_set.terms_for("dietary-01") == ("pork", "kosher")


def test_sets_are_hashable_and_compare_without_source():
    a = small_set()
    b = ExpansionSet.from_dict(a.to_dict(), source="elsewhere.json")
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1


# --- round trip and fingerprint ----------------------------------------------------------


def test_to_dict_from_dict_round_trip():
    data = EXPANSIONS.to_dict()
    again = ExpansionSet.from_dict(data)
    assert again == EXPANSIONS
    assert again.to_dict() == data
    assert again.source == "<dict>"


def test_to_dict_returns_fresh_lists():
    data = small_set().to_dict()
    data["expansions"]["dietary-01"].append("changed")
    assert small_set().to_dict()["expansions"]["dietary-01"] == ["pork", "kosher", "halal"]


def test_from_dict_strips_terms():
    data = {"schema_version": 1, "name": "s", "expansions": {"dietary-01": ["  pork "]}}
    assert ExpansionSet.from_dict(data).terms_for("dietary-01") == ("pork",)


def test_fingerprint_is_stable_and_content_sensitive():
    fingerprint = EXPANSIONS.fingerprint()
    assert re.fullmatch(r"[0-9a-f]{64}", fingerprint)
    assert fingerprint == EXPANSIONS.fingerprint()
    assert fingerprint == ExpansionSet.from_dict(EXPANSIONS.to_dict()).fingerprint()
    data = EXPANSIONS.to_dict()
    first = next(iter(data["expansions"]))
    terms = data["expansions"][first]
    terms[0], terms[1] = terms[1], terms[0]  # order is content: it defines the prefixes
    assert ExpansionSet.from_dict(data).fingerprint() != fingerprint


def test_fingerprint_of_small_set_is_pinned():
    # Pinned so that an accidental change of the canonical form shows up here.
    canonical = json.dumps(
        small_set().to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert small_set().fingerprint() == hashlib.sha256(canonical.encode()).hexdigest()
    assert small_set().fingerprint() == (
        "1c4740f9eaa4662a51e39894f218e2cf5706ee7f69f2d1327065b60b8c1b6565"
    )


# --- loading files ---------------------------------------------------------------------


def test_load_good_fixture():
    path = FIXTURES / "good_small.json"
    loaded = load_expansions(path)
    assert loaded.name == "small"
    assert loaded.ids == ("dietary-01", "location-01")
    assert loaded.terms_for("location-01") == ("Peru", "Machu Picchu", "Cusco")
    assert loaded.source == str(path)
    assert load_expansions(str(path)) == loaded


GROUP_FIXTURES = {
    "bad_terms_not_list.json": ("dietary-01", "array of terms"),
    "bad_empty_list.json": ("dietary-02", "empty"),
    "bad_empty_term.json": ("medical-01", "non-empty string"),
    "bad_term_not_string.json": ("medical-02", "expected a string, got number"),
    "bad_duplicate_terms.json": ("language-01", "duplicate terms"),
    "bad_brace_term.json": ("hobby-01", "brace"),
    "bad_duplicate_group.json": ("vehicle-01", "appears twice"),
    "bad_group_id.json": ("Location 1", "'Location 1' is not a slug"),
}

TOP_FIXTURES = {
    "bad_not_json.json": (None, "not valid JSON"),
    "bad_schema_version.json": ("schema_version", "unsupported schema version 2"),
    "bad_not_object.json": (None, "JSON object"),
    "bad_missing_expansions.json": ("expansions", "missing"),
    "bad_unknown_key.json": ("expansion", "rename it to 'expansions'"),
}


def test_every_bad_fixture_is_covered():
    on_disk = {p.name for p in FIXTURES.glob("bad_*.json")}
    assert on_disk == set(GROUP_FIXTURES) | set(TOP_FIXTURES)


@pytest.mark.parametrize("filename", sorted(GROUP_FIXTURES))
def test_bad_group_fixture_names_file_and_group(filename):
    group_id, problem = GROUP_FIXTURES[filename]
    path = FIXTURES / filename
    with pytest.raises(ExpansionError) as info:
        load_expansions(path)
    message = str(info.value)
    assert str(path) in message
    assert f"group '{group_id}'" in message
    assert problem in message
    assert "Fix:" in message
    assert info.value.source == str(path)
    assert info.value.group_id == group_id
    assert info.value.field is not None and info.value.field.startswith("expansions")


@pytest.mark.parametrize("filename", sorted(TOP_FIXTURES))
def test_bad_top_level_fixture_names_file_and_field(filename):
    field, problem = TOP_FIXTURES[filename]
    path = FIXTURES / filename
    with pytest.raises(ExpansionError) as info:
        load_expansions(path)
    message = str(info.value)
    assert str(path) in message and problem in message and "Fix:" in message
    assert info.value.field == field
    if field is not None:
        assert f"field '{field}'" in message


def test_duplicate_terms_are_all_named():
    data = {
        "schema_version": 1,
        "name": "d",
        "expansions": {"hobby-02": ["PADI", "reef", "padi", "Reef", "wreck"]},
    }
    with pytest.raises(ExpansionError) as info:
        ExpansionSet.from_dict(data)
    message = str(info.value)
    assert "'padi' (items 0 and 2)" in message and "'Reef' (items 1 and 3)" in message
    assert "'<dict>'" in message


def test_missing_file_is_an_expansion_error(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(ExpansionError, match="does not exist") as info:
        load_expansions(path)
    assert str(path) in str(info.value)


def test_directory_is_an_expansion_error(tmp_path):
    with pytest.raises(ExpansionError, match="cannot be read"):
        load_expansions(tmp_path)


def test_non_utf8_file_is_an_expansion_error(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('{"name": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(ExpansionError, match="UTF-8"):
        load_expansions(path)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"schema_version": True}, "schema_version"),
        ({"name": ""}, "name"),
        ({"name": 3}, "name"),
        ({"description": ["x"]}, "description"),
        ({"expansions": []}, "expansions"),
        ({"expansions": {}}, "expansions"),
    ],
)
def test_top_level_field_errors(change, field):
    data = {"schema_version": 1, "name": "s", "expansions": {"dietary-01": ["pork"]}}
    data.update(change)
    with pytest.raises(ExpansionError) as info:
        ExpansionSet.from_dict(data)
    assert info.value.field == field
    assert f"field '{field}'" in str(info.value)


def test_expansion_error_is_a_niah_input_error():
    assert issubclass(ExpansionError, InputError) and issubclass(ExpansionError, NiahError)


# --- arms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arm", "size"),
    [
        ("expand100", 100),
        ("expand150", 150),
        ("expand250", 250),
        ("expand1", 1),
        ("expand42", 42),
        ("onehop", None),
        ("literal", None),
    ],
)
def test_arm_size(arm, size):
    assert arm_size(arm) == size


@pytest.mark.parametrize(
    "arm", ["expand0", "expand", "expand-5", "expand1.5", "expand010", "Expand100", "foo", ""]
)
def test_arm_size_rejects_unknown_arms(arm):
    with pytest.raises(ValueError, match="expandN"):
        arm_size(arm)


def test_study_sizes_match_the_study_arms():
    assert EXPANSION_SIZES == (100, 150, 250)
    assert tuple(arm_size(f"expand{n}") for n in EXPANSION_SIZES) == EXPANSION_SIZES
