"""The ids path of a sentence-transformers model: features from token ids, where they agree.

A model reads its inputs as the haystack builder's token ids only where nothing ``encode``
does is lost (no encode keyword arguments, one device, not a late-interaction model) and a
probe finds the ids' vectors to be ``encode``'s own, for each prompt
(:func:`~pytest_niah.embed.st_inputs.agrees_with_encode`); any other reads text.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from pytest_niah.embed import st_late_interaction as late
from pytest_niah.embed.device import Placement
from pytest_niah.embed.fast_tokenizer import HaystackTokenizer
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.st_inputs import (
    AGREEMENT,
    FeatureBuilder,
    Specials,
    agrees_with_encode,
    features_builder,
)
from pytest_niah.errors import NiahError
from pytest_niah.haystacks.plan import QUERY


class TextsAndIds(Protocol):
    """What the ids path's probe reads of the embedder: both ways in, and what they share."""

    name: str
    notes: list[str]
    encode_kwargs: dict[str, Any]
    placement: Placement

    @property
    def model(self) -> Any:
        """The loaded model."""

    @property
    def tokenizer(self) -> HaystackTokenizer:
        """The haystack tokenizer."""

    @property
    def specials(self) -> Specials:
        """The special tokens the tokenizer's template adds around a text."""

    @property
    def prompt_ids(self) -> dict[str, tuple[int, ...]]:
        """The token ids of the prompt before questions and before documents."""

    @property
    def windows(self) -> Windows:
        """Window minus special and prompt tokens, for questions and documents."""

    def prompt(self, kind: str) -> str:
        """The prompt before every input of ``kind``."""

    def forward(self, features: dict[str, Any]) -> np.ndarray:
        """Embed features built from ids."""

    def encode_texts(self, texts: list[str], prompt: str) -> np.ndarray:
        """Embed texts through the model's own ``encode``, after ``prompt``."""


def ids_path(embedder: TextsAndIds) -> FeatureBuilder | None:
    """How to build features from ids, or ``None`` where only ``encode`` is right."""
    model = embedder.model
    if (
        embedder.encode_kwargs
        or len(embedder.placement.devices) > 1
        or late.is_late_interaction(model)
    ):
        return None
    build = features_builder(model, lambda: embedder.specials)
    if build is None:
        return None

    def tokenize(text: str) -> tuple[list[int], list[int]]:
        encoding = embedder.tokenizer.encode_batch([text])[0]
        return list(encoding.ids), [end for _, end in encoding.offsets]

    def gap_of(kind: str) -> float:
        prompt_ids, prompt = embedder.prompt_ids[kind], embedder.prompt(kind)
        window = embedder.windows.query if kind == QUERY else embedder.windows.document
        return agrees_with_encode(
            lambda batch: embedder.forward(build(batch, prompt_ids)),
            lambda texts: embedder.encode_texts(list(texts), prompt),
            tokenize,
            window,
        )

    # Each prompt is probed: one may tokenize differently when joined to the text.
    same = embedder.prompt_ids[QUERY] == embedder.prompt_ids["document"]
    try:
        gap = max(gap_of(kind) for kind in (("document",) if same else (QUERY, "document")))
    except NiahError:
        raise
    except Exception:  # the model's own code refused the probe: encode() reports why
        return None
    if gap > AGREEMENT * (1 if embedder.placement.dtype == "float32" else 100):
        embedder.notes.append(
            f"{embedder.name}: token ids give other vectors than encode() (1 - cosine {gap:.1e}); "
            "embedding through encode()"
        )
        return None
    return build
