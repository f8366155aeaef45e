"""Tokens per embedding batch: the configured budget, or on a GPU a batch of 32 windows."""

from __future__ import annotations

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import default
from pytest_niah.embed.gil_handoff import on_accelerator
from pytest_niah.embed.protocol import Embedder

CPU_TOKEN_BUDGET = default("token_budget")
GPU_BATCH = 32  # texts of the window per batch on a GPU (what sentence-transformers uses)
# A window longer than this counts only as long as the run's longest haystack needs: 32 x 8K
# tokens is what an 8K model is batched with, whatever the grid.
WINDOW_COUNTED = 8192


def budget(config: NiahConfig, embedder: Embedder) -> int:
    """Tokens per batch: the configured budget, or on a GPU 32 windows of tokens.

    A window past 8,192 tokens counts as the run's longest haystack (at least 8,192): a
    model with a 32K window on the 8K grid batches as an 8K model does, not 128 of the 8K
    haystacks at once.
    """
    if config.token_budget != CPU_TOKEN_BUDGET or not on_accelerator(embedder):
        return config.token_budget
    window = embedder.windows.document
    if not window:
        return config.token_budget
    return GPU_BATCH * (min(window, max(WINDOW_COUNTED, *config.lengths)) + 2)
