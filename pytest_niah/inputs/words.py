"""Content words of a question or needle: what the one-hop check compares.

Words are runs of letters/digits, case-folded, function words dropped, lightly stemmed:
a one-hop needle must share none of its question's content words.
"""

from __future__ import annotations

import re

NAME_PLACEHOLDER = "{name}"

# Function words only: a stopword list that is too generous would let one-hop
# needles quietly share meaningful words with their question.
_STOPWORD_TEXT = """
    a an the
    i me my mine myself you your yours yourself he him his himself she her hers herself
    it its itself we us our ours ourselves they them their theirs themselves
    who whom whose which what that this these those
    someone somebody something anyone anybody anything everyone everybody everything
    no one none nobody nothing
    be is am are was were been being have has had having do does did doing done
    can cannot could will would shall should may might must ought
    t s d ll re ve m
    not never
    at by for from in into of on onto to with without about above after before below
    between during over under through since until till up down out off near next past
    per via upon within across against among around behind beyond toward towards
    and or but nor so yet if then than as because while when where whether also
    very too just only even ever every each all any some such much many more most
    there here how why
    character characters
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_WORD_RE = re.compile(r"[^\W_]+")
_DOUBLE_CONSONANT_RE = re.compile(r"([bcdfghjkmnpqrtvwxy])\1$")


def _stem(word: str) -> str:
    """Reduce a lowercase word with a light, conservative suffix stripper.

    Both sides of a comparison go through the same function, so over-merging only
    makes the one-hop check stricter; it never hides a shared word.
    """
    stem = _strip_verbal(_strip_plural(word))
    # "dive"/"diving", "practice"/"practices" meet at "div"/"practic".
    if len(stem) > 3 and stem.endswith("e"):
        stem = stem[:-1]
    return stem


def _strip_plural(word: str) -> str:
    """Strip a plural or third-person -s/-es ("studies" -> "study", "boxes" -> "box")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if len(word) >= 5 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2]
    if len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _strip_verbal(word: str) -> str:
    """Strip -ied/-ing/-ed/-ly, keeping at least three letters of the stem."""
    if len(word) > 4 and word.endswith("ied"):
        return word[:-3] + "y"
    if len(word) >= 6 and word.endswith("ing"):
        return _undouble(word[:-3])
    if len(word) >= 5 and word.endswith("ed"):
        return _undouble(word[:-2])
    if len(word) >= 6 and word.endswith("ly"):
        return word[:-2]
    return word


def _undouble(stem: str) -> str:
    """Drop a doubled final consonant left by -ing/-ed ("running" -> "run")."""
    return stem[:-1] if _DOUBLE_CONSONANT_RE.search(stem) else stem


def content_words(text: str) -> frozenset[str]:
    """Return the stemmed content words of a text.

    Words are runs of letters/digits (hyphenated words split), compared case-
    insensitively; English function words, the word "character" and the
    ``{name}`` placeholder are dropped, and each word is lightly stemmed.
    """
    lowered = text.casefold().replace(NAME_PLACEHOLDER, " ")
    return frozenset(_stem(w) for w in _WORD_RE.findall(lowered) if w not in _STOPWORDS)


def shared_content_words(question: str, needle: str) -> frozenset[str]:
    """Return the stemmed content words that a question and a needle have in common."""
    return content_words(question) & content_words(needle)
