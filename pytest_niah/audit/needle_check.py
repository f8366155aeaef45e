"""A tiny needle check: do the endpoint's vectors find a fact in a haystack?

A server can answer every request with plausible, well-shaped vectors that are wrong (another
model's, a broken pooling, a quantization gone bad). A handful of built-in needles, each put
in the middle of the same stretch of a packaged book at three lengths within the window,
catches it: a needle is found at a length when its question is closer to the haystack holding
it than to the haystacks holding the other needles and to the bare stretch of book.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_niah.audit.endpoint import Endpoint, Refusal, needle_lengths
from pytest_niah.haystacks.tokens import Encoded
from pytest_niah.inputs.packaged_corpus import packaged_corpus

# (needle, question): facts no book holds, in words no other needle shares.
NEEDLES = (
    (
        "The secret ingredient of Rosalind's famous soup is smoked Hungarian paprika.",
        "What is the secret ingredient of Rosalind's soup?",
    ),
    (
        "Doctor Okafor keeps a pet iguana named Biscuit in her chemistry laboratory.",
        "What is the name of Doctor Okafor's pet iguana?",
    ),
    (
        "The submarine Nautilus Seven was repainted bright orange in Valparaiso harbour.",
        "What colour was the submarine Nautilus Seven repainted?",
    ),
    (
        "The Reykjavik chess tournament was won by a twelve-year-old violinist.",
        "Who won the Reykjavik chess tournament?",
    ),
)
_BOOK_CHARS = 200_000  # of the first book: enough filler for any window


@dataclass(frozen=True)
class NeedleRow:
    """The needles at one haystack length.

    Attributes:
        tokens: Tokens of each haystack.
        found: How many needles were found.
        needles: How many were hidden.
        missed: The questions whose needle was not found.
        refused: The refusal's status and message, if the server refused this length.
    """

    tokens: int
    found: int
    needles: int
    missed: tuple[str, ...] = ()
    refused: str = ""


def needle_check(endpoint: Endpoint, window: int) -> list[NeedleRow]:
    """The built-in needles at three lengths within ``window`` document tokens."""
    questions = [question for _, question in NEEDLES]
    try:
        asked, _ = endpoint.embed(questions)
    except Refusal as refusal:
        refused = f"HTTP {refusal.status}: {refusal.message}"
        return [NeedleRow(n, 0, len(NEEDLES), (), refused) for n in needle_lengths(window)]
    filler = _filler_text()
    encoding = endpoint.embedder.tokenizer.encode_batch([filler])[0]
    sizes = endpoint.tokens([needle for needle, _ in NEEDLES])
    rows = []
    for length in needle_lengths(window):
        haystacks = [
            _haystack(filler, encoding, length - size, needle)
            for (needle, _), size in zip(NEEDLES, sizes, strict=True)
        ]
        haystacks.append(_haystack(filler, encoding, length, ""))
        try:
            vectors, _ = endpoint.embed(haystacks)
        except Refusal as refusal:
            refused = f"HTTP {refusal.status}: {refusal.message}"
            rows.append(NeedleRow(length, 0, len(NEEDLES), (), refused))
            continue
        best = np.argmax(_unit(asked) @ _unit(vectors).T, axis=1)
        missed = tuple(q for i, q in enumerate(questions) if int(best[i]) != i)
        rows.append(NeedleRow(length, len(NEEDLES) - len(missed), len(NEEDLES), missed))
    return rows


def _filler_text() -> str:
    book = packaged_corpus().books[0]
    start = len(book.text) // 3  # past the front matter
    return " ".join(book.text[start : start + _BOOK_CHARS].split())


def _haystack(filler: str, encoding: Encoded, room: int, needle: str) -> str:
    """``needle`` in the middle of the first ``room`` tokens of ``filler`` (its ``encoding``)."""
    room = min(max(2, room), len(encoding))
    end = encoding.token_to_chars(room - 1)
    middle = encoding.token_to_chars(room // 2)
    if end is None or middle is None:
        return filler
    text, cut = filler[: end[1]], middle[0]
    return f"{text[:cut]}{needle} {text[cut:]}" if needle else text


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.where(norms > 0, norms, 1.0))
