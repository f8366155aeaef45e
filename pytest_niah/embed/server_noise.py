"""How far a served model's answers move for the same text, measured before they are used.

A local model is deterministic to float32 noise; a server need not be: GPU kernels that sum
in another order on each call, bfloat16 arithmetic whose rounding depends on the batch
(padding), or a broken deployment (dropout left on, a balancer over different models, a
proxy mixing answers). Three requests of a few fixed texts tell these apart:

- the texts in one request (the fingerprint's vectors),
- two of them again, in another order and with another batch-mate,
- one of them twice in one request, as the window probe sends a pair.

From them: the spread of the same text sent as a pair (what the window probe must stand
above), its spread across requests, and how far two different texts lie apart. A server
whose same text moves as much as a quarter of the distance between different texts (a
random vector per call, a sign flipped every other request, one vector for every text)
does not embed its input: it is refused before any of its answers reach a cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_niah.embed.protocol import Embedder
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, make_input

# Short, unrelated texts: every window reads them whole.
FIXED_TEXTS = (
    "The lighthouse keeper counted ships until the fog rolled in from the bay.",
    "Quarterly revenue rose because the factory finally fixed its conveyor belts.",
    "A small green frog sang loudly beside the frozen mountain stream at dawn.",
)
# The same text may move by less than this fraction of the distance between two texts.
REFUSED = 0.25


@dataclass(frozen=True)
class ServerNoise:
    """What the fixed texts showed, as distances relative to the vectors' length.

    Attributes:
        pair: The same text twice in one call, as the window probe sends a pair.
        calls: The same text in other calls, with other batch-mates.
        signal: The smallest distance between two different fixed texts.
        vectors: The fixed texts' vectors from the first call (the fingerprint's).
    """

    pair: float
    calls: float
    signal: float
    vectors: np.ndarray

    @property
    def spread(self) -> float:
        """The most the same text moved, in a pair or across calls."""
        return max(self.pair, self.calls)


def measure_noise(embedder: Embedder) -> ServerNoise:
    """Send the fixed texts three times; refuse a server whose answers ignore the text.

    Raises:
        EmbedderError: the same text moved as much as different texts differ, or its sign
            flipped between requests: the message names the server and the numbers.
    """
    inputs = fixed_inputs(embedder)
    first = _rows(embedder, inputs)
    again = _rows(embedder, [inputs[2], inputs[0]])
    pair = _rows(embedder, [inputs[1], inputs[1]])
    same = [(first[0], again[1]), (first[2], again[0]), (first[1], pair[0])]
    signal = min(
        _distance(first[i], first[j]) for i in range(len(first)) for j in range(i + 1, len(first))
    )
    noise = ServerNoise(
        pair=_distance(pair[0], pair[1]),
        calls=max(_distance(a, b) for a, b in same),
        signal=signal,
        vectors=first,
    )
    what = str(getattr(embedder, "what", embedder.name))
    if any(_cosine(a, b) < -0.5 for a, b in [*same, (pair[0], pair[1])]):
        raise EmbedderError(
            f"{what} flips the sign of its vectors between requests: the same text came back "
            "pointing the other way",
            _HINT,
        )
    if noise.spread >= REFUSED * signal:
        raise EmbedderError(
            f"{what} returns vectors that do not depend on the input: the same text sent "
            f"twice moved by {noise.spread:.3g} of its length, while two different texts lie "
            f"{signal:.3g} apart",
            _HINT,
        )
    return noise


_HINT = (
    "check the server: a model sampling at inference (dropout left on), a load balancer over "
    "different models, or a proxy answering from the wrong cache; retrieval cannot be "
    "measured on answers that ignore the text"
)


def fixed_inputs(embedder: Embedder) -> list[ModelInput]:
    """The fixed texts as document inputs of ``embedder``."""
    encodings = embedder.tokenizer.encode_batch(list(FIXED_TEXTS))
    return [
        make_input(DOCUMENT, encoding, text, None, embedder.reads_text)
        for encoding, text in zip(encodings, FIXED_TEXTS, strict=True)
    ]


def _rows(embedder: Embedder, inputs: Sequence[ModelInput]) -> np.ndarray:
    rows = embedder.encode(list(inputs))
    dense = rows.toarray() if hasattr(rows, "toarray") else rows
    matrix = np.asarray(dense, dtype=np.float64)
    if matrix.shape[0] != len(inputs) or not np.isfinite(matrix).all():
        raise EmbedderError(
            f"{getattr(embedder, 'what', embedder.name)} returned unusable vectors for "
            "pytest-niah's fixed check texts",
            "check the server's logs",
        )
    return matrix


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    scale = float(max(np.linalg.norm(a), np.linalg.norm(b)))
    return float(np.linalg.norm(a - b)) / scale if scale > 0 else 0.0


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    scale = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / scale if scale > 0 else 1.0
