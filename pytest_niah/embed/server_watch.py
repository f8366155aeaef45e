"""A served model watched through its run: the same texts again, compared at same-batch noise.

A server can change while a run embeds (another model started behind the same address and
name, a balancer reaching another deployment): its vectors would mix with the first model's
in one table. So the fixed fingerprint texts, and a few check texts drawn from the run's
books with a seed of this run's own, are sent again as the grid is embedded -- every
:data:`EVERY_REQUESTS` requests or :data:`EVERY_SECONDS` seconds, and at its end -- each
batch alone, exactly as it was sent at the start. A batch sent alone again repeats to the
server's own same-batch noise (bit for bit on most servers), far below what a dtype or a
model change moves, whatever batch-mates do to vectors elsewhere. A server that answers
the fixed texts from the right model and the rest from another one does not know the drawn
texts in advance.

A batch that moved past the tolerance stops the run with "the server changed during the
run"; the vectors embedded since the last good check are never written to the cache (the
encoder holds them until a check passes: :class:`~pytest_niah.embed.runner.Encoder`).
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pytest_niah.embed.protocol import Embedder
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, make_input
from pytest_niah.inputs.books import Corpus

# Vectors sent alone again match within this many times the measured same-batch noise...
MATCH_MARGIN = 4.0
# ...and never closer than float32 noise (a deterministic server repeats bit for bit).
MATCH_FLOOR = 1e-5
EVERY_REQUESTS = 100  # grid requests between two checks, at most...
EVERY_SECONDS = 180.0  # ...and seconds
CHECK_TEXTS = 3  # drawn from the books, per run
CHECK_TOKENS = 48  # tokens of each (every window reads them whole)
_CHARS = 600  # characters of a book taken before the cut to CHECK_TOKENS


def answer_alone(embedder: Embedder, inputs: Sequence[ModelInput]) -> np.ndarray:
    """The vectors of ``inputs`` sent as one request of their own (float64, in order).

    A served model's ``answer`` sends exactly that request; another embedder encodes them.
    """
    send = getattr(embedder, "answer", None)
    rows = send(list(inputs)) if callable(send) else embedder.encode(list(inputs))
    dense = rows.toarray() if hasattr(rows, "toarray") else rows
    matrix = np.asarray(dense, dtype=np.float64)
    if matrix.shape[0] != len(inputs) or not np.isfinite(matrix).all():
        raise EmbedderError(
            f"{getattr(embedder, 'what', embedder.name)} returned unusable vectors for "
            "pytest-niah's check texts",
            "check the server's logs",
        )
    return matrix


def moved(a: np.ndarray, b: np.ndarray) -> float:
    """The most any row moved from ``a`` to ``b``, relative to the longer one's length."""
    if a.shape != b.shape:
        return float("inf")
    scale = np.maximum(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
    distance = np.linalg.norm(a - b, axis=1) / np.where(scale > 0, scale, 1.0)
    return float(distance.max()) if distance.size else 0.0


def tolerance(*repeats: float) -> float:
    """How far a batch sent alone again may move: a margin over the larger repeat noise."""
    return max(MATCH_FLOOR, MATCH_MARGIN * max(repeats, default=0.0))


def check_inputs(embedder: Embedder, corpus: Corpus, seed: int) -> list[ModelInput]:
    """:data:`CHECK_TEXTS` pieces of the books at places ``seed`` draws, as document inputs.

    Each is cut to :data:`CHECK_TOKENS` tokens (fewer for a shorter window), and none is
    empty; a corpus without text gives none.
    """
    rng = random.Random(seed)
    books = [book for book in corpus.books if book.text.strip()]
    window = embedder.windows.document
    cut = CHECK_TOKENS if window is None else max(1, min(CHECK_TOKENS, window))
    texts: list[str] = []
    for _ in range(CHECK_TEXTS if books else 0):
        text = rng.choice(books).text
        start = rng.randrange(max(1, len(text) - _CHARS))
        piece = " ".join(text[start : start + _CHARS].split()[1:])  # from a whole word
        texts.append(piece or text.strip()[:_CHARS])
    encodings = embedder.tokenizer.encode_batch(texts) if texts else []
    return [
        make_input(DOCUMENT, encoding, text, cut, embedder.reads_text)
        for encoding, text in zip(encodings, texts, strict=True)
    ]


@dataclass
class CheckedBatch:
    """A batch sent alone at the start, and what it answered.

    Attributes:
        what: What the batch is, for the message (``the fixed fingerprint texts``).
        inputs: Its inputs, in the order they are sent.
        vectors: Its first answer.
        repeat: How far it moved when sent alone again at once.
    """

    what: str
    inputs: tuple[ModelInput, ...]
    vectors: np.ndarray
    repeat: float


@dataclass
class ServerWatch:
    """The batches a served model is checked with during a run, and when it is next due.

    Args:
        embedder: The served model.
        batches: The fixed batch (from the fingerprint) and the drawn one.
        requests: The number of requests the model has answered so far.
        every_requests: Requests between two checks, at most.
        every_seconds: Seconds between two checks, at most.
    """

    embedder: Embedder
    batches: tuple[CheckedBatch, ...]
    requests: Callable[[], int]
    every_requests: int = EVERY_REQUESTS
    every_seconds: float = EVERY_SECONDS
    checks: int = 0
    _since: tuple[int, float] = field(default=(0, 0.0), init=False)

    def __post_init__(self) -> None:
        self._since = (self.requests(), time.monotonic())

    @property
    def limit(self) -> float:
        """How far a batch may move (:func:`tolerance` of every batch's repeat noise)."""
        return tolerance(*(batch.repeat for batch in self.batches))

    def due(self) -> bool:
        """Whether enough requests or time went by since the last check."""
        requests, since = self._since
        return (
            self.requests() - requests >= self.every_requests
            or time.monotonic() - since >= self.every_seconds
        )

    def check(self, when: str) -> None:
        """Send every batch alone again; stop the run if any moved past :attr:`limit`.

        Raises:
            EmbedderError: "the server changed during the run", with the batch and numbers.
        """
        limit = self.limit
        for batch in self.batches:
            distance = moved(batch.vectors, answer_alone(self.embedder, batch.inputs))
            if distance > limit:
                raise _changed(self.embedder, batch.what, when, distance, limit)
        self.checks += 1
        self._since = (self.requests(), time.monotonic())

    def summary(self) -> str:
        """What was checked, in one line (a note of the run)."""
        texts = sum(len(batch.inputs) for batch in self.batches)
        return (
            f"the server was checked {self.checks} time(s) during the embedding and at its end "
            f"({', '.join(batch.what for batch in self.batches)}: {texts} texts, each batch "
            f"sent alone): it answered as at the start, within {self.limit:.3g}"
        )


def watch_batch(embedder: Embedder, what: str, inputs: Sequence[ModelInput]) -> CheckedBatch:
    """Send ``inputs`` alone twice: their answer and how far it moved the second time."""
    first = answer_alone(embedder, inputs)
    again = answer_alone(embedder, inputs)
    return CheckedBatch(what, tuple(inputs), first, moved(first, again))


def _changed(
    embedder: Embedder, what: str, when: str, distance: float, limit: float
) -> EmbedderError:
    name = getattr(embedder, "what", embedder.name)
    return EmbedderError(
        f"the server changed during the run: {name} answered {what} {when} {distance:.3g} "
        f"of their length away from its answer at the run's start (the same batch repeated "
        f"within {limit:.3g}); nothing embedded since the last good check was kept",
        "make sure one deployment serves the whole run (no restart, no rollout, no load "
        "balancer over other models or dtypes), then run again: the vectors checked before "
        "are read from the cache",
    )


def run_seed() -> int:
    """A fresh seed for this run's check texts: a server cannot know them in advance."""
    return secrets.randbits(32)
