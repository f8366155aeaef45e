"""What the builder makes: haystacks and blocks, and the seeded keys every random choice uses."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from pytest_niah.haystacks.tokens import Encoded


@dataclass(frozen=True)
class Haystack:
    """One text to embed as a document, with where its needle sits.

    ``needle_*`` fields are ``None`` for controls. Offsets count tokens of the model's
    tokenizer without special tokens; ``needle_char`` is a character offset.

    Attributes:
        control_id: The control sharing this haystack's filler (itself, for a control).
        duplicate_position: The earlier position with the same needle at the same offset,
            when the filler had fewer gaps than positions; such a case is not counted twice.
        seed: The draw of ``--niah-seeds`` it belongs to (``None``: the run's single draw).
    """

    id: str
    group_id: str
    length: int
    text: str
    control_id: str
    kind: str | None = None
    order: str | None = None
    position: int | None = None
    control: int | None = None
    name: str | None = None
    needle: str | None = None
    needle_offset: int | None = None
    needle_tokens: int | None = None
    needle_char: int | None = None
    duplicate_position: int | None = None
    seed: int | None = None

    @property
    def is_control(self) -> bool:
        """True for a no-needle haystack."""
        return self.needle is None


@dataclass(frozen=True)
class Block:
    """The haystacks of one needle group at one length and draw, with their tokens (same order)."""

    group_id: str
    length: int
    haystacks: tuple[Haystack, ...]
    encodings: tuple[Encoded, ...]
    placements: tuple[tuple[int, str], ...] = ()  # (needle tokens, "sentences"|"words")
    needles: tuple[tuple[str, Encoded], ...] = ()  # each needle text's own tokens


def stable_key(*parts: object) -> int:
    """A 64-bit integer from text parts, the same in every process (unlike ``hash``)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def draw_seed(seed: int, draw: int | None) -> int:
    """The seed of a haystack draw: a ``--niah-seeds`` draw's own, else the run's ``seed``."""
    return seed if draw is None else draw


def rng_for(seed: int, *parts: object) -> np.random.Generator:
    """An independent generator for one named random choice of one run."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, stable_key(*parts)])))
