"""The embedding plan: which model inputs a run needs, and which haystack reads which.

A *model input* is what the model actually reads: token ids, cut to the model's window. Its
key is a hash of those ids, so texts the model reads alike (a long haystack and its control,
when the needle lies past a short window) are one input, embedded once, and score exactly
alike, whether their vectors come from this run or from the cache. Each haystack records the
keys of its pieces per scoring (itself, or its chunks), and whether the model can tell it
from its own control at all (``unread``): then it cannot, by construction.

The ``maxsim`` scoring reads the model's token vectors (multi-vector output) instead of one
vector per text: its inputs are of the kinds :func:`multi_kind` names (``query-multi``,
``document-multi``), so their keys differ from those of the same tokens read as one vector.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_niah.config.vocabulary import MAXSIM, WHOLE_HAYSTACK
from pytest_niah.haystacks.chunking import chunk_bounds
from pytest_niah.haystacks.haystack import Block, Haystack
from pytest_niah.haystacks.tokens import Encoded

QUERY = "query"
DOCUMENT = "document"
MULTI = "-multi"  # the suffix of the kinds read as token vectors (--niah-scoring=maxsim)


def multi_kind(kind: str) -> str:
    """The kind of ``kind``'s inputs read as token vectors: ``document`` -> ``document-multi``."""
    return kind + MULTI


def is_multi(kind: str) -> bool:
    """Whether inputs of ``kind`` are read as token vectors (one vector per token)."""
    return kind.endswith(MULTI)


def base_kind(kind: str) -> str:
    """``query`` or ``document``: which prompt an input of ``kind`` is read with."""
    return kind.removesuffix(MULTI)


@dataclass(frozen=True)
class ModelInput:
    """One input of the model: the token ids it reads, and the same as text.

    Attributes:
        key: sha256 (hex) of the kind and the ids: equal keys, equal embeddings.
        kind: ``query`` (embedded with the query prompt) or ``document``.
        ids: Token ids without special tokens, cut to the model's window.
        text: The text of exactly those tokens (empty when the backend takes ids only).
    """

    key: str
    kind: str
    ids: np.ndarray
    text: str

    @property
    def tokens(self) -> int:
        """How many tokens the model reads of it (special tokens and prompt aside)."""
        return int(self.ids.size)


def input_key(kind: str, ids: np.ndarray) -> str:
    """The key of an input: what kind it is and exactly which tokens the model reads."""
    digest = hashlib.sha256(kind.encode() + b"\0")
    digest.update(np.ascontiguousarray(ids, dtype=np.int64).tobytes())
    return digest.hexdigest()


def make_input(
    kind: str, encoding: Encoded, text: str, window: int | None, keep_text: bool
) -> ModelInput:
    """The input of a whole text: its tokens up to the window."""
    # Haystacks spliced in token space hold their ids as an array already.
    ids = getattr(encoding, "id_array", None)
    if ids is None:
        ids = np.asarray(encoding.ids, dtype=np.int64)
    if window is not None and ids.size > window:
        ids = ids[:window]
        end = encoding.token_to_chars(window - 1)
        text = text[: end[1]] if end is not None else text
    return ModelInput(input_key(kind, ids), kind, ids, text if keep_text else "")


@dataclass(frozen=True)
class PlannedHaystack:
    """A haystack without its text: where its needle is and the keys of its pieces.

    Attributes:
        haystack: The haystack (``text`` dropped).
        pieces: Per scoring, the input keys whose embeddings score it.
        within_chunk: Per chunk scoring, the needle's token offset inside its chunk.
    """

    haystack: Haystack
    pieces: dict[str, tuple[str, ...]]
    within_chunk: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedBlock:
    """A block with its haystacks' model inputs per scoring (same order), not yet merged.

    Attributes:
        within: Per haystack, the needle's token offset inside its chunk per chunk scoring.
    """

    block: Block
    inputs: tuple[dict[str, tuple[ModelInput, ...]], ...]
    within: tuple[dict[str, int], ...]


class Plan:
    """The model inputs of a run, collected block by block, each input once.

    Args:
        scorings: The run's scorings (``whole``, ``chunk-max``, ``chunk-mean``).
        window: Document tokens the model reads (``None``: all).
        chunk_tokens: Most tokens of a chunk, for chunk scorings.
        keep_text: Keep each input's text (backends that read text, not ids).
    """

    def __init__(
        self, scorings: Sequence[str], window: int | None, chunk_tokens: int, *, keep_text: bool
    ) -> None:
        self.scorings = tuple(scorings)
        self.window = window
        self.chunk_tokens = chunk_tokens
        self.keep_text = keep_text
        self.haystacks: list[PlannedHaystack] = []
        self.needles: dict[str, str] = {}  # needle text -> input key
        self.queries: dict[str, str] = {}  # query text -> input key
        self.tokens: dict[str, int] = {}  # input key -> tokens the model reads
        self.placements: list[tuple[str, int, int, str]] = []  # group, length, needle tokens, gaps
        # Question and needle keys -> the keys of the same tokens read as token vectors.
        self.multi: dict[str, str] = {}

    def add_block(self, block: Block | PreparedBlock) -> list[ModelInput]:
        """Plan one block (prepared by :meth:`prepare`, or not yet); return its new inputs."""
        prepared = block if isinstance(block, PreparedBlock) else self.prepare(block)
        block = prepared.block
        fresh: list[ModelInput] = []
        for n, between in block.placements:
            self.placements.append((block.group_id, block.length, n, between))
        for haystack, inputs, within in zip(
            block.haystacks, prepared.inputs, prepared.within, strict=True
        ):
            pieces = {
                scoring: tuple(self._keep(item, fresh) for item in items)
                for scoring, items in inputs.items()
            }
            stripped = dataclasses.replace(haystack, text="")
            self.haystacks.append(PlannedHaystack(stripped, pieces, within))
        return fresh

    def prepare(self, block: Block) -> PreparedBlock:
        """The model inputs of every haystack of ``block``, not yet merged into the plan.

        It reads only the plan's settings, so the threads that build blocks run it, each on
        its own block (id arrays, chunks, keys); :meth:`add_block` merges them in order.
        """
        all_inputs: list[dict[str, tuple[ModelInput, ...]]] = []
        all_within: list[dict[str, int]] = []
        for haystack, encoding in zip(block.haystacks, block.encodings, strict=True):
            inputs: dict[str, tuple[ModelInput, ...]] = {}
            within: dict[str, int] = {}
            for scoring in self.scorings:
                if scoring in WHOLE_HAYSTACK:
                    kind = DOCUMENT if scoring == "whole" else multi_kind(DOCUMENT)
                    keep = self.keep_text or is_multi(kind)  # token vectors are read from text
                    pieces = [make_input(kind, encoding, haystack.text, self.window, keep)]
                else:
                    pieces, inside = self._chunks(haystack, encoding)
                    if inside is not None:
                        within[scoring] = inside
                inputs[scoring] = tuple(pieces)
            all_inputs.append(inputs)
            all_within.append(within)
        return PreparedBlock(block, tuple(all_inputs), tuple(all_within))

    def add_texts(
        self, kind: str, texts: Iterable[str], encodings: Sequence[Encoded], window: int | None
    ) -> list[ModelInput]:
        """Plan needles (``document``) or questions (``query``) embedded on their own.

        With ``maxsim`` among the scorings each is also planned as token vectors
        (:attr:`multi` maps its key to theirs).
        """
        fresh: list[ModelInput] = []
        index = self.needles if kind == DOCUMENT else self.queries
        for text, encoding in zip(texts, encodings, strict=True):
            if text in index:
                continue
            key = self._keep(make_input(kind, encoding, text, window, self.keep_text), fresh)
            index[text] = key
            if MAXSIM in self.scorings:
                multi = make_input(multi_kind(kind), encoding, text, window, True)
                self.multi[key] = self._keep(multi, fresh)
        return fresh

    def _keep(self, item: ModelInput, fresh: list[ModelInput]) -> str:
        if item.key not in self.tokens:
            self.tokens[item.key] = item.tokens
            fresh.append(item)
        return item.key

    def _chunks(self, haystack: Haystack, encoding: Encoded) -> tuple[list[ModelInput], int | None]:
        offsets = encoding.offsets
        bounds = chunk_bounds(haystack.text, offsets, self.chunk_tokens)
        ids = np.asarray(encoding.ids, dtype=np.int64)
        inputs = []
        for a, b in bounds:
            stop = b if self.window is None else min(b, a + self.window)
            text = haystack.text[offsets[a][0] : offsets[stop - 1][1]] if self.keep_text else ""
            piece = ids[a:stop]
            inputs.append(ModelInput(input_key(DOCUMENT, piece), DOCUMENT, piece, text))
        inside = None
        if haystack.needle_offset is not None:
            inside = next(
                haystack.needle_offset - a for a, b in bounds if a <= haystack.needle_offset < b
            )
        return inputs, inside

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data (no token ids or texts: keys and token counts)."""
        return {
            "scorings": list(self.scorings),
            "window": self.window,
            "chunk_tokens": self.chunk_tokens,
            "haystacks": [
                {
                    "haystack": dataclasses.asdict(p.haystack),
                    "pieces": {k: list(v) for k, v in p.pieces.items()},
                    "within_chunk": p.within_chunk,
                }
                for p in self.haystacks
            ],
            "needles": self.needles,
            "queries": self.queries,
            "tokens": self.tokens,
            "placements": [list(p) for p in self.placements],
            "multi": self.multi,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """Inverse of :meth:`to_dict` (a plan to measure with, not to add to)."""
        plan = cls(data["scorings"], data["window"], data["chunk_tokens"], keep_text=False)
        plan.haystacks = [
            PlannedHaystack(
                Haystack(**item["haystack"]),
                {k: tuple(v) for k, v in item["pieces"].items()},
                dict(item["within_chunk"]),
            )
            for item in data["haystacks"]
        ]
        plan.needles = dict(data["needles"])
        plan.queries = dict(data["queries"])
        plan.tokens = {k: int(v) for k, v in data["tokens"].items()}
        plan.placements = [(g, int(n), int(t), b) for g, n, t, b in data["placements"]]
        plan.multi = dict(data.get("multi", {}))
        return plan

    def unread(
        self, planned: PlannedHaystack, scoring: str, controls: dict[str, PlannedHaystack]
    ) -> bool:
        """Whether the model reads exactly what it reads of the haystack's own control."""
        control = controls[planned.haystack.control_id]
        return sorted(planned.pieces[scoring]) == sorted(control.pieces[scoring])
