"""Filler streams: seeded runs of book sentences, every snippet checked by the leak audit.

A stream is drawn for one (seed, group, length, control) from its own generator, so it is the
same whichever groups a run selects and whichever thread draws it. A snippet is a run of
consecutive sentences under a random token budget; one holding any needle group's key word
(the *whole* needle set's) is rejected and counted, and the counts are the leak audit
(:class:`~pytest_niah.haystacks.audit.AuditReport`). Sentence token counts persist between runs
(:mod:`pytest_niah.haystacks.sentence_counts`). :mod:`pytest_niah.haystacks.builder` cuts
haystacks from the streams.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.fillers import Stream
from pytest_niah.haystacks.haystack import draw_seed, rng_for
from pytest_niah.haystacks.sentence_counts import SentenceCounts, counts_file
from pytest_niah.haystacks.sentence_tokens import SentenceTokens, tokens_file
from pytest_niah.haystacks.splice import SplicedEncoding
from pytest_niah.haystacks.tokens import Tokenizer
from pytest_niah.inputs.corpus import Corpus
from pytest_niah.inputs.needles import NeedleSet
from pytest_niah.inputs.term_matcher import TermMatcher

MAX_SNIPPET_TOKENS = 249  # the study's snippets are under 250 tokens
MIN_SNIPPET_TOKENS = 48
SNIPPET_SENTENCES = 24  # at most this many consecutive sentences per snippet
MAX_CONSECUTIVE_REJECTS = 2000
_COUNT_AHEAD = 8  # sentences counted per tokenizer call while drawing a snippet
# Below a snippet's mean budget (148): a stream's prefetch replays about one snippet more
# than it usually takes.
_EXPECTED_SNIPPET_TOKENS = 120

# A stream holds this share of its length in more tokens (counted sentence by sentence)
# than it needs: joined, some tokenizers read sentences in fewer tokens than alone (a
# Metaspace that marks only a text's first word, a byte-level BPE's first word after a
# space), and a cut takes only a stream's leading sentences, so more never changes one.
JOIN_SLACK = 1 / 16


def stream_target(tokens: int) -> int:
    """Tokens (counted sentence by sentence) a stream is drawn until it holds."""
    return tokens + 1 + int(tokens * JOIN_SLACK)


# (group id, length, control, tokens, seed): what :meth:`SnippetDrawer.stream` is called with.
StreamSpec = tuple[str, int, int, int, int | None]


class SnippetDrawer:
    """Draws the filler streams of a run and keeps the leak audit's counts.

    Args:
        corpus: Books to draw snippets from.
        needle_set: The *whole* needle set: every group's terms are banned from snippets.
        tokenizer: The model's tokenizer (it counts each sentence's tokens).
        seed: Seed of every random choice.
        cache_dir: Where sentence token counts persist between runs (``None``: nowhere).
        tokens: Keep each sentence's token ids, not only its count, for fillers cut in
            token space (:meth:`joined`); only for a tokenizer that splits at white space.

    Raises:
        HaystackError: the corpus has no sentences.
    """

    def __init__(
        self,
        corpus: Corpus,
        needle_set: NeedleSet,
        tokenizer: Tokenizer,
        seed: int,
        cache_dir: Path | None = None,
        *,
        tokens: bool = False,
    ) -> None:
        self.seed = seed
        self.corpus_name = corpus.name
        self.books = [book.sentences for book in corpus.books if book.sentences]
        if not self.books:
            raise HaystackError(
                f"corpus {corpus.name!r} has no sentences to build haystacks from",
                "point --niah-corpus at a folder of plain-text books",
            )
        key = (cache_dir, tokenizer.identity, corpus.fingerprint())
        self._counts: SentenceCounts | SentenceTokens = (
            SentenceTokens(self.books, tokenizer, tokens_file(*key))
            if tokens
            else SentenceCounts(self.books, tokenizer, counts_file(*key))
        )
        terms = sorted({t for g in needle_set.groups for t in g.audit_terms})
        self._leak = TermMatcher(terms) if terms else None
        self._used = 0
        self._rejected = 0
        self._too_long = 0
        self._hits: Counter[str] = Counter()
        self._audit_lock = threading.Lock()

    def save_counts(self) -> None:
        """Persist the sentence token counts counted so far (where ``cache_dir`` says)."""
        self._counts.save()

    def joined(self, stream: Stream, sentences: int) -> SplicedEncoding | None:
        """The tokens of the stream's first ``sentences`` joined by spaces, from each one's.

        ``None`` unless the drawer keeps tokens.
        """
        if not isinstance(self._counts, SentenceTokens) or not sentences:
            return None
        return self._counts.joined(stream.refs[:sentences], stream.sentences[:sentences])

    def audit(self) -> AuditReport:
        """What the leak audit saw so far."""
        return AuditReport(
            snippets_used=self._used,
            snippets_rejected=self._rejected,
            sentences_too_long=self._too_long,
            term_hits=tuple(sorted(self._hits.items())),
        )

    def prefetch(self, streams: Sequence[StreamSpec]) -> None:
        """Count, in one tokenizer call, the sentences these streams will most likely read.

        A snippet's (book, start, budget) come from its stream's generator before any count
        is known, so the first snippets of each stream are replayed here, and the first
        sentences of each counted at once. :meth:`stream` then finds them counted; what it
        needs beyond them it counts as before. Haystacks do not depend on it.
        """
        wanted: dict[int, list[int]] = {}
        for group_id, length, control, tokens, seed in streams:
            rng = rng_for(draw_seed(self.seed, seed), "stream", group_id, length, control)
            for _ in range(-(-stream_target(tokens) // _EXPECTED_SNIPPET_TOKENS) + 1):
                book, start, _ = self._choice(rng)
                stop = min(start + _COUNT_AHEAD, len(self.books[book]))
                wanted.setdefault(book, []).extend(range(start, stop))
        self._counts.fill(wanted)

    def stream(
        self, group_id: str, length: int, control: int, tokens: int, seed: int | None = None
    ) -> Stream:
        """Snippets drawn for one group, length and control until :func:`stream_target`.

        ``seed``: the draw's seed (``None``: the drawer's).
        """
        rng = rng_for(draw_seed(self.seed, seed), "stream", group_id, length, control)
        stream = Stream([], [], [])
        total = misses = 0
        target = stream_target(tokens)
        while total < target:
            snippet = self._snippet(rng)
            if snippet is None:
                misses += 1
                if misses > MAX_CONSECUTIVE_REJECTS:
                    raise HaystackError(
                        f"corpus {self.corpus_name!r}: {misses} snippets in a row were rejected by "
                        "the leak audit or were too long; the books mention the needle groups' "
                        "key words too often (see the audit's term counts)",
                        "use other books, or needle groups with more distinctive keywords",
                    )
                continue
            misses = 0
            stream.sentences.extend(snippet[0])
            stream.counts.extend(snippet[1])
            stream.refs.extend(snippet[2])
            total += sum(snippet[1])
        return stream

    def _choice(self, rng: np.random.Generator) -> tuple[int, int, int]:
        """A snippet's book, first sentence and token budget: drawn before any count."""
        book = int(rng.integers(len(self.books)))
        start = int(rng.integers(len(self.books[book])))
        budget = int(rng.integers(MIN_SNIPPET_TOKENS, MAX_SNIPPET_TOKENS + 1))
        return book, start, budget

    def _snippet(
        self, rng: np.random.Generator
    ) -> tuple[list[str], list[int], list[tuple[int, int]]] | None:
        """One run of consecutive sentences under the token budget, or None if rejected."""
        book, start, budget = self._choice(rng)
        sentences = self.books[book]
        chosen: list[str] = []
        chosen_counts: list[int] = []
        refs: list[tuple[int, int]] = []
        total = 0
        too_long = False
        for index, count in self._counts_from(book, start):
            if count > MAX_SNIPPET_TOKENS:
                too_long = True
                break
            if total + count > budget:
                break
            chosen.append(sentences[index])
            chosen_counts.append(count)
            refs.append((book, index))
            total += count
        # The audit's counts are sums (the same whatever order blocks are built in); the
        # lock keeps them and the matcher's cache whole across building threads.
        with self._audit_lock:
            self._too_long += too_long
            if not chosen:
                return None
            if self._leak is not None:
                hits = self._leak.find(" ".join(chosen))
                if hits:
                    self._rejected += 1
                    self._hits.update(hits)
                    return None
            self._used += 1
        return chosen, chosen_counts, refs

    def _counts_from(self, book: int, start: int) -> Iterator[tuple[int, int]]:
        """(index, token count) of the sentences a snippet may take, counted a few at a time.

        A snippet usually stops after a handful of sentences: counting all
        ``SNIPPET_SENTENCES`` up front would tokenize about three times what is used.
        """
        stop = min(start + SNIPPET_SENTENCES, len(self.books[book]))
        for first in range(start, stop, _COUNT_AHEAD):
            last = min(first + _COUNT_AHEAD, stop)
            yield from enumerate(self._counts.get(book, first, last), start=first)
