"""Loading a sentence-transformers model: the pieces around ``SentenceTransformer(...)``.

What :mod:`pytest_niah.embed.st_backend` needs to load a model: the static embedding class
(it moved in sentence-transformers 6), the window (``--niah-max-seq-length``) and what it
leaves for text, the fast tokenizer inside the model, the check of ``--niah-encode-kwargs``
against the loaded model, and the error a failed load gives. Heavy libraries are imported
inside the functions that need them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_niah.embed.model_options import check_truncate_dim, unread_model_kwarg
from pytest_niah.embed.models import looks_local
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.st_late_interaction import (
    is_late_interaction,
    own_token_limits,
    set_document_length,
)
from pytest_niah.errors import ConfigError, EmbedderError
from pytest_niah.haystacks.plan import QUERY


def is_static_embedding(model: Any) -> bool:
    """The model's input module is a static embedding bag (model2vec, StaticEmbedding)."""
    return type(model[0]).__name__ == "StaticEmbedding"


def static_embedding_class() -> Any:
    """sentence-transformers' StaticEmbedding class (it moved in version 6)."""
    try:
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import StaticEmbedding  # type: ignore[import-not-found,no-redef]
    return StaticEmbedding


def check_window(name: str, model: Any, requested: int) -> None:
    """Refuse a window past the model's position embeddings.

    Raises:
        ConfigError: ``requested`` is more than the model can read.
    """
    limit = getattr(
        getattr(getattr(model[0], "auto_model", None), "config", None),
        "max_position_embeddings",
        None,
    )
    if isinstance(limit, int) and requested > limit:
        raise ConfigError(
            f"--niah-max-seq-length={requested} is more than model {name!r} can read "
            f"(its position embeddings stop at {limit})",
            f"give at most {limit}",
        )


def set_window(name: str, model: Any, requested: int) -> None:
    """Make the model read at most ``requested`` tokens (``--niah-max-seq-length``).

    A static model (an embedding bag) has no window of its own; its tokenizer is set to cut
    every text after ``requested`` tokens instead, which reads exactly like a window. A
    late-interaction model reads ``requested`` tokens of each document (its query length
    stays its own).

    Raises:
        ConfigError: more than the model can read, or a model whose window cannot be set.
    """
    if is_static_embedding(model):
        tokenizer: Any = getattr(model[0], "tokenizer", None)
        if hasattr(tokenizer, "enable_truncation"):
            tokenizer.enable_truncation(requested)
            return
    check_window(name, model, requested)
    if is_late_interaction(model):
        set_document_length(model, requested)
        return
    try:
        model.max_seq_length = requested
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"--niah-max-seq-length={requested}: the window of model {name!r} cannot be set "
            f"({type(model[0]).__name__} has none to set: {exc})",
            "drop --niah-max-seq-length for this model",
        ) from None


def declared_window(model: Any) -> int | None:
    """Tokens the model reads of a text, special and prompt tokens in (``None``: every one)."""
    limits = []
    seq = model.max_seq_length
    if seq is not None and not (isinstance(seq, float) and math.isinf(seq)):
        limits.append(int(seq))
    truncation = getattr(getattr(model[0], "tokenizer", None), "truncation", None)
    if is_static_embedding(model) and isinstance(truncation, dict) and truncation.get("max_length"):
        # sentence-transformers reports no limit (inf) for a static model, but its tokenizer
        # cuts every text before the model sees it (model2vec folders: 512 tokens). Only
        # packaged-static has truncation switched off, to read every token.
        limits.append(int(truncation["max_length"]))
    return min(limits) if limits else None


def token_limits(model: Any) -> tuple[int | None, int | None]:
    """Tokens the model reads of a question and of a document, special and prompt tokens in.

    One window for both, except on a late-interaction model (its own lengths for each).
    """
    window = declared_window(model)
    return own_token_limits(model, window) if is_late_interaction(model) else (window, window)


def text_windows(
    name: str, query_limit: int, window: int, specials: int, prompt_ids: Mapping[str, Sequence[int]]
) -> Windows:
    """What the windows leave for text once the special tokens and each kind's prompt are in.

    Raises:
        ConfigError: A window leaves no token of text to read.
    """
    limits = {QUERY: query_limit, "document": window}
    reads = {kind: limits[kind] - specials - len(ids) for kind, ids in prompt_ids.items()}
    if min(reads.values()) < 1:
        prompts = max(len(ids) for ids in prompt_ids.values())
        raise ConfigError(
            f"a window of {window} tokens leaves model {name!r} no token of text to "
            f"read: it adds {specials} special tokens"
            + (f" and its prompt takes {prompts}" if prompts else ""),
            f"give --niah-max-seq-length={specials + prompts + 1} or more (the window "
            "counts the special tokens), or drop it to use the model's own window",
        )
    return Windows(reads[QUERY], reads["document"])


def source_folder(model: Any) -> Path | None:
    """The folder the weights were read from (a local path or the hub cache snapshot)."""
    try:
        path = Path(model[0].auto_model.config._name_or_path)
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    return path if path.is_dir() else None


def quiet_transformers() -> None:
    """No "Loading weights" bar: it lands in every captured test output."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except (ImportError, AttributeError):  # pragma: no cover - older transformers
        pass


def text_tokenizer(model: Any) -> Any:
    """The tokenizer of the model's first module, or of its processor (``None`` if neither).

    jina-embeddings-v4's own module holds a processor (its ``.tokenizer`` reads text) and
    no tokenizer of its own.
    """
    first = model[0]
    tokenizer = getattr(first, "tokenizer", None)
    if tokenizer is None:
        tokenizer = getattr(getattr(first, "processor", None), "tokenizer", None)
    return tokenizer


def backend_tokenizer(name: str, model: Any) -> Any:
    """The ``tokenizers.Tokenizer`` inside ``model``: a fast one, with character offsets.

    Raises:
        EmbedderError: the model has only a slow (Python) tokenizer.
    """
    tokenizer = text_tokenizer(model)
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    if backend is None or not hasattr(backend, "encode_batch"):
        raise EmbedderError(
            f"model {name!r} has no fast (Rust) tokenizer with character offsets, which "
            "pytest-niah needs to build haystacks of exact token lengths",
            "save the model with a tokenizer.json (AutoTokenizer.from_pretrained(..., "
            "use_fast=True).save_pretrained)",
        )
    return backend


def check_encode_kwargs(name: str, model: Any, encode_kwargs: Mapping[str, Any]) -> None:
    """Refuse ``--niah-encode-kwargs`` the loaded model's ``encode`` does not take.

    Raises:
        ConfigError: an unknown keyword, or a ``truncate_dim`` past the model's dimension.
    """
    accepted = set(model.get_model_kwargs()) | {"task", "processing_kwargs", "truncate_dim"}
    unknown = sorted(set(encode_kwargs) - accepted)
    if unknown:
        raise ConfigError(
            f"--niah-encode-kwargs: model {name!r} takes no " + ", ".join(map(repr, unknown)),
            "remove it; this model's encode() accepts "
            + (", ".join(sorted(accepted)) or "no extra keyword arguments"),
        )
    # get_sentence_embedding_dimension was renamed in sentence-transformers 6.
    dimension = getattr(model, "get_embedding_dimension", None)
    if dimension is None:
        dimension = model.get_sentence_embedding_dimension
    check_truncate_dim(name, encode_kwargs, dimension())


def load_failure(
    name: str, path: str, model_kwargs: Mapping[str, Any], exc: Exception
) -> tuple[str, str]:
    """The problem and the fix hint for a model that failed to load with ``exc``."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    problem = f"could not load model {name!r} ({type(exc).__name__}: {first})"
    unread = unread_model_kwarg(exc, model_kwargs)
    if unread is not None:
        return (
            f"--niah-model-kwargs: model {name!r} takes no {unread!r} "
            f"({type(exc).__name__}: {first})",
            f"remove {unread!r}; model_kwargs go to transformers' from_pretrained() and the "
            "model class (e.g. attn_implementation), as its model card documents",
        )
    if "trust_remote_code" in str(exc):
        return (
            problem,
            "this model runs its own code; if you trust it, add --niah-trust-remote-code",
        )
    if looks_local(path):
        return problem, (
            f"the folder {path!r} does not hold a model sentence-transformers can load; "
            "check that it has config.json, the weights and the tokenizer files, or save the "
            "model again with SentenceTransformer.save(...)"
        )
    if os.environ.get("HF_HUB_OFFLINE") == "1" or "offline" in str(exc).lower():
        return problem, (
            "the hub is offline here, so the model must already be in the Hugging Face cache "
            "or be a local folder; download it once with network access, or pass a local path"
        )
    return problem, "check the hub name (org/model) or the local folder, and the network"
