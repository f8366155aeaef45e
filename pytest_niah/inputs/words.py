"""Words, stems and the rule that says when two words are "the same word".

Three checks rest on this module:

* the one-hop rule: a one-hop needle shares no content word with its question, and none
  of its words begins with one (:func:`gives_away`);
* the name rule: no character name is a word of a group's question, keywords or answer cues;
* the leak audit: a book snippet that mentions a group's keywords or answer cues is not
  used as haystack text (:class:`~pytest_niah.inputs.term_matcher.TermMatcher`).

Words are runs of letters/digits (so ``fish-based`` is two words), compatibility-normalised
and case-folded (:func:`fold`: fullwidth ``ｓａｉｌ`` and ligatures such as ``ﬁsh`` are the
words a tokenizer reads, ``sail`` and ``fish``), and reduced to their English (Porter2)
Snowball stem. Two words *match* (:func:`stems_match`)
when their stems are equal, or when the shorter stem has at least :data:`MIN_PREFIX_STEM`
letters and begins the longer one: a derivation by suffix. So ``sailor``/``sail``,
``Peruvian``/``Peru``, ``eruption``/``erupt`` and ``Japanese``/``Japan`` match, while
``assail`` does not match ``sail`` (what differs is a prefix, and a match never looks
inside a word) and ``artist`` does not match ``art`` (a stem of three letters or fewer
matches only its own forms: ``art``, ``arts``).

The rule errs on the side of matching: a compound such as ``grandmaster`` also matches
``grand``. For the one-hop and name rules that only makes them stricter. The leak audit
therefore uses it in one direction by default (see
:class:`~pytest_niah.inputs.term_matcher.TermMatcher`).
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from typing import Protocol, cast

import snowballstemmer

__all__ = [
    "MIN_PREFIX_STEM",
    "NAME_PLACEHOLDER",
    "content_forms",
    "content_words",
    "fold",
    "hidden_characters",
    "matching_words",
    "read_as_model",
    "shared_content_words",
    "stem",
    "stems_match",
    "words_of",
]

NAME_PLACEHOLDER = "{name}"
MIN_PREFIX_STEM = 4
"""The shortest stem that also matches the longer stems it begins (``peru`` -> ``peruvian``)."""
MIN_LEADING_WORD = 3  # the shortest question word a needle word may not begin with

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
# Unicode categories a tokenizer's normaliser drops: format characters, combining marks.
_DROPPED_CATEGORIES = frozenset({"Cf", "Mn"})
_LOCAL = threading.local()
# Enough for the vocabulary of a large corpus; stems are short strings.
_STEM_CACHE_SIZE = 1 << 18


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...


def _stemmer() -> _Stemmer:
    """The calling thread's English stemmer (a stemmer object is not thread-safe)."""
    stemmer = cast("_Stemmer | None", getattr(_LOCAL, "stemmer", None))
    if stemmer is None:
        stemmer = cast("_Stemmer", snowballstemmer.stemmer("english"))
        _LOCAL.stemmer = stemmer
    return stemmer


@functools.lru_cache(maxsize=_STEM_CACHE_SIZE)
def stem(word: str) -> str:
    """Return the English (Porter2) Snowball stem of one case-folded word."""
    return _stemmer().stemWord(word)


def stems_match(first: str, second: str) -> bool:
    """Say whether two stems are one word: equal, or a long-enough stem and its derivation.

    The shorter stem must have at least :data:`MIN_PREFIX_STEM` letters and begin the
    longer one (``sail`` begins ``sailor``); only a suffix may differ.
    """
    if first == second:
        return True
    short, long_ = (first, second) if len(first) <= len(second) else (second, first)
    return len(short) >= MIN_PREFIX_STEM and long_.startswith(short)


def fold(text: str) -> str:
    """``text`` as words are compared: NFKC-normalised and case-folded (Unicode's NFKC_Casefold).

    Compatibility forms become the letters they stand for (fullwidth ``ＳＡＩＬ``, ligature
    ``ﬁ``, superscript ``²``, circled ``ⓐ``), as a tokenizer's normaliser reads them; a
    needle written in them is the same word as its plain spelling.
    """
    if text.isascii():
        return text.casefold()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def read_as_model(text: str) -> str:
    """``text`` without the characters a tokenizer drops: format (Cf) and combining (Mn) marks.

    A zero-width space or soft hyphen inside ``dog``, or an accent combined onto its ``o``,
    is still ``dog`` to an uncased WordPiece tokenizer (MiniLM's); the one-hop rule reads
    needles this way so such a needle cannot hide a word of its question.
    """
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) not in _DROPPED_CATEGORIES)
    return unicodedata.normalize("NFKC", kept)


def hidden_characters(text: str) -> list[str]:
    """The format and combining characters of ``text`` that :func:`read_as_model` drops, named."""
    found = dict.fromkeys(
        c
        for c in unicodedata.normalize("NFKD", text)
        if unicodedata.category(c) in _DROPPED_CATEGORIES
    )
    return [f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in found]


def words_of(text: str) -> list[str]:
    """Return the words of a text, folded (:func:`fold`), in order (``{name}`` stays a word)."""
    return _WORD_RE.findall(fold(text))


def content_forms(text: str) -> dict[str, str]:
    """Map each content word's stem to its first form in the text (folded, :func:`fold`)."""
    lowered = fold(text).replace(NAME_PLACEHOLDER, " ")
    forms: dict[str, str] = {}
    for word in _WORD_RE.findall(lowered):
        if word not in _STOPWORDS:
            forms.setdefault(stem(word), word)
    return forms


def content_words(text: str) -> frozenset[str]:
    """Return the stemmed content words of a text.

    Words are runs of letters/digits (hyphenated words split), compared case-
    insensitively; English function words, the word "character" and the
    ``{name}`` placeholder are dropped, and each word is reduced to its stem.
    """
    return frozenset(content_forms(text))


def gives_away(asked: tuple[str, str], needle: tuple[str, str]) -> bool:
    """Whether a needle's word holds a question's word: each a ``(stem, folded word)``.

    The stems match (:func:`stems_match`), or the needle's word begins with the question's
    word or stem (:data:`MIN_LEADING_WORD` letters or more): ``doghouse``, ``dog2`` and
    ``dogwalker`` (``dog ##walker`` to MiniLM) begin with ``dog`` where reading starts.
    """
    if stems_match(asked[0], needle[0]):
        return True
    return any(len(p) >= MIN_LEADING_WORD and needle[1].startswith(p) for p in asked)


def matching_words(question: str, needle: str) -> list[tuple[str, str]]:
    """Return the question's content words that the needle gives away, as pairs.

    Returns:
        ``(word of the question, word of the needle)`` surface forms, case-folded, in the
        question's order; one pair per matching stem of the question (see
        :func:`gives_away`).
    """
    others = content_forms(read_as_model(needle))
    pairs = []
    for asked in content_forms(read_as_model(question)).items():
        for other in others.items():
            if gives_away(asked, other):
                pairs.append((asked[1], other[1]))
                break
    return pairs


def shared_content_words(question: str, needle: str) -> frozenset[str]:
    """Return the question's stemmed content words that a content word of the needle holds.

    Both are read as a model reads them (:func:`read_as_model`): hidden characters dropped;
    a needle word holds a question's word as :func:`gives_away` says.
    """
    needle_forms = content_forms(read_as_model(needle)).items()
    return frozenset(
        asked[0]
        for asked in content_forms(read_as_model(question)).items()
        if any(gives_away(asked, other) for other in needle_forms)
    )
