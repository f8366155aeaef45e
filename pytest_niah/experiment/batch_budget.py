"""Tokens per embedding batch: the configured budget, or on a GPU 32 of the longest inputs."""

from __future__ import annotations

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import default
from pytest_niah.embed.protocol import Embedder

CPU_TOKEN_BUDGET = default("token_budget")
GPU_BATCH = 32  # texts per batch of the longest the model reads (sentence-transformers' batch)


def budget(config: NiahConfig, embedder: Embedder) -> int:
    """Tokens per batch: the configured budget, or on a GPU 32 of the run's longest inputs.

    The longest input is the longest haystack, or the window where that is shorter: a
    model with a long window (32K) on an 8K grid then batches the 8K haystacks as a
    sentence-transformers batch of 32 would, not 128 of them.
    """
    placement = getattr(embedder, "placement", None)
    if (
        config.token_budget != CPU_TOKEN_BUDGET
        or placement is None
        or placement.device_type == "cpu"
    ):
        return config.token_budget
    window = embedder.windows.document
    if not window:
        return config.token_budget
    return GPU_BATCH * (min(window, max(config.lengths)) + 2)
