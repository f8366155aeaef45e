"""Handing token ids, not text, to a sentence-transformers model.

The haystack builder has already tokenized every haystack exactly once to check its length;
tokenizing it again inside ``encode`` would double the CPU work (for a static model, that is
all the work). For the two input modules that take token ids the usual way, a transformer
and a static embedding, the features ``encode`` would build are built here from the ids.
:func:`agrees_with_encode` checks on a few texts that the vectors are ``encode``'s own; a
model whose check fails is embedded through ``encode`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_niah.embed.st_loading import text_tokenizer

# A plain English sentence, and a passage past the common short windows (256, 512 tokens):
# a window shorter than it is met at its edge, where both paths cut. Past 512 tokens the two
# paths differ in nothing that length changes, and a freshly loaded 8K model's first pass
# over a few thousand tokens cost more than a small grid's whole encode.
_PROBE_SHORT = "The old sailor walked slowly along the river and thought about his family."
_PROBE_LONG = " ".join(
    [
        "Rain had fallen on the harbour town since dawn, and the fishing boats stayed in.",
        "In the bakery by the square the ovens were lit long before the first customer came.",
        "A clerk counted barrels at the warehouse door while gulls argued over the nets.",
    ]
    * 7
)
AGREEMENT = 1e-4  # 1 - cosine allowed between ids-path and encode vectors (float rounding)

# A batch of id arrays and the prompt's ids -> the features the model's forward takes.
FeatureBuilder = Callable[[Sequence[np.ndarray], Sequence[int]], dict[str, Any]]


@dataclass(frozen=True)
class Specials:
    """The special tokens a tokenizer puts around one text, and its padding id."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    pad: int

    @property
    def count(self) -> int:
        """How many special tokens a text gets."""
        return len(self.prefix) + len(self.suffix)


def specials_of(tokenizer: Any) -> Specials:
    """Find where a tokenizer's template puts special tokens, by tokenizing a probe word."""
    bare = list(tokenizer("niah", add_special_tokens=False)["input_ids"])
    full = list(tokenizer("niah", add_special_tokens=True)["input_ids"])
    for start in range(len(full) - len(bare) + 1):
        if full[start : start + len(bare)] == bare:
            pad = tokenizer.pad_token_id
            return Specials(
                tuple(full[:start]),
                tuple(full[start + len(bare) :]),
                int(pad if pad is not None else 0),
            )
    return Specials((), (), 0)


class TransformerFeatures:
    """Features of a ``Transformer`` input module built from token ids.

    Args:
        specials: The tokenizer's special tokens.
        with_types: The model takes ``token_type_ids``.
    """

    def __init__(self, specials: Specials, *, with_types: bool) -> None:
        self.specials = specials
        self.with_types = with_types

    def __call__(self, batch: Sequence[np.ndarray], prompt_ids: Sequence[int]) -> dict[str, Any]:
        """The features of a batch of id arrays, after the prompt's ids."""
        import torch

        # Rows are filled from the id arrays in numpy: a Python list per row costs as much as
        # a small model's forward pass.
        prefix = np.asarray([*self.specials.prefix, *prompt_ids], dtype=np.int64)
        suffix = np.asarray(self.specials.suffix, dtype=np.int64)
        sizes = np.array([prefix.size + ids.size + suffix.size for ids in batch], dtype=np.int64)
        ids_table = np.full((len(batch), int(sizes.max())), self.specials.pad, dtype=np.int64)
        ids_table[:, : prefix.size] = prefix
        for row, ids, size in zip(ids_table, batch, sizes, strict=True):
            row[prefix.size : size - suffix.size] = ids
            row[size - suffix.size : size] = suffix
        mask_table = (np.arange(ids_table.shape[1]) < sizes[:, None]).astype(np.int64)
        input_ids = torch.from_numpy(ids_table)
        mask = torch.from_numpy(mask_table)
        features: dict[str, Any] = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "modality": "text",
        }
        if self.with_types:
            features["token_type_ids"] = torch.zeros_like(input_ids)
        if prompt_ids:
            features["prompt_length"] = len(self.specials.prefix) + len(prompt_ids)
        return features


class StaticFeatures:
    """Features of a ``StaticEmbedding`` input module (an EmbeddingBag) built from token ids."""

    def __call__(self, batch: Sequence[np.ndarray], prompt_ids: Sequence[int]) -> dict[str, Any]:
        """The features of a batch of id arrays, after the prompt's ids."""
        import torch

        prompt = np.asarray(prompt_ids, dtype=np.int64)
        parts = [np.concatenate([prompt, ids.astype(np.int64)]) for ids in batch]
        lengths = np.array([p.size for p in parts], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        return {
            "input_ids": torch.from_numpy(
                np.concatenate(parts) if parts else np.zeros(0, np.int64)
            ),
            "offsets": torch.from_numpy(offsets),
        }


def features_builder(model: Any, specials: Callable[[], Specials]) -> FeatureBuilder | None:
    """The builder for the model's input module, or ``None`` for a module built otherwise.

    Args:
        model: The loaded ``SentenceTransformer``.
        specials: The tokenizer's special tokens (asked only for a transformer).
    """
    first = type(model[0]).__name__
    if first == "StaticEmbedding":
        return StaticFeatures()
    if first == "Transformer" and hasattr(text_tokenizer(model), "backend_tokenizer"):
        names = getattr(text_tokenizer(model), "model_input_names", [])
        return TransformerFeatures(specials(), with_types="token_type_ids" in names)
    return None


def forward(model: Any, features: dict[str, Any]) -> np.ndarray:
    """One vector per row of ``features``, from the model's forward pass (no tokenizing)."""
    import torch
    from sentence_transformers.util import batch_to_device

    with torch.inference_mode():
        out = model(batch_to_device(features, model.device))
    rows: np.ndarray = out["sentence_embedding"].float().cpu().numpy()
    return rows


def agrees_with_encode(
    encode_ids: Any, encode_texts: Any, tokenize: Any, window: int | None
) -> float:
    """The largest ``1 - cosine`` between ids-path and ``encode`` vectors of probe texts.

    Args:
        encode_ids: Embeds a list of id arrays (the ids path).
        encode_texts: Embeds a list of texts (``model.encode``).
        tokenize: Text -> (ids, end character of each token).
        window: Document tokens the model reads.
    """
    ids_batch, texts = [], []
    for text in (_PROBE_SHORT, _PROBE_LONG):
        ids, ends = tokenize(text)
        if window is not None and len(ids) > window:
            text = text[: ends[window - 1]]
            ids = ids[:window]
        ids_batch.append(np.asarray(ids, dtype=np.int64))
        texts.append(text)
    a = np.asarray(encode_ids(ids_batch), dtype=np.float64)
    b = np.asarray(encode_texts(texts), dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    # A zero vector (a broken model) has no direction: two agree, one alone does not.
    agree = np.where(~a.any(axis=1) & ~b.any(axis=1), 1.0, 0.0)
    cos = np.divide((a * b).sum(axis=1), norms, out=agree, where=norms > 0)
    return float(np.max(1.0 - cos))
