"""How large a run's grid is, from its config alone: cases, haystacks, tokens, memory.

Every count option is bounded (:mod:`pytest_niah.config.bounded_numbers`), but the bounds multiply:
a grid far larger than usual should say so before it starts, not after minutes of planning
or an out-of-memory kill. :func:`grid_size` counts it without loading anything;
:meth:`GridSize.warning` is the line to print when it is far larger than the default grid.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.vocabulary import MAXSIM

BYTES_PER_TOKEN = 24
"""Memory a planned token costs: its id, its share of the text, the plan's bookkeeping."""
BYTES_PER_EMBEDDING = 4 * 1024
"""Memory an embedding costs (1,024 float32 dimensions: a large model's)."""
BYTES_PER_TOKEN_VECTOR = 2 * 128 * 4
"""Memory a haystack token costs under maxsim: a 128-dimension float32 token vector (as
jina-embeddings-v4 gives), held as embedded and scaled to unit length."""
LARGE_MEMORY = 16 * 2**30
"""Memory beyond which a grid is far larger than usual (maxsim on long haystacks gets there)."""
LARGE_CASES = 50_000
"""Cases beyond which a grid is far larger than usual (the default grid has 3,920)."""
LARGE_TOKENS = 100_000_000
"""Haystack tokens beyond which a grid is far larger than usual (the default: about 9.6M)."""


@dataclass(frozen=True)
class GridSize:
    """The size of one model's grid.

    Attributes:
        cases: Case tests (needle haystacks scored, one per scoring).
        haystacks: Haystacks to embed: needle haystacks and controls.
        tokens: Tokens of every haystack together.
        memory_bytes: A rough estimate of the memory the run's plan and embeddings need.
    """

    cases: int
    haystacks: int
    tokens: int
    memory_bytes: int

    @property
    def is_large(self) -> bool:
        """Far larger than usual: past :data:`LARGE_CASES`, :data:`LARGE_TOKENS` or memory."""
        return (
            self.cases > LARGE_CASES
            or self.tokens > LARGE_TOKENS
            or self.memory_bytes > LARGE_MEMORY
        )

    def describe(self) -> str:
        """E.g. ``3,920 cases, 4,200 haystacks, 9.6M tokens, about 0.3 GiB of memory``."""
        return (
            f"{self.cases:,} cases, {self.haystacks:,} haystacks, {_millions(self.tokens)} "
            f"tokens, about {self.memory_bytes / 2**30:.1f} GiB of memory"
        )

    def warning(self) -> str | None:
        """The line to print before a far larger grid starts, else ``None``."""
        if not self.is_large:
            return None
        return (
            f"pytest-niah: this grid is far larger than usual ({self.describe()}); fewer "
            "--niah-positions, --niah-lengths, --niah-groups or --niah-controls make it smaller"
        )


def grid_size(config: NiahConfig, groups: int) -> GridSize:
    """Count the grid of ``config`` with ``groups`` needle groups selected.

    Arms that insert the same needles (``onehop`` and every ``expandN``) share their
    haystacks; controls are shared by every arm. Each draw of ``--niah-seeds`` is a grid.
    """
    groups *= len(config.draws)
    needle_kinds = len({"literal" if arm == "literal" else "onehop" for arm in config.arms})
    per_length = groups * len(config.orders) * config.positions
    needle_haystacks = per_length * needle_kinds * len(config.lengths)
    controls = groups * config.controls * len(config.lengths)
    cases = per_length * len(config.arms) * len(config.scoring) * len(config.lengths)
    tokens = (per_length * needle_kinds + groups * config.controls) * sum(config.lengths)
    haystacks = needle_haystacks + controls
    memory = tokens * BYTES_PER_TOKEN + haystacks * len(config.scoring) * BYTES_PER_EMBEDDING
    if MAXSIM in config.scoring:  # every haystack token's vector is held until scored
        memory += tokens * BYTES_PER_TOKEN_VECTOR
    return GridSize(cases=cases, haystacks=haystacks, tokens=tokens, memory_bytes=memory)


def _millions(count: int) -> str:
    return f"{count / 1e6:,.1f}M" if count >= 100_000 else f"{count:,}"
