"""Tokens per embedding batch: the configured budget, or on a GPU a batch of full windows."""

from __future__ import annotations

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import default
from pytest_niah.embed.protocol import Embedder

CPU_TOKEN_BUDGET = default("token_budget")
GPU_BATCH = 32  # texts of the full window per batch on a GPU (what sentence-transformers uses)


def budget(config: NiahConfig, embedder: Embedder) -> int:
    """Tokens per batch: the configured budget, or on a GPU a full batch of full windows."""
    placement = getattr(embedder, "placement", None)
    if (
        config.token_budget != CPU_TOKEN_BUDGET
        or placement is None
        or placement.device_type == "cpu"
    ):
        return config.token_budget
    window = embedder.windows.document
    return GPU_BATCH * (window + 2) if window else config.token_budget
