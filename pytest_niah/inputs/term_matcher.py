"""Which of a fixed list of terms a text mentions, by the same-word rule (the leak audit)."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_niah.inputs.words import MIN_PREFIX_STEM, stem, words_of

# The matcher's word cache is dropped (and refilled) beyond this many distinct words.
_MATCHER_CACHE_SIZE = 1 << 19


class TermMatcher:
    """Find which of a fixed list of terms a text mentions, by stem (the leak audit).

    A word of the text mentions a one-word term when its stem equals the term's stem, or
    is a derivation of it: the term's stem has at least :data:`MIN_PREFIX_STEM` letters
    and begins the word's stem (term ``sail``: ``sailors``, ``sailing``; term ``peru``:
    ``Peruvian``). Words are runs of letters/digits, so a term is never found inside a
    word (``assail`` does not mention ``sail``), and a term of three letters or fewer
    matches only its own forms (``art``: ``art``, ``arts``, not ``artist``). A term of
    several words is mentioned when consecutive words of the text match its words in
    order (``machu picchu``).

    By default the other direction of :func:`stems_match` is left out: a word whose stem
    only begins a term's stem is not a mention. In book text such words are mostly
    other words (``long`` for ``longboard``, ``port`` for ``portuguese``, ``card`` for
    ``cardiac``): on the ten-book corpus, with the built-in terms, they would reject
    about 10% of snippets instead of 2%. ``roots=True`` counts them too (``Japan`` then
    mentions ``japanese``), which is exactly the rule of the one-hop check.

    Built for many calls: the terms' stems are computed once, and each distinct word of
    the texts is stemmed and looked up once.

    Args:
        terms: The terms; empty or duplicate terms are ignored.
        roots: Also count a word whose stem (of at least :data:`MIN_PREFIX_STEM`
            letters) begins a term's stem.

    Attributes:
        terms: The distinct terms that have at least one word, in the given order.
    """

    def __init__(self, terms: Iterable[str], *, roots: bool = False) -> None:
        self._single: dict[str, list[str]] = {}
        self._phrases: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        kept: list[str] = []
        for term in dict.fromkeys(terms):
            stems = tuple(stem(word) for word in words_of(term))
            if not stems:
                continue
            kept.append(term)
            if len(stems) == 1:
                self._single.setdefault(stems[0], []).append(term)
            else:
                self._phrases.setdefault(stems[0], []).append((term, stems))
        self.terms: tuple[str, ...] = tuple(kept)
        term_stems = {
            *self._single,
            *(s for phrases in self._phrases.values() for _, stems in phrases for s in stems),
        }
        self._stems = frozenset(term_stems)
        self._long_stems = frozenset(s for s in term_stems if len(s) >= MIN_PREFIX_STEM)
        # With roots: a text stem that begins a term stem (and is long enough) matches it.
        self._roots: dict[str, set[str]] = {}
        if roots:
            for term_stem in self._long_stems:
                for end in range(MIN_PREFIX_STEM, len(term_stem)):
                    self._roots.setdefault(term_stem[:end], set()).add(term_stem)
        self._seen: dict[str, frozenset[str]] = {}
        self._hit_words: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __repr__(self) -> str:
        return f"TermMatcher({list(self.terms)!r})"

    def _term_stems_of(self, text_stem: str) -> frozenset[str]:
        """The term stems that one stem of the text matches."""
        found: set[str] = set()
        if text_stem in self._stems:
            found.add(text_stem)
        if len(text_stem) >= MIN_PREFIX_STEM:
            found.update(self._roots.get(text_stem, ()))
            for end in range(MIN_PREFIX_STEM, len(text_stem)):
                if text_stem[:end] in self._long_stems:
                    found.add(text_stem[:end])
        return frozenset(found)

    def _learn(self, words: set[str]) -> None:
        for word in words:
            matched = self._term_stems_of(stem(word))
            self._seen[word] = matched
            if matched:
                self._hit_words.add(word)

    def find(self, text: str) -> set[str]:
        """Return the terms the text mentions (a subset of :attr:`terms`)."""
        words = words_of(text)
        if not words or not self.terms:
            return set()
        distinct = set(words)
        new = distinct.difference(self._seen)
        if len(self._seen) + len(new) > _MATCHER_CACHE_SIZE:
            self._seen.clear()
            self._hit_words.clear()
            new = distinct
        if new:
            self._learn(new)
        present = distinct & self._hit_words
        if not present:
            return set()
        found: set[str] = set()
        for word in present:
            for term_stem in self._seen[word]:
                found.update(self._single.get(term_stem, ()))
        if self._phrases:
            found.update(self._find_phrases(words, present))
        return found

    def _find_phrases(self, words: list[str], present: set[str]) -> set[str]:
        found: set[str] = set()
        seen = self._seen
        for index, word in enumerate(words):
            if word not in present:
                continue
            for term_stem in seen[word]:
                for term, stems in self._phrases.get(term_stem, ()):
                    following = words[index : index + len(stems)]
                    if len(following) == len(stems) and all(
                        s in seen.get(w, ()) for s, w in zip(stems, following, strict=True)
                    ):
                        found.add(term)
        return found
