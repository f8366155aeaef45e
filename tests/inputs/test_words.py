"""When two words are the same word: stems, derivations, and the leak audit's matcher."""

from __future__ import annotations

import re
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.errors import NeedleSetError
from pytest_niah.inputs.needles import NeedleGroup, builtin_needle_set
from pytest_niah.inputs.term_matcher import TermMatcher
from pytest_niah.inputs.words import (
    MIN_PREFIX_STEM,
    content_words,
    fold,
    matching_words,
    shared_content_words,
    stem,
    stems_match,
    words_of,
)

# --- the rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("sailor", "sail"),
        ("sailors", "sailing"),
        ("Peruvian", "Peru"),
        ("eruption", "erupt"),
        ("Japanese", "Japan"),
        ("swimmer", "swims"),
        ("arts", "art"),
        ("studies", "studied"),
    ],
)
def test_derivations_and_word_forms_match(first, second):
    assert shared_content_words(f"Which character likes {first}?", f"{{name}} and {second}.")
    assert shared_content_words(f"Which character likes {second}?", f"{{name}} and {first}.")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("assail", "sail"),  # what differs is a prefix: not a derivation by suffix
        ("artist", "art"),  # a stem of three letters matches only its own forms
        ("carpet", "car"),
        ("kept", "keeps"),  # irregular forms are other stems
        ("dog", "dachshund"),
    ],
)
def test_other_words_do_not_match(first, second):
    assert not shared_content_words(f"Which character likes {first}?", f"{{name}} and {second}.")


def test_stems_match_is_symmetric_and_needs_four_letters_for_a_prefix():
    assert stems_match("sail", "sailor") and stems_match("sailor", "sail")
    assert stems_match("art", "art")
    assert not stems_match("art", "artist")
    assert MIN_PREFIX_STEM == 4
    assert stems_match("peru", "peruvian")


def test_stems_are_porter2_and_memoised():
    assert stem("running") == "run"
    assert stem("japanese") == "japanes"
    stem.cache_clear()
    stem("sailors")
    stem("sailors")
    assert stem.cache_info().hits >= 1


def test_which_character_stays_allowed():
    # Function words and "character" are no content words, so every question may use them.
    assert content_words("Which character is the one who has been there?") == frozenset()
    assert not shared_content_words(
        "Which character has been to Peru?", "Which character is the one that {name} knows?"
    )


def test_matching_words_names_the_forms_on_both_sides():
    pairs = matching_words("Which character speaks Japanese?", "{name} grew up in Japan.")
    assert pairs == [("japanese", "japan")]


def test_stemming_is_thread_safe():
    words = [f"sailing{i}" for i in range(200)] + ["studies", "running", "peruvian"] * 50
    expected = [stem(w) for w in words]
    stem.cache_clear()
    results: list[list[str]] = []

    def work():
        results.append([stem(w) for w in words])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(result == expected for result in results)


# --- the leak audit's matcher ------------------------------------------------------------


def test_matcher_finds_forms_and_derivations_of_a_term():
    matcher = TermMatcher(["sail", "peru", "art"])
    assert matcher.find("The sailors came home.") == {"sail"}
    assert matcher.find("A Peruvian dish.") == {"peru"}
    assert matcher.find("SAILING!") == {"sail"}
    assert matcher.find("arts and crafts") == {"art"}
    assert matcher.find("sail, Peru and art") == {"sail", "peru", "art"}


@pytest.mark.parametrize("text", ["They assail the fort.", "An artist.", "A cartoon.", "", "..."])
def test_matcher_ignores_other_words(text):
    assert TermMatcher(["sail", "art"]).find(text) == set()


def test_matcher_finds_multi_word_terms_as_phrases_of_stems():
    matcher = TermMatcher(["machu picchu", "harley-davidson"])
    assert matcher.find("We climbed Machu Picchu at dawn.") == {"machu picchu"}
    assert matcher.find("machu  PICCHU") == {"machu picchu"}
    assert matcher.find("A Harley Davidson roared.") == {"harley-davidson"}
    assert matcher.find("Machu is a word; Picchu another.") == set()
    assert matcher.find("Picchu Machu") == set()
    assert matcher.find("machu") == set()


def test_matcher_leaves_roots_of_a_term_out_unless_asked():
    terms = ["longboard", "japanese", "cardiac"]
    text = "A long walk in Japan with a card."
    assert TermMatcher(terms).find(text) == set()
    assert TermMatcher(terms, roots=True).find(text) == {"longboard", "japanese", "cardiac"}
    assert TermMatcher(["art"], roots=True).find("an artist") == set()


def test_matcher_keeps_its_terms_and_is_reusable():
    matcher = TermMatcher(["sail", "sail", "", "!!", "Peru"])
    assert matcher.terms == ("sail", "Peru")
    assert bool(matcher) and not TermMatcher([])
    assert TermMatcher([]).find("sail") == set()
    for _ in range(3):
        assert matcher.find("peruvian sailors") == {"sail", "Peru"}
    assert "sail" in repr(matcher)


def test_matcher_finds_every_whole_word_the_old_regex_found():
    # The old audit: a case-insensitive whole-word regex of the terms. The matcher finds
    # at least those (and also word forms and derivations).
    terms = sorted({t for g in builtin_needle_set().groups for t in g.audit_terms})
    regex = re.compile(r"\b(" + "|".join(map(re.escape, terms)) + r")\b", re.IGNORECASE)
    matcher = TermMatcher(terms)
    for group in builtin_needle_set().groups:
        for _kind, _order, template in group.needles:
            text = template.replace("{name}", "Yuki")
            old = {m.group(1).lower() for m in regex.finditer(text)}
            assert old <= matcher.find(text), (text, old)


WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)


@given(st.lists(WORD, min_size=1, max_size=5), st.lists(WORD, max_size=30))
def test_matcher_agrees_with_the_rule_word_by_word(terms, words):
    matcher = TermMatcher(terms)
    expected = {
        term
        for term in terms
        for word in words
        if stem(word) == stem(term)
        or (len(stem(term)) >= MIN_PREFIX_STEM and stem(word).startswith(stem(term)))
    }
    assert matcher.find(" ".join(words)) == expected
    assert TermMatcher(terms, roots=True).find(" ".join(words)) == {
        term for term in terms for word in words if stems_match(stem(word), stem(term))
    }


def test_matcher_is_fast_enough_for_a_corpus():
    terms = sorted({t for g in builtin_needle_set().groups for t in g.audit_terms})
    matcher = TermMatcher(terms)
    snippet = (
        "It was a long voyage, and the sailors spoke of the colour of the sea, of ports "
        "and of spices, while the captain wrote in his log by the light of a lamp. "
    )
    snippets = [f"{snippet} Day {i} of {i % 97} weeks." for i in range(20_000)]
    start = time.perf_counter()
    hits = sum(bool(matcher.find(text)) for text in snippets)
    elapsed = time.perf_counter() - start
    assert hits == 0
    # About 30 us per snippet here; 100k snippets take a few seconds at most.
    assert elapsed < 10, elapsed


# --- compatibility forms (issue 23) ---------------------------------------------------


def fullwidth(text: str) -> str:
    """``text`` with every ASCII letter written in its fullwidth form (``pork`` -> ``ｐｏｒｋ``)."""
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isascii() and ch.isalpha() else ch for ch in text)


@pytest.mark.parametrize(
    ("needle_word", "question_word"),
    [
        (fullwidth("pork"), "pork"),  # fullwidth letters
        (fullwidth("PORK"), "pork"),  # fullwidth capitals: NFKC, then case-folded
        ("\ufb01sh", "fish"),  # the ligature fi
        ("ｓａｉｌｏｒｓ", "sail"),  # fullwidth, and a derivation
        ("\u24e2\u24d0\u24d8\u24db", "sail"),  # circled letters
        ("\U0001d42c\U0001d41a\U0001d422\U0001d425", "sail"),  # mathematical bold
        ("Ｐｅｒｕｖｉａｎ", "Peru"),
    ],
)
def test_compatibility_forms_are_the_word_they_stand_for(needle_word, question_word):
    question = f"Which character likes {question_word}?"
    assert shared_content_words(question, f"{{name}} has {needle_word} every day.")
    assert matching_words(f"{{name}} has {needle_word}.", question)


def test_a_onehop_needle_in_fullwidth_letters_breaks_the_one_hop_rule():
    group = builtin_needle_set().groups[0].to_dict()  # "Which character never eats pork?"
    group["needles"]["onehop"]["default"] = f"For years, {{name}} has avoided {fullwidth('pork')}."
    with pytest.raises(NeedleSetError) as info:
        NeedleGroup.from_dict(group)
    assert "needles.onehop.default" in str(info.value)
    assert "pork" in str(info.value)


def test_the_leak_audit_finds_a_term_in_compatibility_forms():
    matcher = TermMatcher(["kosher", "machu picchu"])
    assert matcher.find(f"a {fullwidth('Kosher')} kitchen") == {"kosher"}
    assert matcher.find(f"at {fullwidth('Machu')} Picchu") == {"machu picchu"}


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30))
def test_words_are_fixed_points_of_folding(text):
    # Folding twice changes nothing: a word found in folded text is already compared form.
    for word in words_of(text):
        assert fold(word) == word


def test_the_hidden_characters_of_a_text_are_named_once_each_in_order():
    # Found (fresh mutation draw 1863714026, words.py:153 `return None`): the list that
    # names what the model's reading drops was never checked by the module's tests.
    from pytest_niah.inputs.words import hidden_characters

    text = "tea\u200bpot\u00ade\u0301\u200b"
    assert hidden_characters(text) == [
        "U+200B ZERO WIDTH SPACE",
        "U+00AD SOFT HYPHEN",
        "U+0301 COMBINING ACUTE ACCENT",
    ]
    assert hidden_characters("plain tea") == []
