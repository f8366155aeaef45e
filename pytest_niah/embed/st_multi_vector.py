"""Prompts by name and token vectors: what jina-embeddings-v4 needs besides ``encode``.

jinaai/jina-embeddings-v4 names its prompts (``prompt_name="query"`` is ``"Query: "``) and gives
token vectors (multi-vector output, for ``--niah-scoring=maxsim``) only through the
transformers model its sentence-transformers module holds: ``model[0].model.encode_text(texts,
task=..., prompt_name=..., return_multivector=True)`` returns one tokens x 128 tensor per text
(https://huggingface.co/jinaai/jina-embeddings-v4, modeling_jina_embeddings_v4.py).
:func:`token_vector_encoder` finds that method on any model that has it; torch is imported by
the caller's model only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from pytest_niah.embed.models import no_token_vectors
from pytest_niah.errors import ConfigError

MULTIVECTOR_SWITCH = "return_multivector"


def named_prompt(name: str, prompts: Mapping[str, Any], prompt_name: str) -> str:
    """The text of the model's prompt ``prompt_name`` (its ``prompts``, as ``prompt_name=``).

    Raises:
        ConfigError: the model has no prompt of that name.
    """
    if prompt_name not in prompts:
        known = ", ".join(map(repr, sorted(prompts))) or "none"
        raise ConfigError(
            f"model {name!r} has no prompt named {prompt_name!r} (its prompts: {known}), which "
            "its preset reads",
            "give the prompt's text with --niah-query-prompt and --niah-doc-prompt, or check "
            "that the model is the one the preset was written for",
        )
    return str(prompts[prompt_name] or "")


def token_vector_encoder(model: Any) -> Callable[..., Any] | None:
    """``encode_text`` of the model's own transformers model, where it returns token vectors.

    That is the model the first sentence-transformers module holds as ``.model`` (as
    jina-embeddings-v4's ``custom_st.Transformer`` does), whose ``encode_text`` takes
    ``return_multivector``; ``None`` for every other model.
    """
    try:
        first = model[0]
    except (IndexError, KeyError, TypeError):
        return None
    encode_text = getattr(getattr(first, "model", None), "encode_text", None)
    if not callable(encode_text):
        return None
    try:
        parameters = inspect.signature(encode_text).parameters
    except (TypeError, ValueError):
        return None
    return encode_text if MULTIVECTOR_SWITCH in parameters else None


def encode_token_vectors(
    name: str,
    encode_text: Callable[..., Any] | None,
    texts: Sequence[str],
    *,
    task: Any,
    prompt_name: str,
    explicit_prompt: str,
    max_length: int | None,
) -> list[np.ndarray]:
    """One tokens x dimensions float32 array per text, from ``encode_text``.

    ``encode_text`` puts the prompt before each text itself (by ``prompt_name``), so a prompt
    given as text (``--niah-query-prompt``, ``--niah-doc-prompt``) cannot be honoured.

    Raises:
        ConfigError: no ``encode_text`` (the model gives one vector per text), or a prompt
            given as text.
    """
    if encode_text is None:
        raise no_token_vectors(name)
    if explicit_prompt:
        raise ConfigError(
            f"--niah-scoring=maxsim: model {name!r} puts its own prompt before each text (by "
            f"prompt name), so the prompt {explicit_prompt!r} given as text cannot be used",
            "drop --niah-query-prompt and --niah-doc-prompt for maxsim (the preset names the "
            "model's prompts), or score this model with whole, chunk-max or chunk-mean",
        )
    kwargs: dict[str, Any] = {MULTIVECTOR_SWITCH: True, "batch_size": max(len(texts), 1)}
    if task is not None:
        kwargs["task"] = task
    if prompt_name:
        kwargs["prompt_name"] = prompt_name
    if max_length is not None:
        kwargs["max_length"] = max_length
    rows = encode_text(texts=list(texts), **kwargs)
    if not isinstance(rows, list):  # one text gives one tensor
        rows = [rows] if len(texts) == 1 else list(rows)
    return [_float32(r) for r in rows]


def _float32(rows: Any) -> np.ndarray:
    if hasattr(rows, "detach"):
        rows = rows.detach().float().cpu().numpy()
    return np.asarray(rows, dtype=np.float32)
