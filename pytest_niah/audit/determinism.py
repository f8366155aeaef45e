"""Is the endpoint deterministic, and do its vectors depend on the input?

The fixed texts of :mod:`~pytest_niah.embed.server_noise` go as one batch, alone, twice: how
far the same request's answers move (a deterministic server repeats bit for bit; a bfloat16
one whose rounding depends on the batch repeats too, since the batch is the same). Then the
run's own noise check (:func:`~pytest_niah.embed.server_noise.measure_noise`): the same text
with other batch-mates and twice in one request, and the verdict a run would take from it
(refused, or the window probe's threshold). From the same answers, the vectors: their
dimension and length, and whether they follow the text at all (a random vector per request, a
sign flipped every other request, one vector for every text).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_niah.audit.endpoint import Endpoint
from pytest_niah.embed.server_noise import FIXED_TEXTS, REFUSED, ServerNoise, measure_noise
from pytest_niah.embed.window_probe import MOVED, NOISE_MARGIN
from pytest_niah.errors import EmbedderError

DEPENDS = "depends on the input"
RANDOM = "random: the same text comes back as another vector each request"
SIGN_FLIP = "sign-flipping: the same text comes back pointing the other way"
CONSTANT = "constant: every text comes back as the same vector"


@dataclass(frozen=True)
class Determinism:
    """How far the same text moved, relative to its vector's length.

    Attributes:
        repeat: The fixed batch sent alone twice (the most any text moved).
        batchmates: The same text with other batch-mates (``None``: the check was refused).
        pair: The same text twice in one request (``None``: refused).
        signal: The smallest distance between two different fixed texts.
        verdict: What a run would do: go on (and the window probe's threshold), or refuse.
        refused: Whether a run would refuse this server.
    """

    repeat: float
    batchmates: float | None
    pair: float | None
    signal: float
    verdict: str
    refused: bool


@dataclass(frozen=True)
class Vectors:
    """What the vectors are.

    Attributes:
        dim: Their dimension.
        norm_min: The shortest fixed text's vector length.
        norm_max: The longest's.
        behaviour: Whether they depend on the input, or which way they do not.
    """

    dim: int
    norm_min: float
    norm_max: float
    behaviour: str

    @property
    def follows_input(self) -> bool:
        """Whether the vectors depend on the text."""
        return self.behaviour == DEPENDS


def distance(a: np.ndarray, b: np.ndarray) -> float:
    """How far apart two vectors are, relative to the longer one."""
    scale = float(max(np.linalg.norm(a), np.linalg.norm(b)))
    return float(np.linalg.norm(a - b)) / scale if scale > 0 else 0.0


def row_distances(a: np.ndarray, b: np.ndarray) -> list[float]:
    """The distance of each row of ``a`` to the same row of ``b``."""
    return [distance(x, y) for x, y in zip(a, b, strict=True)]


def measure_determinism(endpoint: Endpoint) -> tuple[Determinism, Vectors, np.ndarray]:
    """The fixed batch alone twice, then a run's noise check; also the fixed batch's vectors."""
    first, _ = endpoint.embed(FIXED_TEXTS)
    second, _ = endpoint.embed(FIXED_TEXTS)
    repeat = max(row_distances(first, second))
    signal = min(
        distance(first[i], first[j]) for i in range(len(first)) for j in range(i + 1, len(first))
    )
    noise: ServerNoise | None = None
    try:
        noise = measure_noise(endpoint.embedder)
    except EmbedderError as exc:
        verdict, refused = f"a run refuses the server: {exc.problem}", True
    else:
        threshold = max(MOVED, NOISE_MARGIN * noise.pair)
        verdict, refused = (
            f"a run goes on; the window probe counts a pair as different above {threshold:.2g}",
            False,
        )
    determinism = Determinism(
        repeat=repeat,
        batchmates=None if noise is None else noise.calls,
        pair=None if noise is None else noise.pair,
        signal=signal,
        verdict=verdict,
        refused=refused,
    )
    norms = np.linalg.norm(first, axis=1)
    vectors = Vectors(
        dim=int(first.shape[1]),
        norm_min=float(norms.min()),
        norm_max=float(norms.max()),
        behaviour=behaviour(first, second, signal),
    )
    return determinism, vectors, first


def behaviour(first: np.ndarray, second: np.ndarray, signal: float) -> str:
    """Whether the same batch's two answers follow the text (the names of the ways they fail)."""
    cosines = [
        float(a @ b) / float(np.linalg.norm(a) * np.linalg.norm(b) or 1.0)
        for a, b in zip(first, second, strict=True)
    ]
    if min(cosines) < -0.5:
        return SIGN_FLIP
    if signal <= MOVED:
        return CONSTANT
    if max(row_distances(first, second)) >= REFUSED * signal:
        return RANDOM
    return DEPENDS
