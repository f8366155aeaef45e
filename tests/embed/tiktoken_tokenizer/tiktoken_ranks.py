"""A small byte-level BPE trained on its own text: the tiktoken tests' encoding, no network."""

from __future__ import annotations

import base64
import itertools
from collections import Counter
from pathlib import Path

import pytest

from pytest_niah.embed.tiktoken_tokenizer import FILE_PATTERN
from pytest_niah.inputs.packaged_corpus import packaged_corpus

tiktoken = pytest.importorskip("tiktoken")
regex = pytest.importorskip("regex")

TRAINING_TEXT = (
    "On the morning of the fair the miller's daughter carried two baskets of plums down the "
    "hill road. The road was wet, and the cart of the tinker had left deep ruts in it. She "
    "stopped at the bridge, where the river was loud after the storm, and counted the plums "
    "again: forty in one basket and thirty-eight in the other. A heron stood in the shallows "
    "and did not move. In the square the stalls were already up; a man sold ropes and lamp "
    "oil, a woman sold cheese wrapped in leaves, and the baker had brought more bread than "
    "the whole village could eat in a week. The daughter found a place by the well and set "
    "the baskets down. By noon she had sold every plum, and she walked home with coins in her "
    "apron and a ribbon for her mother. The miller asked how the prices were, and she told "
    "him that the cheese was dear and the rope was cheap, and that the heron was still "
    "standing by the bridge when she came back. "
) * 3
UNICODE_TEXT = "Café naïve — the crème brûlée cost 12€ at the Tōkyō stall; plums 🍑 were sold out."


def train_ranks(text: str, merges: int, characters: str = "") -> dict[bytes, int]:
    """A byte-level BPE: the 256 bytes, ``characters`` whole, then the text's commonest pairs.

    A character split across tokens cannot end an exact cut (its tokens share its span), so
    the corpus's characters are whole tokens, as in a real vocabulary.
    """
    ranks = {bytes([b]): b for b in range(256)}
    for char in characters:
        raw = char.encode()
        for end in range(2, len(raw) + 1):
            ranks.setdefault(raw[:end], len(ranks))
    words = [[bytes([b]) for b in piece.encode()] for piece in regex.findall(FILE_PATTERN, text)]
    for _ in range(merges):
        pairs = Counter(pair for word in words for pair in itertools.pairwise(word))
        if not pairs:
            break
        (left, right), count = pairs.most_common(1)[0]
        if count < 2:
            break
        ranks.setdefault(left + right, len(ranks))
        for i, word in enumerate(words):
            merged, j = [], 0
            while j < len(word):
                if j + 1 < len(word) and word[j] == left and word[j + 1] == right:
                    merged.append(left + right)
                    j += 2
                else:
                    merged.append(word[j])
                    j += 1
            words[i] = merged
    return ranks


CORPUS_CHARACTERS = "".join(
    sorted({char for book in packaged_corpus().books for char in book.text if not char.isascii()})
)
RANKS = train_ranks(TRAINING_TEXT, 300, CORPUS_CHARACTERS)
RANKS_ENCODING = tiktoken.Encoding(
    name="niah-test", pat_str=FILE_PATTERN, mergeable_ranks=RANKS, special_tokens={}
)


def write_ranks(path: Path, ranks: dict[bytes, int]) -> Path:
    lines = [base64.b64encode(token) + b" %d" % rank for token, rank in ranks.items()]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path
