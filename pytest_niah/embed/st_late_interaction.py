"""Late-interaction (ColBERT-style) models through sentence-transformers' MultiVectorEncoder.

A folder that sentence-transformers saved as a ``MultiVectorEncoder`` (``model_type`` in its
``config_sentence_transformers.json``), a PyLate save (``"ColBERT"``, or PyLate's own keys
such as ``query_prefix``) or a Stanford ColBERT checkpoint (``HF_ColBERT``) gives one vector
per token, not one per text. ``SentenceTransformer(folder)`` would load it anyway, silently
converted to the mean-pooled backbone without its projection, so such a folder is loaded
with ``MultiVectorEncoder`` instead, and read through its ``encode_query`` /
``encode_document``: the model's own query/document markers (its prompts), query length
(and query expansion) and document length, and its skiplist (punctuation dropped from
documents) all apply as its authors set them.

Such a model is measured with ``--niah-scoring=maxsim`` only: ``whole`` and the chunk
scorings would score one vector per text that it was never trained to give, so they are
refused before anything loads where the folder can be read (else once the model loads).
The window probe still needs one vector per text: :func:`pooled` (the mean of the token
vectors) serves it, and is never scored. Nothing here imports torch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.plan import QUERY, base_kind, is_multi

MULTI_VECTOR_ENCODER = "MultiVectorEncoder"
# The model types a MultiVectorEncoder loads as its own (PyLate 3 writes "ColBERT").
LATE_INTERACTION_TYPES = frozenset({MULTI_VECTOR_ENCODER, "ColBERT"})
# Keys only PyLate's ColBERT writes to config_sentence_transformers.json (PyLate 1 and 2 wrote
# no model type): sentence-transformers' MultiVectorEncoder reads them as a ColBERT save.
PYLATE_KEYS = ("query_prefix", "document_prefix", "do_query_expansion", "skiplist_words")
STANFORD_ARCHITECTURE = "HF_ColBERT"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_late_interaction_folder(folder: Path | None) -> bool:
    """Whether the model saved in ``folder`` gives token vectors (a MultiVectorEncoder)."""
    if folder is None:
        return False
    settings = _json(folder / "config_sentence_transformers.json")
    if isinstance(settings, dict):
        model_type = settings.get("model_type")
        if model_type is not None:
            return model_type in LATE_INTERACTION_TYPES
        if any(key in settings for key in PYLATE_KEYS):
            return True
    config = _json(folder / "config.json")
    architectures = config.get("architectures") if isinstance(config, dict) else None
    return isinstance(architectures, list) and STANFORD_ARCHITECTURE in architectures


def is_late_interaction_hub_model(name: str, revision: str | None) -> bool:
    """Whether a hub model gives token vectors, from its two small config files.

    Only called where the model is about to be downloaded anyway (it is not in the cache).
    """
    from sentence_transformers.util import load_file_path

    found = None
    for file_name in ("config_sentence_transformers.json", "config.json"):
        try:
            found = found or load_file_path(name, file_name, revision=revision)
        except Exception:  # offline or unknown: loading the model reports why
            continue
    return found is not None and is_late_interaction_folder(Path(found).parent)


def is_late_interaction(model: Any) -> bool:
    """Whether a loaded model is a MultiVectorEncoder (by class, without importing it)."""
    return any(c.__name__ == MULTI_VECTOR_ENCODER for c in type(model).__mro__)


def single_vector_scorings_refused(name: str, scorings: Sequence[str]) -> ConfigError | None:
    """The error for scorings other than maxsim on a late-interaction model, if any are asked."""
    others = [s for s in scorings if s != MAXSIM]
    if not others:
        return None
    return ConfigError(
        f"--niah-scoring={','.join(others)}: model {name!r} is a late-interaction "
        "(multi-vector, ColBERT-style) model: it gives one vector per token, and scoring one "
        "vector per text would measure a vector it was never trained to give",
        "use --niah-scoring=maxsim for this model (it scores its token vectors by MaxSim)",
    )


def is_late_interaction_source(path: str, folder: Path | None, revision: str | None) -> bool:
    """Whether the model to load gives token vectors: from its folder, else from the hub."""
    if folder is not None:
        return is_late_interaction_folder(folder)
    return is_late_interaction_hub_model(path, revision)


def check_late_interaction_options(
    name: str, scorings: Sequence[str] | None, encode_kwargs: Mapping[str, Any]
) -> None:
    """Refuse what a late-interaction model cannot honour: scorings but maxsim, encode kwargs.

    Raises:
        ConfigError: :func:`single_vector_scorings_refused`'s error, or encode keyword
            arguments (``encode_query``/``encode_document`` are called with none).
    """
    refused = single_vector_scorings_refused(name, scorings or ())
    if refused is not None:
        raise refused
    if encode_kwargs:
        keys = ", ".join(map(repr, sorted(encode_kwargs)))
        raise ConfigError(
            f"--niah-encode-kwargs: model {name!r} is a late-interaction model, read through "
            f"its encode_query/encode_document, which {keys} would not reach",
            "drop --niah-encode-kwargs for this model (its lengths and markers are its own; "
            "--niah-max-seq-length sets its document length)",
        )


def load_late_interaction(path: str, device: str, kwargs: dict[str, Any]) -> Any:
    """``MultiVectorEncoder(path, device=..., **kwargs)`` (the same keywords as the dense load)."""
    from sentence_transformers import MultiVectorEncoder

    return MultiVectorEncoder(path, device=device, **kwargs)


def own_token_limits(model: Any, default: int | None) -> tuple[int | None, int | None]:
    """Tokens a late-interaction model reads of a question and of a document, specials in.

    A document reads its ``document_length`` (else ``default``, the tokenizer's limit), a
    question its ``query_length``, but a fixed query expansion pads and cuts every question
    to its length (ColBERT's 32 tokens).
    """
    first = model[0]
    document = getattr(first, "document_length", None) or default
    query = getattr(first, "query_length", None) or default
    expansion = getattr(first, "query_expansion", None)
    if isinstance(expansion, dict) and expansion.get("length"):
        if expansion.get("strategy") == "fixed":
            query = expansion["length"]
        else:  # "min" pads short questions; query_length still cuts long ones
            query = max(query or 0, expansion["length"]) or None
    return (int(query) if query else None, int(document) if document else None)


def set_document_length(model: Any, requested: int) -> None:
    """Make the model read ``requested`` tokens of a document (``--niah-max-seq-length``)."""
    model[0].document_length = requested


def encode_token_vectors(
    model: Any, texts: Sequence[str], *, query: bool, prompt: str
) -> list[np.ndarray]:
    """One tokens x dimensions float32 array per text, from encode_query or encode_document.

    ``prompt`` is the text before each one: the model's own marker (its ``query`` or
    ``document`` prompt) unless ``--niah-query-prompt``/``--niah-doc-prompt`` gave another.
    """
    encode = model.encode_query if query else model.encode_document
    rows = encode(
        list(texts),
        prompt=prompt,
        batch_size=max(len(texts), 1),
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return [np.asarray(r, dtype=np.float32) for r in rows]


def encode_inputs(model: Any, texts: Sequence[str], kind: str, prompt: str) -> Any:
    """Token vectors of inputs of ``kind`` (one array per text), or their means.

    Means for a plain kind (not ``-multi``): the window probe's texts, and the questions and
    needles the plan also reads as one vector; no scoring reads those on such a model.
    """
    vectors = encode_token_vectors(model, texts, query=base_kind(kind) == QUERY, prompt=prompt)
    return vectors if is_multi(kind) else pooled(vectors)


def pooled(token_vectors: Sequence[np.ndarray]) -> np.ndarray:
    """One vector per text, the mean of its token vectors: for the window probe only."""
    return np.stack([np.asarray(v, dtype=np.float32).mean(axis=0) for v in token_vectors])
