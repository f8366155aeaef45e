"""A sentence-transformers model's identity: its files or hub revision, and its settings.

Cheap: nothing here loads the model or imports torch. The folder is found by the embedder
(:mod:`pytest_niah.embed.st_backend`): a local one, the hub cache's snapshot, or the one
the loaded model came from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from pytest_niah.embed import st_late_interaction as late
from pytest_niah.embed.device import Placement
from pytest_niah.embed.identity import ModelIdentity, folder_source, model_identity
from pytest_niah.embed.st_model import ModelRequest


class ModelSettings(ModelRequest, Protocol):
    """What the identity reads of the embedder's settings: the load's, and how it runs."""

    memo_dir: Path | None
    placement: Placement
    query_prompt: str
    doc_prompt: str
    query_prompt_name: str
    doc_prompt_name: str


def st_identity(embedder: ModelSettings, folder: Path | None) -> ModelIdentity:
    """Content of the model files in ``folder`` (or hub revision), settings and versions."""
    source = (
        folder_source(folder, embedder.memo_dir) if folder is not None else {"name": embedder.name}
    )
    settings = {
        "device_type": embedder.placement.device_type,
        "dtype": embedder.placement.dtype,
        "max_seq_length": embedder.max_seq_length,
        "query_prompt": embedder.query_prompt,
        "doc_prompt": embedder.doc_prompt,
        "model_kwargs": embedder.model_kwargs,
        "encode_kwargs": embedder.encode_kwargs,
        "reads_every_token": embedder.static,
    }
    for key in ("query_prompt_name", "doc_prompt_name"):  # where a preset names one
        settings |= {key: getattr(embedder, key)} if getattr(embedder, key) else {}
    if late.is_late_interaction_folder(folder):  # loaded as such, not converted to dense
        settings["model_class"] = late.MULTI_VECTOR_ENCODER
    return model_identity(source, settings)


def hub_revision(identity: ModelIdentity) -> str | None:
    """The hub commit an identity names: a whole hub repository's, else ``None``."""
    source = identity.parts["source"]
    if source.get("kind") != "hub" or "subfolder" in source:
        return None
    return str(source["revision"])
