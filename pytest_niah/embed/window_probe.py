"""Measuring what a model reads: the last token whose change still moves its embedding.

What a model *says* it reads (its config, its tokenizer, ``--niah-max-seq-length``) is not
always what it reads: serving stacks cut inputs silently (a gateway's hard 512 tokens,
vLLM's ``truncate_prompt_tokens``). Before the grid, :func:`measure_window` embeds pairs of
texts that share their first k tokens and differ in every token after it: while the model
reads past token k, the two vectors differ. Bisection over k finds the first k where they
no longer do, which is how many tokens the model reads, counted as the declared window is:
in the haystack tokenizer's tokens, special tokens and prompt aside.

The probe texts are words of the run's own corpus that the tokenizer reads as one token
each, so k words are k tokens (each pair is checked). They are embedded as documents
through the embedding cache: a second run of the same model reads them back, and
``--niah-no-cache`` writes nothing. The probe sends no more tokens than the run will: the
longest haystack, cut to the declared window. About two texts per halving of that length
(28 for 8,192 tokens).

A served model may not be deterministic (GPU kernels that sum in another order each call).
Its noise (the same text twice, sent as a pair is: :mod:`~pytest_niah.embed.server_noise`)
is measured first and the probe's threshold set above it; where the noise hides what one
token of the probe texts changes, the window is not measured rather than measured wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.runner import EmbeddingStats, Encoder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import ModelError
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, make_input
from pytest_niah.haystacks.tokens import Tokenizer, token_counts
from pytest_niah.inputs.books import Corpus

# A pair "moves" when its vectors differ by more than this, relative to their length: far
# above float32 noise between rows of one batch (about 1e-7), far below what one token of a
# few thousand changes in a mean-pooled vector (about 1e-3).
MOVED = 1e-5
# A served model's threshold: this many times its noise (the same text's spread).
NOISE_MARGIN = 10.0
NOT_MEASURED = "not measured"
NOT_DETERMINISTIC = (
    "the server is not deterministic (the same text's vectors move between requests by as "
    "much as one token of the probe texts changes them)"
)
_WORD = re.compile(r"[a-z]{2,}")
_SCAN_CHARS = 200_000  # corpus text read at a time while collecting words


def slack(declared: int) -> int:
    """How far a measured window may fall short of the declared one and still agree with it."""
    return max(4, declared // 100)


def falls_short(declared: int | None, window: int) -> bool:
    """Whether a measured ``window`` is shorter than the ``declared`` one by more than slack.

    A model that declares no window (``None``) and is seen to stop reading falls short.
    """
    return declared is None or declared - window > slack(declared)


@dataclass(frozen=True)
class WindowMeasurement:
    """What the probe found.

    Attributes:
        declared: Document tokens the model says it reads (``None``: every token).
        window: Document tokens it was seen to read; ``None``: not measured, or no limit
            within ``probed`` tokens (``note`` says which).
        probed: Tokens of each probe text (0: nothing was probed).
        note: What was found, or why nothing could be, in plain words.
        stats: What the probe embedded and read from the cache (not part of the results).
        dim: The dimension of the vectors the model gave the probe (``None``: it gave none,
            the cache answered: those rows prove nothing about the model).
    """

    declared: int | None
    window: int | None
    probed: int
    note: str
    stats: EmbeddingStats = field(default_factory=EmbeddingStats, compare=False)
    dim: int | None = field(default=None, compare=False)

    @property
    def effective(self) -> int | None:
        """The tokens the run lets the model read.

        The measured window where it falls short of the declared one by more than
        :func:`slack`, else the declared one.
        """
        if self.window is None:
            return self.declared
        return self.window if falls_short(self.declared, self.window) else self.declared


def not_measured(declared: int | None, why: str) -> WindowMeasurement:
    """A measurement that could not be made, and why."""
    return WindowMeasurement(declared, None, 0, f"{NOT_MEASURED}: {why}")


def measure_window(
    embedder: Embedder,
    corpus: Corpus,
    longest: int,
    store: EmbeddingStore | None,
    *,
    budget: int = 0,
    batch_size: int = 8,
    noise: float = 0.0,
) -> WindowMeasurement:
    """Measure how many document tokens ``embedder`` reads, up to the longest haystack.

    Args:
        embedder: The model (loaded here if it was not yet).
        corpus: The run's corpus: the probe's words come from it.
        longest: The run's longest haystack, in tokens.
        store: The embedding cache, or ``None``.
        budget: Most tokens per batch, as the run's (``0``: ``batch_size`` texts).
        batch_size: Texts per batch when ``budget`` is 0.
        noise: How far the same text's vectors move between requests, relative to their
            length (a served model's, measured by :func:`~.server_noise.measure_noise`).
    """
    declared = embedder.windows.document
    if embedder.fits_on_documents:
        return not_measured(declared, "the lexical baseline reads whole texts and has no window")
    probed = longest if declared is None else min(longest, declared)
    if probed < 3:
        return not_measured(declared, f"{probed}-token texts are too short to probe")
    texts = ProbeTexts.of(embedder.tokenizer, corpus, probed)
    if texts is None:
        return not_measured(declared, "the corpus has too few words of one token each")
    encoder = Encoder(embedder, store, budget=budget, batch_size=batch_size)
    try:
        threshold = max(MOVED, NOISE_MARGIN * noise)
        window = _bisect(texts, encoder, threshold, keep_text=embedder.reads_text)
    except _Unmeasurable as exc:
        return WindowMeasurement(declared, None, 0, f"{NOT_MEASURED}: {exc}", encoder.stats)
    dim = encoder.dim if encoder.stats.embedded else None
    if window is None and declared is not None and probed == declared:
        window, note = declared, f"reads all {declared:,} tokens it declares"
    elif window is None:
        note = f"no limit within {probed:,} tokens (the longest haystack)"
    else:
        note = _found(declared, window)
    return WindowMeasurement(declared, window, probed, note, encoder.stats, dim)


def _found(declared: int | None, window: int) -> str:
    if declared is None:
        return f"reads only the first {window:,} tokens, though it declares no limit"
    if falls_short(declared, window):
        return f"reads only the first {window:,} of the {declared:,} tokens it declares"
    return f"reads {window:,} tokens (it declares {declared:,})"


class _Unmeasurable(ModelError):
    """Raised inside the probe when it cannot say what the model reads (the message says why).

    The probe catches it and records the run's window as not measured.
    """


def _bisect(
    texts: ProbeTexts, encoder: Encoder, threshold: float, *, keep_text: bool
) -> int | None:
    """The first k at which changing every token from k on no longer moves the vector.

    A pair "moves" when its vectors differ by more than ``threshold`` of their length.
    ``None``: even a change of the last token moves it (no limit within the probe).
    """
    last, first = _moved(texts, encoder, [texts.length - 1, 1], keep_text)
    # Mean pooling spreads the whole change over the tokens read: one token of the probe
    # moves the vector by about 1/length of it. Noise above that hides the window's edge.
    if threshold > MOVED and first / texts.length <= threshold:
        raise _Unmeasurable(NOT_DETERMINISTIC)
    if first <= threshold:
        raise _Unmeasurable("changing every token after the first did not move the embedding")
    if last > threshold:
        return None
    moves, still = 1, texts.length - 1  # k = moves still moves the vector; k = still does not
    while still - moves > 1:
        middle = (moves + still) // 2
        if _moved(texts, encoder, [middle], keep_text)[0] > threshold:
            moves = middle
        else:
            still = middle
    return still


def _moved(texts: ProbeTexts, encoder: Encoder, ks: Sequence[int], keep_text: bool) -> list[float]:
    """For each k, how far apart (relative to their length) the pair that differs from k is."""
    pairs = [texts.inputs(k, keep_text) for k in ks]
    encoder.submit(item for pair in pairs for item in pair)
    table = encoder.finish()
    out = []
    for a, b in pairs:
        rows = table.matrix[table.rows([a.key, b.key])]
        dense = np.asarray(rows.toarray() if hasattr(rows, "toarray") else rows, dtype=np.float64)
        if not np.isfinite(dense).all():
            raise _Unmeasurable("the model returned non-finite vectors for the probe texts")
        scale = float(np.linalg.norm(dense, axis=1).max())
        out.append(float(np.linalg.norm(dense[0] - dense[1])) / scale if scale > 0 else 0.0)
    return out


@dataclass(frozen=True)
class ProbeTexts:
    """Pairs of texts of ``length`` one-token words that differ from word k on.

    Attributes:
        tokenizer: The haystack tokenizer (each pair is checked with it).
        prefix: The words both texts of a pair start with.
        left: The words of one text after the prefix.
        right: The other text's, none of them among ``left``'s.
    """

    tokenizer: Tokenizer
    prefix: tuple[str, ...]
    left: tuple[str, ...]
    right: tuple[str, ...]

    @property
    def length(self) -> int:
        """Tokens of every probe text."""
        return len(self.prefix)

    @classmethod
    def of(cls, tokenizer: Tokenizer, corpus: Corpus, length: int) -> ProbeTexts | None:
        """Probe texts from the corpus's words, in order; ``None`` if it has too few.

        The two sides draw on two halves of the words found: their tails never hold the
        same words, so even a model that reads a text as a bag of words (a static one)
        tells them apart.
        """
        words = one_token_words(tokenizer, corpus, 3 * length)
        pool = list(dict.fromkeys(words))
        if len(pool) < 2:
            return None
        halves = set(pool[0::2]), set(pool[1::2])
        left, right = ([w for w in words if w in half] for half in halves)
        return cls(
            tokenizer,
            tuple(_cycled(words, length)),
            tuple(_cycled(left, length)),
            tuple(_cycled(right, length)),
        )

    def inputs(self, k: int, keep_text: bool) -> tuple[ModelInput, ModelInput]:
        """The pair sharing the first ``k`` tokens, checked token by token.

        Raises:
            _Unmeasurable: the tokenizer does not read them as one token per word.
        """
        texts = [" ".join(self.prefix[:k] + side[k:]) for side in (self.left, self.right)]
        a, b = self.tokenizer.encode_batch(texts)
        ids_a, ids_b = np.asarray(a.ids), np.asarray(b.ids)
        if not (
            ids_a.size == ids_b.size == self.length
            and np.array_equal(ids_a[:k], ids_b[:k])
            and bool((ids_a[k:] != ids_b[k:]).all())
        ):
            raise _Unmeasurable("the tokenizer does not read the probe's words one token each")
        return (
            make_input(DOCUMENT, a, texts[0], None, keep_text),
            make_input(DOCUMENT, b, texts[1], None, keep_text),
        )


def _cycled(words: list[str], length: int) -> list[str]:
    return (words * (length // len(words) + 1))[:length]


def one_token_words(tokenizer: Tokenizer, corpus: Corpus, wanted: int) -> list[str]:
    """Up to ``wanted`` lower-case words of the corpus, in order, each read as one token."""
    words: list[str] = []
    single: dict[str, bool] = {}
    for book in corpus.books:
        for start in range(0, len(book.text), _SCAN_CHARS):
            found = _WORD.findall(book.text[start : start + _SCAN_CHARS].lower())
            fresh = [w for w in dict.fromkeys(found) if w not in single]
            # "w w" is two tokens when w is one token both first and after a space.
            counts = token_counts(tokenizer, [f"{w} {w}" for w in fresh])
            single.update((w, n == 2) for w, n in zip(fresh, counts, strict=True))
            words.extend(w for w in found if single[w])
            if len(words) >= wanted:
                return words[:wanted]
    return words
