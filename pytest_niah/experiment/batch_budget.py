"""Tokens per embedding batch: the configured budget, else one fitted to the device.

Left at its default, the budget is a batch of full windows on a GPU, and on a CPU 4,096
tokens for a model with a window: a transformer's small batches stay in the CPU's caches
(the packaged MiniLM ran 8-18% faster at 4,096 than at 16,384 tokens per batch on 2 cores).
"""

from __future__ import annotations

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import default
from pytest_niah.embed.protocol import Embedder

CPU_TOKEN_BUDGET = default("token_budget")
GPU_BATCH = 32  # texts of the full window per batch on a GPU (what sentence-transformers uses)
CPU_WINDOW_BUDGET = 4096  # tokens per batch on a CPU for a model with a window


def budget(config: NiahConfig, embedder: Embedder) -> int:
    """Tokens per batch: the configured budget, or one fitted to the device (module doc)."""
    placement = getattr(embedder, "placement", None)
    if config.token_budget != CPU_TOKEN_BUDGET or placement is None:
        return config.token_budget
    window = embedder.windows.document
    if window is None:  # a static model: batches of any size cost the same per token
        return config.token_budget
    if placement.device_type == "cpu":
        return CPU_WINDOW_BUDGET
    return GPU_BATCH * (window + 2)
