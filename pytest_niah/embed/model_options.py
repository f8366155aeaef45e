"""The rules for ``--niah-model-kwargs`` and ``--niah-encode-kwargs``, checked before loading.

A keyword argument a model never reads must not run without a word: the run would be
labelled with a setting that changed nothing (and a dtype the model does not run in).
:func:`check_model_options` needs neither torch nor the model and can run at configure time;
:func:`unread_model_kwarg` turns transformers' ``unexpected keyword argument`` at load time
into an error that names the key instead of the model folder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_niah.embed.models import is_static_model
from pytest_niah.errors import ConfigError

# encode() arguments pytest-niah sets itself: a user value would break what it measures.
ENGINE_OWNED = {
    "batch_size": "pytest-niah batches inputs itself (see --niah-token-budget)",
    "convert_to_numpy": "pytest-niah reads float32 arrays",
    "convert_to_tensor": "pytest-niah reads float32 arrays",
    "output_value": "pytest-niah scores sentence embeddings",
    "precision": "pytest-niah scores float32 embeddings; quantized ones change the scores",
    "normalize_embeddings": "pytest-niah normalizes for the cosine itself",
    "show_progress_bar": "pytest-niah shows its own progress",
    "device": "use --niah-device",
    "pool": "use --niah-device=cuda:0,cuda:1",
    "chunk_size": "use --niah-device=cuda:0,cuda:1",
    "prompt": "use --niah-query-prompt / --niah-doc-prompt",
    "prompt_name": "use --niah-query-prompt / --niah-doc-prompt",
}
_UNEXPECTED = re.compile(r"unexpected keyword argument '(?P<key>[^']+)'")


def check_model_options(
    name: str,
    model_kwargs: Mapping[str, Any],
    encode_kwargs: Mapping[str, Any],
    *,
    static: bool | None = None,
) -> None:
    """Refuse keyword arguments pytest-niah owns, a model would ignore, or that cannot work.

    Keys of ``model_kwargs`` a transformers model does not take are known only when it loads
    (they go to its class); :func:`unread_model_kwarg` names them then.

    Args:
        name: The model, for messages.
        model_kwargs: ``--niah-model-kwargs``.
        encode_kwargs: ``--niah-encode-kwargs`` (the preset's included).
        static: The model is a static embedding bag (model2vec), which loads no transformers
            model and so reads no model keyword argument; ``None``: tell from ``name``.

    Raises:
        ConfigError: naming the key and the fix.
    """
    check_encode_kwargs(encode_kwargs)
    if static is None:
        static = bool(model_kwargs) and is_static_model(name)
    if static and model_kwargs:
        keys = ", ".join(map(repr, sorted(model_kwargs)))
        raise ConfigError(
            f"--niah-model-kwargs: model {name!r} is a static model (model2vec), which loads no "
            f"transformers model: {keys} would be ignored",
            "drop --niah-model-kwargs for this model",
        )


def check_encode_kwargs(encode_kwargs: Mapping[str, Any]) -> None:
    """Refuse ``encode()`` arguments pytest-niah sets itself, and a ``truncate_dim`` below 1.

    Raises:
        ConfigError: naming the key and the fix.
    """
    owned = sorted(set(encode_kwargs) & set(ENGINE_OWNED))
    if owned:
        key = owned[0]
        raise ConfigError(
            f"--niah-encode-kwargs: {key!r} is set by pytest-niah itself",
            f"remove it ({ENGINE_OWNED[key]})",
        )
    dims = encode_kwargs.get("truncate_dim")
    if dims is not None and (not isinstance(dims, int) or isinstance(dims, bool) or dims < 1):
        raise ConfigError(
            f"--niah-encode-kwargs: truncate_dim must be a whole number of dimensions, 1 or "
            f"more (got {dims!r})",
            "give how many leading dimensions to keep, e.g. 256, or drop truncate_dim to keep "
            "them all",
        )


def check_truncate_dim(name: str, encode_kwargs: Mapping[str, Any], dimensions: int | None) -> None:
    """Refuse a ``truncate_dim`` larger than the model's embeddings (it would keep them all).

    Raises:
        ConfigError: naming the model's dimension.
    """
    dims = encode_kwargs.get("truncate_dim")
    if isinstance(dims, int) and dimensions is not None and dims > dimensions:
        raise ConfigError(
            f"--niah-encode-kwargs: truncate_dim={dims} is more than the {dimensions} "
            f"dimensions of model {name!r}'s embeddings",
            f"give at most {dimensions}, or drop truncate_dim",
        )


def unread_model_kwarg(exc: BaseException, model_kwargs: Mapping[str, Any]) -> str | None:
    """The ``--niah-model-kwargs`` key a load failure says the model does not take, if any."""
    found = _UNEXPECTED.search(str(exc))
    if found is not None and found["key"] in model_kwargs:
        return found["key"]
    return None
