"""The built-in needle set and content words (pytest_niah.inputs.needles).

Custom sets, their files and their errors are tested in test_needle_files.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.inputs.needles import (
    NAME_PLACEHOLDER,
    NEEDLE_KINDS,
    NEEDLE_ORDERS,
    NeedleGroup,
    builtin_needle_set,
    content_words,
    load_needle_set,
    shared_content_words,
)

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
