"""Offline runs: a hub model that is not in the Hugging Face cache is refused up front."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pytest_niah.errors import EmbedderError


def hub_offline(environ: Mapping[str, str] | None = None) -> bool:
    """``HF_HUB_OFFLINE`` set the way huggingface_hub reads it (1, true, yes, on)."""
    value = (os.environ if environ is None else environ).get("HF_HUB_OFFLINE", "")
    return value.strip().upper() in {"1", "TRUE", "YES", "ON"}


def check_hub_cache(name: str) -> None:
    """Offline, a hub model must already be in the Hugging Face cache: say so before any run.

    Loading would otherwise find out only after collection, and slowly. Only the cache
    folder is looked at (no hub library is loaded). sentence-transformers also tries a bare
    name under ``sentence-transformers/``, so both count.

    Raises:
        EmbedderError: ``HF_HUB_OFFLINE`` is set and no snapshot of the model is cached.
    """
    if not hub_offline():
        return
    from huggingface_hub import constants

    cache = Path(constants.HF_HUB_CACHE)
    ids = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    for repo in ids:
        snapshots = cache / f"models--{repo.replace('/', '--')}" / "snapshots"
        if snapshots.is_dir() and any(snapshots.iterdir()):
            return
    raise EmbedderError(
        f"could not load model {name!r}: it is not in the Hugging Face cache ({cache}) and "
        "the hub is offline here (HF_HUB_OFFLINE=1)",
        "the hub is offline here, so the model must already be in the Hugging Face cache or "
        "be a local folder; download it once with network access (run without "
        "HF_HUB_OFFLINE, or restore the cache, e.g. actions/cache on ~/.cache/huggingface), "
        "or pass a local path",
    )
