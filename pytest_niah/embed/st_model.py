"""Loading the model a sentence-transformers embedder names, and checking what loaded.

The class that loads it (a model2vec static bag, a late-interaction ``MultiVectorEncoder`` or
a plain ``SentenceTransformer``), at the hub revision its identity named, on the device and
in the dtype torch confirmed; then the window, the vocabulary, ``--niah-encode-kwargs`` and
a late-interaction model's scorings are checked against the loaded model. The embedder
(:mod:`pytest_niah.embed.st_backend`) decides when; heavy libraries load only here, inside
the functions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pytest_niah.embed import st_late_interaction as late
from pytest_niah.embed.device import Placement
from pytest_niah.embed.fast_tokenizer import check_vocabulary
from pytest_niah.embed.gc_pause import collection_paused
from pytest_niah.embed.models import is_model2vec_folder, looks_local
from pytest_niah.embed.st_loading import (
    backend_tokenizer,
    check_encode_kwargs,
    load_failure,
    quiet_transformers,
    set_window,
    static_embedding_class,
)
from pytest_niah.embed.static_memo import STATIC_MODELS
from pytest_niah.errors import EmbedderError


class ModelRequest(Protocol):
    """What a load reads from the embedder's settings."""

    name: str
    path: str
    static: bool
    trust_remote_code: bool
    model_kwargs: dict[str, Any]
    encode_kwargs: dict[str, Any]
    max_seq_length: int | None
    scorings: tuple[str, ...] | None


def sentence_transformer_class() -> Any:
    """``SentenceTransformer``, imported with transformers' progress bars off."""
    with collection_paused():
        from sentence_transformers import SentenceTransformer

    quiet_transformers()
    return SentenceTransformer


def load_model(
    request: ModelRequest,
    loader: Any,
    placement: Placement,
    revision: str | None,
    local_folder: Callable[[], Path | None],
) -> Any:
    """The model loaded on ``placement``'s first device, cast to its dtype, and checked.

    Args:
        request: The embedder's settings.
        loader: The ``SentenceTransformer`` class (:func:`sentence_transformer_class`).
        placement: The devices and dtype torch confirmed.
        revision: The hub commit the identity named (``None``: not a cached hub model).
        local_folder: The model's folder on disk, if any (asked only where it matters).

    Raises:
        EmbedderError: The model failed to load (the error says why and what to do).
    """
    try:
        with collection_paused():
            model = _construct(request, loader, placement.devices[0], revision, local_folder)
    except Exception as exc:
        raise EmbedderError(
            *load_failure(request.name, request.path, request.model_kwargs, exc)
        ) from exc
    if placement.dtype != "float32":
        import torch

        model.to(getattr(torch, placement.dtype))
    with collection_paused():
        _check_loaded(request, model)
    return model


def _construct(
    request: ModelRequest,
    loader: Any,
    device: str,
    revision: str | None,
    local_folder: Callable[[], Path | None],
) -> Any:
    path = request.path
    if request.static or (looks_local(path) and is_model2vec_folder(Path(path))):
        folder = Path(path) if looks_local(path) else local_folder()
        module = STATIC_MODELS.load(path, folder, static_embedding_class())
        return loader(modules=[module], device=device)
    kwargs: dict[str, Any] = {"trust_remote_code": request.trust_remote_code}
    if request.model_kwargs:
        kwargs["model_kwargs"] = request.model_kwargs | {
            "trust_remote_code": request.trust_remote_code
        }
    if revision is not None:
        # The identity named this commit: load it, not a newer one on the hub.
        kwargs["revision"] = revision
    if late.is_late_interaction_source(path, local_folder(), revision):
        return late.load_late_interaction(path, device, kwargs)
    return loader(path, device=device, **kwargs)


def _check_loaded(request: ModelRequest, model: Any) -> None:
    if request.static:
        first: Any = model[0]
        first.tokenizer.no_truncation()  # read every token: the model has no window
    # Before the window is set: a window of one token must not read as a missing vocabulary.
    check_vocabulary(request.name, backend_tokenizer(request.name, model))
    if request.max_seq_length is not None:
        set_window(request.name, model, request.max_seq_length)
    check_encode_kwargs(request.name, model, request.encode_kwargs)
    if late.is_late_interaction(model):  # a hub model that was not in the cache until now
        late.check_late_interaction_options(request.name, request.scorings, request.encode_kwargs)
