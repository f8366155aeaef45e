"""One block assembled from its drawn streams: controls cut, needles placed, tokens checked.

:class:`~pytest_niah.haystacks.builder.HaystackBuilder` draws a block's streams and needles
(a :class:`BlockParts`) and asks an :class:`Assembler` for the block, first with one
tokenizer call per control (``exact=False``), then, should a control cut miss its length,
with every filler tokenized and checked on its own (``exact=True``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_niah.haystacks.exact_cuts import ExactCuts
from pytest_niah.haystacks.fillers import Filler, Stream, compose
from pytest_niah.haystacks.grid import case_id, control_id
from pytest_niah.haystacks.haystack import Block, Haystack
from pytest_niah.haystacks.placement import Placement, place
from pytest_niah.haystacks.splice import (
    arrays,
    first_word,
    in_context,
    junctions_hold,
    spliced,
    tails_match,
)
from pytest_niah.haystacks.tokens import Encoded, Tokenizer
from pytest_niah.inputs.needles import NeedleGroup

# A needle haystack's (kind, order, position).
Key = tuple[str, str, int]
# Each needle haystack's filler and the placement of its needle in it.
Placed = dict[Key, tuple[Filler, Placement]]


@dataclass(frozen=True)
class BlockParts:
    """What one block is assembled from.

    Attributes:
        needle_texts: Each needle haystack's needle.
        needle_tokens: Each needle's own tokens.
        streams: The drawn filler streams: the needles' and first control's, then one per
            further control.
        needles: Whether the block gets needle haystacks (else controls only).
        draw: The draw of ``--niah-seeds`` (``None``: the run's single draw).
    """

    group: NeedleGroup
    length: int
    names: list[str]
    needle_texts: dict[Key, str]
    needle_tokens: dict[Key, Encoded]
    streams: list[Stream]
    needles: bool
    draw: int | None

    def control_id(self, index: int) -> str:
        """The id of control ``index`` of the block."""
        return control_id(self.group.id, self.length, index, self.draw)


@dataclass(frozen=True)
class Assembler:
    """Assembles blocks in one tokenizer's tokens.

    Args:
        splice: Compose needle haystacks in token space where the fillers' tails allow it.
    """

    tokenizer: Tokenizer
    cuts: ExactCuts
    splice: bool

    def assemble(self, parts: BlockParts, *, exact: bool) -> Block | None:
        """The block; ``None`` when a control cut without ``exact`` missed its length."""
        fit = self.cuts.fit if exact else self.cuts.cut
        fillers = [
            fit(source, parts.length, parts.control_id(index))
            for index, source in enumerate(parts.streams)
        ]
        placed, placements = _placed(parts, fillers[0]) if parts.needles else ({}, [])
        composed = {  # in the needles' order, as the block lists its haystacks
            key: compose(placed[key][0], placed[key][1].offsets[key[2]], text)
            for key, text in parts.needle_texts.items()
            if key in placed
        }
        tokens = self._tokens(parts, fillers, placed, composed, exact=exact)
        if tokens is None:
            return None
        controls, needle_haystacks = tokens
        haystacks = _controls(parts, fillers)
        encodings = list(controls)
        if not parts.needles:
            return Block(parts.group.id, parts.length, tuple(haystacks), tuple(encodings))
        refits: dict[int, Filler] = {}  # the needles' stream refitted, by size
        for key, encoding in zip(composed, needle_haystacks, strict=True):
            haystack, checked = self._needle_haystack(
                parts, key, placed[key][1], composed[key], encoding, refits
            )
            haystacks.append(haystack)
            encodings.append(checked)
        return Block(
            parts.group.id, parts.length, tuple(haystacks), tuple(encodings), tuple(placements)
        )

    def _tokens(
        self,
        parts: BlockParts,
        fillers: list[Filler],
        placed: Placed,
        composed: dict[Key, tuple[str, int]],
        *,
        exact: bool,
    ) -> tuple[list[Encoded], list[Encoded]] | None:
        """The controls' and the composed haystacks' tokens (``None``: a control missed).

        In token space where the fillers' cut pieces tokenize alone as they were cut (see
        splice); else one batch: the controls (unless already checked) and every haystack.
        """
        own = [f.encoding for f in fillers]
        if self.splice and not exact:
            in_ids = self._spliced(parts, fillers, placed, composed)
            if in_ids is not None:
                return own, in_ids
        checked = [] if exact else [f.text for f in fillers]
        encoded = list(self.tokenizer.encode_batch(checked + [t for t, _ in composed.values()]))
        if exact:
            return own, encoded
        controls = encoded[: len(fillers)]
        if any(len(e) != parts.length for e in controls):
            return None
        return controls, encoded[len(fillers) :]

    def _spliced(
        self,
        parts: BlockParts,
        fillers: list[Filler],
        placed: Placed,
        composed: dict[Key, tuple[str, int]],
    ) -> list[Encoded] | None:
        """The composed haystacks' tokens in token space, checked (``None``: build from text)."""
        distinct = {id(f): f for f, _ in placed.values()}
        if not tails_match(self.tokenizer, [*fillers, *distinct.values()]):
            return None
        keys = list(parts.needle_texts)
        first = {  # the fillers a needle goes first in: their first word follows it
            id(f): f for key, (f, p) in placed.items() if p.offsets[key[2]] == 0 and f.tokens
        }
        spaced = self.tokenizer.encode_batch(
            [" " + parts.needle_texts[k] for k in keys]
            + [" " + first_word(f.text) for f in first.values()]
        )
        needles = {
            key: (arrays(parts.needle_tokens[key], len(parts.needle_tokens[key])), in_context(e))
            for key, e in zip(keys, spaced[: len(keys)], strict=True)
        }
        heads = {
            filler: in_context(e) for filler, e in zip(first, spaced[len(keys) :], strict=True)
        }
        in_ids = spliced(composed, placed, needles, parts.needle_texts, heads)
        if in_ids is None:
            return None
        edges = [
            (text, encoding, char, char + len(parts.needle_texts[key]))
            for (key, (text, char)), encoding in zip(composed.items(), in_ids, strict=True)
        ]
        if not junctions_hold(self.tokenizer, edges):
            return None
        return list(in_ids)

    def _needle_haystack(
        self,
        parts: BlockParts,
        key: Key,
        placement: Placement,
        composed: tuple[str, int],
        encoding: Encoded,
        refits: dict[int, Filler],
    ) -> tuple[Haystack, Encoded]:
        """One needle haystack, its length and needle offset checked (rebuilt on a miss)."""
        kind, order, position = key
        hid = case_id(parts.group.id, kind, order, parts.length, position, seed=parts.draw)
        needle = parts.needle_texts[key]
        encoding, text, needle_char, offset, needle_tokens = self.cuts.verified(
            hid,
            stream=parts.streams[0],
            length=parts.length,
            needle=needle,
            needle_tokens=len(parts.needle_tokens[key]),
            encoding=encoding,
            text=composed[0],
            needle_char=composed[1],
            offset=placement.offsets[position],
            between=placement.between,
            refits=refits,
        )
        haystack = Haystack(
            id=hid,
            group_id=parts.group.id,
            length=parts.length,
            text=text,
            control_id=parts.control_id(0),
            kind=kind,
            order=order,
            position=position,
            name=parts.names[position],
            needle=needle,
            needle_offset=offset,
            needle_tokens=needle_tokens,
            needle_char=needle_char,
            duplicate_position=placement.duplicate_of[position],
            seed=parts.draw,
        )
        return haystack, encoding


def _controls(parts: BlockParts, fillers: list[Filler]) -> list[Haystack]:
    """The block's controls: each filler as it was cut."""
    return [
        Haystack(
            id=parts.control_id(index),
            group_id=parts.group.id,
            length=parts.length,
            text=filler.text,
            control_id=parts.control_id(index),
            control=index,
            seed=parts.draw,
        )
        for index, filler in enumerate(fillers)
    ]


def _placed(parts: BlockParts, control: Filler) -> tuple[Placed, list[tuple[int, str]]]:
    """Each needle haystack's filler and placement, and each needle size's gap kind.

    A needle's filler is a prefix of the control's, cut from its tokens: the composed
    haystacks are checked after.
    """
    by_size: dict[int, list[Key]] = {}
    for key, encoding in parts.needle_tokens.items():
        by_size.setdefault(len(encoding), []).append(key)
    placed: Placed = {}
    placements = []
    for size, keys in sorted(by_size.items()):
        filler = control.prefix(parts.length - size)
        placement = place(filler.tokens, len(parts.names), filler.sentence_slots, filler.word_slots)
        placements.append((size, placement.between))
        for key in keys:
            placed[key] = (filler, placement)
    return placed, placements
