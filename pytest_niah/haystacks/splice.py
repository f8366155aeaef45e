"""Needle haystacks in token space: the filler's tokens with the needle's spliced in.

Where a tokenizer splits text at white space first and tokenizes each piece alone (its
``splits_at_spaces``), a text's tokens are its pieces' tokens in order. A needle put into a
white-space gap of a filler then has exactly the filler's tokens before the gap, the
needle's own, and the filler's after: neither knowing them nor checking the haystack's
length needs a tokenizer call. Only a filler's last piece, cut where a token ended, may
tokenize otherwise alone (a unigram model segments a word's prefix anew): it is checked,
one small call per block (:func:`tails_match`), and a block whose tails differ is built
from text as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from pytest_niah.haystacks.fillers import Filler
from pytest_niah.haystacks.placement import Placement
from pytest_niah.haystacks.tokens import Encoded, Tokenizer

_LAST_PIECE = re.compile(r"\S+$")


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


def splice(
    filler: tuple[np.ndarray, np.ndarray, np.ndarray],
    char: int,
    slot: int,
    text: str,
    needle: Encoded,
    needle_char: int,
    needle_text: str,
) -> SplicedEncoding:
    """The tokens of a haystack composed from a filler (its arrays) and a needle.

    Args:
        filler: The filler's token ids, starts and ends.
        char: Where in the filler's text the needle went (the gap's character).
        slot: The token the needle went before.
        text: The filler's text.
        needle: The needle's own encoding.
        needle_char: The needle's character offset in the composed text.
        needle_text: The needle.
    """
    ids, starts, ends = filler
    after = text[char:]
    old = char + len(after) - len(after.lstrip(" "))  # the filler's text after the gap
    shift = needle_char + len(needle_text) + 1 - old
    needle_ids, needle_starts, needle_ends = arrays(needle, len(needle))
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
        tails.append((found.group(0), ids[first:].tolist()))
    if not tails:
        return True
    alone = tokenizer.encode_batch([piece for piece, _ in tails])
    return all(list(e.ids) == ids for e, (_, ids) in zip(alone, tails, strict=True))


def spliced(
    composed: dict[tuple[str, str, int], tuple[str, int]],
    placed: dict[tuple[str, str, int], tuple[Filler, Placement]],
    needles_of: dict[tuple[str, str, int], Encoded],
    texts: dict[tuple[str, str, int], str],
) -> list[Encoded] | None:
    """The tokens of each composed haystack, from its filler's and needle's.

    ``None`` where a needle's slot is no clean token boundary: a token before it reaches
    into the next (a unigram model's lone word marker ``▁`` shares its word's first
    character), so no split of the ids matches the split of the text.
    """
    out: list[Encoded] = []
    of_filler: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for key, (_, needle_char) in composed.items():
        filler, placement = placed[key]
        slot = placement.offsets[key[2]]
        if id(filler) not in of_filler:
            of_filler[id(filler)] = arrays(filler.encoding, filler.tokens)
        _, starts, ends = of_filler[id(filler)]
        if 0 < slot < filler.tokens and ends[slot - 1] > starts[slot]:
            return None
        out.append(
            splice(
                of_filler[id(filler)],
                filler.char_of(slot),
                slot,
                filler.text,
                needles_of[key],
                needle_char,
                texts[key],
            )
        )
    return out
