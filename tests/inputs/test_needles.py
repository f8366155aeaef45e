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
    NAME_PLACEHOLDER,
    NEEDLE_KINDS,
    NEEDLE_ORDERS,
    NeedleGroup,
    NeedleSet,
    NeedleSetError,
    builtin_needle_set,
    content_words,
    load_needle_set,
    shared_content_words,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "needles"
DATA_FILE = Path(__file__).resolve().parents[2] / "pytest_niah" / "data" / "needles.json"
BUILTIN = builtin_needle_set()
GROUPS = BUILTIN.groups
STUDY_CATEGORIES = ("dietary", "medical", "language", "profession", "location")
ID_RE = re.compile(r"^[a-z]+-[0-9]{2}$")
KINDS_ORDERS = [(kind, order) for kind in NEEDLE_KINDS for order in NEEDLE_ORDERS]
SAMPLE_STOPWORDS = ("the", "a", "which", "character", "is", "has", "been", "to", "of", "not")


def words_of(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def by_group(test):
    return pytest.mark.parametrize("group", GROUPS, ids=[g.id for g in GROUPS])(test)


# --- the built-in set ------------------------------------------------------------------


def test_builtin_has_enough_groups_and_categories():
    assert len(GROUPS) >= 26
    assert set(STUDY_CATEGORIES) <= set(BUILTIN.categories)
    assert len(BUILTIN.categories) >= 6
    for category in BUILTIN.categories:
        assert sum(g.category == category for g in GROUPS) >= 4, category


def test_builtin_names_are_many_unique_single_words():
    names = BUILTIN.names
    assert len(names) >= 64
    assert len(set(names)) == len(names)
    assert all(n.isascii() and n.isalpha() and n[0].isupper() for n in names)


def test_builtin_names_collide_with_no_audit_term_or_stopword():
    terms = {t for g in GROUPS for t in g.audit_terms}
    lowered = {n.lower() for n in BUILTIN.names}
    assert not lowered & terms
    assert all(content_words(n) for n in BUILTIN.names), "a name is a stopword"


def test_builtin_ids_are_unique_and_match_pattern():
    ids = [g.id for g in GROUPS]
    assert len(set(ids)) == len(ids)
    for group in GROUPS:
        assert ID_RE.match(group.id)
        assert group.id.rsplit("-", 1)[0] == group.category


@by_group
def test_onehop_needle_shares_no_content_word_with_question(group: NeedleGroup):
    for order in NEEDLE_ORDERS:
        assert shared_content_words(group.question, group.template("onehop", order)) == set()


@by_group
def test_literal_needle_uses_the_question_key_words(group: NeedleGroup):
    for order in NEEDLE_ORDERS:
        template = group.template("literal", order)
        assert shared_content_words(group.question, template)
        assert set(group.keywords) <= set(words_of(template))


@by_group
def test_needles_are_one_sentence_with_one_placeholder(group: NeedleGroup):
    for kind, order in KINDS_ORDERS:
        template = group.template(kind, order)
        assert template.count(NAME_PLACEHOLDER) == 1
        assert template.endswith(".")
        assert not re.search(r"[.!?]", template[:-1])
        assert 6 <= len(template.split()) <= 20


def term_before_name(template: str, terms: tuple[str, ...]) -> bool:
    name_at = template.lower().index(NAME_PLACEHOLDER)
    hits = [m.start() for m in re.finditer(r"[^\W_]+", template.lower()) if m.group() in terms]
    return hits[0] < name_at


@by_group
def test_inverted_needle_turns_the_word_order_around(group: NeedleGroup):
    # The answer's key term (cue or keyword) moves to the other side of the name.
    for kind, terms in (("onehop", group.answer_cues), ("literal", group.keywords)):
        default = term_before_name(group.template(kind, "default"), terms)
        inverted = term_before_name(group.template(kind, "inverted"), terms)
        assert default != inverted, kind


@by_group
def test_question_form_and_audit_terms(group: NeedleGroup):
    assert group.question.startswith("Which character ")
    assert group.question.endswith("?")
    assert set(group.keywords) <= set(words_of(group.question))
    assert group.answer_cues
    for order in NEEDLE_ORDERS:
        assert set(group.answer_cues) & set(words_of(group.template("onehop", order)))
    for term in group.audit_terms:
        assert term == term.lower()
        assert content_words(term), f"{term!r} is a stopword"


def test_no_two_groups_share_answer_cues_or_keywords():
    seen: dict[str, str] = {}
    for group in GROUPS:
        for term in group.audit_terms:
            assert term not in seen, f"{term!r} in {seen.get(term)} and {group.id}"
            seen[term] = group.id


def test_no_needle_mentions_another_group_key_words():
    # Keeps each group's answer distinct: no needle answers another group literally.
    for group in GROUPS:
        for other in GROUPS:
            if other is group:
                continue
            for kind, order in KINDS_ORDERS:
                words = set(words_of(other.template(kind, order)))
                assert not set(group.audit_terms) & words, (group.id, other.id, kind, order)


def test_builtin_is_cached_and_loadable_by_name():
    assert builtin_needle_set() is BUILTIN
    assert load_needle_set() is BUILTIN
    assert load_needle_set("builtin") is BUILTIN
    assert BUILTIN.source == "builtin"
    assert BUILTIN.name == "builtin"


def test_builtin_data_file_is_canonical():
    # The shipped file holds exactly what to_dict() writes: nothing is normalized away.
    assert json.loads(DATA_FILE.read_text(encoding="utf-8")) == BUILTIN.to_dict()


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


# --- content words -------------------------------------------------------------------


@pytest.mark.parametrize(
    "forms",
    [
        ("eat", "eats", "eating"),
        ("dive", "dives", "diving", "dived"),
        ("study", "studies", "studied"),
        ("run", "runs", "running"),
        ("practice", "practices", "practiced"),
        ("box", "boxes"),
        ("strict", "strictly"),
    ],
)
def test_stemmer_merges_word_forms(forms):
    assert len({content_words(form) for form in forms}) == 1


def test_content_words_drop_stopwords_placeholder_and_split_hyphens():
    assert content_words("Which character has been to the") == frozenset()
    assert content_words("{name} swims") == content_words("swims")
    assert content_words("fish-based meals") == content_words("fish based meals")
    assert content_words("Lisbon") == {"lisbon"}
    assert shared_content_words("Which character eats pork?", "{name} was eating pork") == {
        "eat",
        "pork",
    }


TEXT_ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0189 -,.?'")
)
WORDS = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10))


@given(st.text(alphabet=TEXT_ALPHABET, max_size=80))
def test_content_words_are_case_insensitive(text: str):
    assert content_words(text.upper()) == content_words(text) == content_words(text.swapcase())


@given(WORDS, st.lists(st.sampled_from(SAMPLE_STOPWORDS)), st.randoms())
def test_content_words_ignore_stopwords(words, stopwords, rnd):
    mixed = [*words, *stopwords]
    rnd.shuffle(mixed)
    assert content_words(" ".join(mixed)) == content_words(" ".join(words))


@given(WORDS, st.integers(min_value=0, max_value=20))
def test_content_words_ignore_the_placeholder(words, where):
    with_name = [*words[:where], NAME_PLACEHOLDER, *words[where:]]
    assert content_words(" ".join(with_name)) == content_words(" ".join(words))


@st.composite
def filled_needles(draw):
    group = draw(st.sampled_from(GROUPS))
    kind = draw(st.sampled_from(NEEDLE_KINDS))
    order = draw(st.sampled_from(NEEDLE_ORDERS))
    template = group.template(kind, order)
    name = draw(
        st.one_of(
            st.sampled_from(BUILTIN.names), st.from_regex(r"[A-Z][a-z]{1,11}", fullmatch=True)
        ).filter(lambda n: n.lower() not in template.lower())
    )
    return group, kind, order, template, name


@given(filled_needles())
def test_needle_contains_the_name_once_and_no_braces(case):
    group, kind, order, template, name = case
    text = group.needle(kind, order, name)
    assert text.count(name) == 1
    assert "{" not in text
    assert "}" not in text
    before, after = template.split(NAME_PLACEHOLDER)
    assert text == before + name + after
