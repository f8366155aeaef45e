"""Needle sets from files (pytest_niah.inputs.needles).

Round trip, fingerprint, selection of groups, and malformed files.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.errors import InputError, NiahError
from pytest_niah.inputs.needles import (
    INPUT_SCHEMA_VERSION,
    NeedleGroup,
    NeedleSet,
    NeedleSetError,
    builtin_needle_set,
    load_needle_set,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "needles"
BUILTIN = builtin_needle_set()
GROUPS = BUILTIN.groups


# --- round trip, fingerprint, selection ---------------------------------------------


@pytest.fixture(scope="module")
def custom() -> NeedleSet:
    return load_needle_set(FIXTURES / "valid_custom.json")


def test_round_trip_builtin():
    again = NeedleSet.from_dict(BUILTIN.to_dict())
    assert again == BUILTIN
    assert again.fingerprint() == BUILTIN.fingerprint()
    assert hash(again) == hash(BUILTIN)


def test_round_trip_groups():
    for group in GROUPS:
        assert NeedleGroup.from_dict(group.to_dict()) == group


def test_round_trip_through_a_file(tmp_path: Path, custom: NeedleSet):
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(custom.to_dict()), encoding="utf-8")
    again = load_needle_set(path)
    assert again == custom
    assert again.source == str(path)
    assert again.fingerprint() == custom.fingerprint()


def test_fingerprint_is_stable_sha256_and_content_sensitive(custom: NeedleSet):
    fingerprint = custom.fingerprint()
    assert re.fullmatch(r"[0-9a-f]{64}", fingerprint)
    assert custom.fingerprint() == fingerprint
    assert load_needle_set(FIXTURES / "valid_custom.json").fingerprint() == fingerprint
    renamed = dataclasses.replace(custom, names=(*custom.names, "Ivo"))
    assert renamed.fingerprint() != fingerprint
    assert custom.select(["pet-01"]).fingerprint() != fingerprint


def test_custom_set_loads(custom: NeedleSet):
    assert custom.name == "pets"
    assert custom.source == str(FIXTURES / "valid_custom.json")
    assert custom.names == ("Tomas", "Aiko", "Nuno", "Zara")
    assert custom.categories == ("pet",)
    assert custom.description


def test_expansion_terms_are_optional(custom: NeedleSet):
    dog, parrot = custom.groups
    assert dog.expansion_terms == ("puppy", "hound", "canine companion")
    assert dog.to_dict()["expansion_terms"] == list(dog.expansion_terms)
    assert parrot.expansion_terms == ()
    assert "expansion_terms" not in parrot.to_dict()


def test_any_slug_id_and_a_category_of_its_own_load():
    # Ids were ^[a-z]+-[0-9]{2}$ with the category as prefix: "fast-food-01" was refused.
    slugs = load_needle_set(FIXTURES / "valid_slug_ids.json")
    assert slugs.ids == ("fast-food-01", "pets_3", "q7")
    assert slugs.categories == ("fast-food", "music", "pets")
    assert slugs.select(["fast-food"]).ids == ("fast-food-01",)
    assert slugs.select(["q7", "pets"]).ids == ("pets_3", "q7")
    assert NeedleSet.from_dict(slugs.to_dict()) == slugs


def test_custom_set_without_names_uses_builtin_names():
    assert load_needle_set(FIXTURES / "valid_without_names.json").names == BUILTIN.names


def test_keywords_are_normalized_to_lowercase(custom: NeedleSet):
    data = custom.groups[0].to_dict()
    data["keywords"] = [" DOG ", "dog"]
    assert NeedleGroup.from_dict(data).keywords == ("dog",)


def test_select_by_id_and_category():
    assert BUILTIN.select(["location-02"]).ids == ("location-02",)
    medical = BUILTIN.select(["medical"])
    assert medical.categories == ("medical",)
    assert len(medical.groups) == sum(g.category == "medical" for g in GROUPS)
    both = BUILTIN.select(["hobby-01", "location"])
    assert both.ids == tuple(g.id for g in GROUPS if g.id == "hobby-01" or g.category == "location")
    assert BUILTIN.select([" Dietary "]).categories == ("dietary",)
    assert BUILTIN.select("vehicle").categories == ("vehicle",)
    assert both.names == BUILTIN.names
    assert both.name == BUILTIN.name


@pytest.mark.parametrize("selectors", [None, [], (), [""]])
def test_select_nothing_keeps_everything(selectors):
    assert BUILTIN.select(selectors) == BUILTIN


def test_select_unknown_selector_lists_valid_choices():
    with pytest.raises(NeedleSetError) as info:
        BUILTIN.select(["location", "medicl"])
    message = str(info.value)
    assert "'medicl'" in message
    assert "did you mean 'medical'" in message
    assert "builtin" in message
    for category in BUILTIN.categories:
        assert category in message
    assert "dietary-01" in message


@given(st.sets(st.sampled_from([*BUILTIN.ids, *BUILTIN.categories]), max_size=6))
def test_select_keeps_exactly_the_matching_groups(selectors: set[str]):
    selected = BUILTIN.select(sorted(selectors))
    if not selectors:
        assert selected == BUILTIN
        return
    expected = [g.id for g in GROUPS if g.id in selectors or g.category in selectors]
    assert list(selected.ids) == expected


def test_group_lookup():
    assert BUILTIN.group("dietary-01").category == "dietary"
    with pytest.raises(KeyError, match="dietary-01"):
        BUILTIN.group("dietary-99")


def test_template_and_needle_reject_unknown_kind_or_bad_name():
    group = GROUPS[0]
    with pytest.raises(ValueError, match="kind"):
        group.template("twohop", "default")
    with pytest.raises(ValueError, match="order"):
        group.needle("onehop", "sideways", "Yuki")
    for bad in ("", "  ", "{name}", "Yu}ki"):
        with pytest.raises(ValueError, match="name"):
            group.needle("onehop", "default", bad)


def test_audit_terms_are_sorted_unique_lowercase():
    group = dataclasses.replace(GROUPS[0], keywords=("Pork", "pork"), answer_cues=("kosher",))
    assert group.audit_terms == ("kosher", "pork")


# --- malformed files ---------------------------------------------------------------

MALFORMED = [
    # (file, group id or None, field (the JSON path) or None, a phrase of the problem)
    ("bad_not_json.json", None, None, "line 60, column 1"),
    ("bad_not_utf8.json", None, None, "UTF-8"),
    ("bad_duplicate_key.json", None, "name", "appears twice"),
    ("bad_top_level_array.json", None, None, "JSON object"),
    ("bad_schema_version.json", None, "schema_version", "unsupported schema version 2"),
    ("bad_missing_schema_version.json", None, "schema_version", "missing"),
    ("bad_missing_name.json", None, "name", "missing"),
    ("bad_unknown_top_key.json", None, "group", "'groups'"),
    ("bad_empty_groups.json", None, "groups", "no groups"),
    ("bad_groups_not_array.json", None, "groups", "array"),
    ("bad_group_not_object.json", "groups[1]", None, "JSON object"),
    ("bad_missing_field.json", "pet-02", "groups[1].question", "missing"),
    ("bad_wrong_type.json", "pet-01", "groups[0].keywords", "got string"),
    ("bad_empty_keywords.json", "pet-01", "groups[0].keywords", "empty"),
    ("bad_unknown_group_key.json", "pet-02", "groups[1].answer_cue", "'answer_cues'"),
    ("bad_id_pattern.json", "groups[1]", "groups[1].id", "'Pet-2'"),
    ("bad_category_not_slug.json", "pet-02", "groups[1].category", "'Pet Birds' is not a slug"),
    ("bad_duplicate_id.json", "pet-01", "groups[1].id", "more than one group"),
    ("bad_missing_needle.json", "pet-02", "groups[1].needles.literal.inverted", "missing"),
    ("bad_unknown_needle_kind.json", "pet-02", "groups[1].needles.onehopp", "unknown key"),
    ("bad_placeholder_missing.json", "pet-02", "groups[1].needles.literal.inverted", "0 times"),
    ("bad_placeholder_twice.json", "pet-01", "groups[0].needles.onehop.default", "2 times"),
    ("bad_stray_brace.json", "pet-01", "groups[0].needles.literal.default", "stray brace"),
    ("bad_onehop_shares_word.json", "pet-01", "groups[0].needles.onehop.inverted", "dog, own"),
    ("bad_onehop_shares_stem.json", "pet-02", "groups[1].needles.onehop.default", "keep"),
    (
        "bad_onehop_shares_derivation.json",
        "sport-01",
        "groups[1].needles.onehop.default",
        "the needle has 'sailor' for 'sail'",
    ),
    ("bad_names_empty.json", None, "names", "empty array"),
    ("bad_names_duplicate.json", None, "names", "Tomas"),
    ("bad_names_wrong_type.json", None, "names", "got string"),
    ("bad_name_in_question.json", "city-01", "names[1]", "name 'Paris' matches the question"),
]


@pytest.mark.parametrize(
    ("filename", "group_id", "field", "phrase"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_malformed_file_names_file_group_and_field(filename, group_id, field, phrase):
    path = str(FIXTURES / filename)
    with pytest.raises(NeedleSetError) as info:
        load_needle_set(path)
    error = info.value
    message = str(error)
    assert path in message
    assert "Fix:" in message
    assert "\n" not in message
    assert phrase in message
    assert error.source == path
    assert error.group_id == group_id
    assert error.field == field
    if group_id is not None:
        assert f"group '{group_id}'" in message
    if field is not None:
        assert f"field '{field}'" in message


def test_every_malformed_fixture_is_covered():
    on_disk = {p.name for p in FIXTURES.glob("bad_*.json")}
    assert on_disk == {m[0] for m in MALFORMED}


def test_missing_file(tmp_path: Path):
    path = tmp_path / "nope.json"
    with pytest.raises(NeedleSetError, match="does not exist") as info:
        load_needle_set(path)
    assert str(path) in str(info.value)


def test_unreadable_path_is_a_directory(tmp_path: Path):
    with pytest.raises(NeedleSetError, match="cannot be read") as info:
        load_needle_set(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_utf8_bom_is_accepted(tmp_path: Path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "valid_custom.json").read_bytes())
    assert load_needle_set(path).name == "pets"


def test_dict_errors_name_the_dict_source():
    data = GROUPS[0].to_dict()
    data["needles"]["onehop"]["default"] = "{name} never eats pork at dinner."
    with pytest.raises(NeedleSetError) as info:
        NeedleGroup.from_dict(data)
    message = str(info.value)
    assert "'<dict>'" in message
    assert "group 'dietary-01'" in message
    assert "needles.onehop.default" in message
    assert "eat, pork" in message


def test_needle_set_error_is_a_niah_input_error():
    assert issubclass(NeedleSetError, InputError) and issubclass(NeedleSetError, NiahError)
    assert NeedleSetError("plain").field is None
    assert INPUT_SCHEMA_VERSION == 1
