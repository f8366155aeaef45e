"""Needle haystacks in token space: the filler's tokens with the needle's spliced in.

Where a tokenizer splits text at white space first and tokenizes each piece alone (its
``splits_at_spaces``), or starts a word after a space afresh (a Metaspace or byte-level
BPE: its ``splices_needles``), a needle put into a white-space gap of a filler has the
filler's tokens before the gap, the needle's own after a space (:func:`in_context`), and the
filler's after. That is checked, not assumed: each junction's text around the needle is
tokenized alone and compared (:func:`junctions_hold`), every haystack's length too, and a
filler's last piece, cut where a token ended, tokenized alone (:func:`tails_match`); a block
where anything differs is built from text as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from pytest_niah.haystacks.fillers import Filler
from pytest_niah.haystacks.placement import Placement
from pytest_niah.haystacks.tokens import Encoded, Tokenizer

_LAST_PIECE = re.compile(r"\S+$")
# Token ids, starts and ends.
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]


class SplicedEncoding:
    """An :class:`Encoded` from arrays: token ids and each token's character span."""

    __slots__ = ("ends", "id_array", "starts")

    def __init__(self, ids: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        self.id_array, self.starts, self.ends = ids, starts, ends

    def __len__(self) -> int:
        return int(self.id_array.size)

    @property
    def ids(self) -> list[int]:
        """Token ids."""
        return list(self.id_array.tolist())

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Every token's span."""
        return list(zip(self.starts.tolist(), self.ends.tolist(), strict=True))

    def char_to_token(self, char_pos: int) -> int | None:
        """The token covering ``char_pos``."""
        index = int(np.searchsorted(self.ends, char_pos, side="right"))
        if index < self.ends.size and self.starts[index] <= char_pos:
            return index
        return None

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The span of a token."""
        return int(self.starts[token_index]), int(self.ends[token_index])


def arrays(encoding: Encoded, tokens: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ids, starts and ends of the first ``tokens`` tokens of ``encoding``."""
    base = getattr(encoding, "base", encoding)  # a PrefixEncoding's full encoding
    if isinstance(base, SplicedEncoding):
        return base.id_array[:tokens], base.starts[:tokens], base.ends[:tokens]
    ids = np.asarray(base.ids[:tokens], dtype=np.int64)
    spans = np.asarray(base.offsets[:tokens], dtype=np.int64).reshape(-1, 2)
    return ids, spans[:, 0], spans[:, 1]


def in_context(needle: Encoded) -> Arrays:
    """Ids, starts and ends of a needle encoded with the space before it, the space dropped.

    ``needle`` is the encoding of ``" " + needle``: its spans, one character back, are
    relative to the needle's first character (a byte-level token that holds the space
    starts at -1).
    """
    ids, starts, ends = arrays(needle, len(needle))
    return ids, starts - 1, ends - 1


def first_word(text: str) -> str:
    """A filler's text up to its first space: its tokens change when a needle goes first."""
    space = text.find(" ")
    return text if space < 0 else text[:space]


def respaced(filler: Arrays, head: Arrays, word: str) -> Arrays:
    """A filler's arrays with its first word's tokens replaced by ``head``.

    ``head``: that word's tokens after a space (:func:`in_context`), as it reads behind a
    needle put first.
    """
    ids, starts, ends = filler
    cut = int(np.searchsorted(starts, len(word), side="left"))
    head_ids, head_starts, head_ends = head
    return (
        np.concatenate((head_ids, ids[cut:])),
        np.concatenate((head_starts, starts[cut:])),
        np.concatenate((head_ends, ends[cut:])),
    )


def splice(
    filler: tuple[np.ndarray, np.ndarray, np.ndarray],
    char: int,
    slot: int,
    text: str,
    needle: tuple[np.ndarray, np.ndarray, np.ndarray],
    needle_char: int,
    needle_text: str,
) -> SplicedEncoding:
    """The tokens of a haystack composed from a filler (its arrays) and a needle.

    Args:
        filler: The filler's token ids, starts and ends.
        char: Where in the filler's text the needle went (the gap's character).
        slot: The token the needle went before.
        text: The filler's text.
        needle: The needle's ids, starts and ends, relative to its first character.
        needle_char: The needle's character offset in the composed text.
        needle_text: The needle.
    """
    ids, starts, ends = filler
    after = text[char:]
    old = char + len(after) - len(after.lstrip(" "))  # the filler's text after the gap
    shift = needle_char + len(needle_text) + 1 - old
    needle_ids, needle_starts, needle_ends = needle
    return SplicedEncoding(
        np.concatenate((ids[:slot], needle_ids, ids[slot:])),
        np.concatenate((starts[:slot], needle_starts + needle_char, starts[slot:] + shift)),
        np.concatenate((ends[:slot], needle_ends + needle_char, ends[slot:] + shift)),
    )


def tails_match(tokenizer: Tokenizer, fillers: Sequence[Filler]) -> bool:
    """Whether each filler's last piece, tokenized alone, gives the filler's last tokens."""
    tails: list[tuple[str, list[int]]] = []
    for filler in fillers:
        found = _LAST_PIECE.search(filler.text)
        if found is None:
            continue  # empty, or ending in white space: no piece was cut
        first = filler.encoding.char_to_token(found.start())
        if first is None:
            return False
        ids, _, _ = arrays(filler.encoding, filler.tokens)
        # With the space before it, as it follows one in the text (a byte-level BPE's
        # word after a space is another token than the word alone).
        start = found.start() - (found.start() > 0 and filler.text[found.start() - 1] == " ")
        tails.append((filler.text[start:], ids[first:].tolist()))
    if not tails:
        return True
    alone = tokenizer.encode_batch([piece for piece, _ in tails])
    return all(list(e.ids) == ids for e, (_, ids) in zip(alone, tails, strict=True))


def spliced(
    composed: dict[tuple[str, str, int], tuple[str, int]],
    placed: dict[tuple[str, str, int], tuple[Filler, Placement]],
    needles: dict[tuple[str, str, int], tuple[Arrays, Arrays]],
    texts: dict[tuple[str, str, int], str],
    heads: dict[int, Arrays],
) -> list[SplicedEncoding] | None:
    """The tokens of each composed haystack, from its filler's and needle's.

    ``needles``: each needle's arrays alone (where it starts the text) and after a space
    (:func:`in_context`); ``heads``: by filler (its ``id``), its first word after a space,
    for a needle put first (:func:`respaced`). A haystack may come out longer or shorter
    than its filler's length plus the needle's own count (a word has another count after a
    space than alone): its tokens are still its text's, and the caller refits it as it
    would a text-built haystack that missed. The whole answer is ``None`` where a needle's
    slot is no clean token boundary: a token before it reaches into the next (a unigram
    model's lone word marker ``▁`` shares its word's first character), so no split of the
    ids matches the split of the text.
    """
    out: list[SplicedEncoding] = []
    of_filler: dict[int, Arrays] = {}
    for key, (_, needle_char) in composed.items():
        filler, placement = placed[key]
        slot = placement.offsets[key[2]]
        if id(filler) not in of_filler:
            of_filler[id(filler)] = arrays(filler.encoding, filler.tokens)
        _, starts, ends = of_filler[id(filler)]
        if 0 < slot < filler.tokens and ends[slot - 1] > starts[slot]:
            return None
        alone, after_space = needles[key]
        own = of_filler[id(filler)]
        if slot == 0 and id(filler) in heads:
            own = respaced(own, heads[id(filler)], first_word(filler.text))
        encoding = splice(
            own,
            filler.char_of(slot),
            slot,
            filler.text,
            after_space if needle_char > 0 else alone,
            needle_char,
            texts[key],
        )
        out.append(encoding)
    return out


def junctions_hold(
    tokenizer: Tokenizer, haystacks: Sequence[tuple[str, SplicedEncoding, int, int]]
) -> bool:
    """Whether the text around each needle's edges, tokenized alone, gives the spliced ids.

    ``haystacks``: each text, its spliced tokens and its needle's first and end character.
    A window runs from the space two words before an edge to the end of the third word
    after it; its ids must be those of the spliced tokens inside it. One tokenizer call for
    all.
    """
    windows: list[str] = []
    expected: list[np.ndarray] = []
    for text, encoding, start, end in haystacks:
        for edge in (start, end):
            low, high = _window(text, edge)
            first = int(np.searchsorted(encoding.starts, low, side="left"))
            last = int(np.searchsorted(encoding.ends, high, side="right"))
            windows.append(text[low:high])
            expected.append(encoding.id_array[first:last])
    if not windows:
        return True
    alone = tokenizer.encode_batch(windows)
    return all(
        np.array_equal(np.asarray(e.ids, dtype=np.int64), ids)
        for e, ids in zip(alone, expected, strict=True)
    )


def _window(text: str, edge: int) -> tuple[int, int]:
    """From the space before the second word before ``edge`` to the end of the third after."""
    low = edge
    for _ in range(3):
        low = text.rfind(" ", 0, max(low, 0))
        if low <= 0:
            low = 0
            break
    high = edge
    for _ in range(3):
        high = text.find(" ", high + 1)
        if high < 0:
            high = len(text)
            break
    return low, high
