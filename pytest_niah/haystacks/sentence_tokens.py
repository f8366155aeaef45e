"""Token ids of the corpus's sentences, tokenized once per tokenizer and kept on disk.

For a tokenizer that splits text at white space first and tokenizes each piece alone (its
``splits_at_spaces``), the tokens of sentences joined by single spaces are each sentence's
own tokens in order, their character spans shifted to where the sentence starts. A filler
is then cut from its sentences' ids (:meth:`SentenceTokens.joined`): no filler text is
tokenized per haystack. Like the counts of :mod:`~pytest_niah.haystacks.sentence_counts`
they are encoded lazily, only the sentences a run draws, and kept in a file named by the
tokenizer's identity and the corpus fingerprint.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pytest_niah.haystacks.sentence_counts import SentenceCounts, sentence_cache_file
from pytest_niah.haystacks.splice import SplicedEncoding
from pytest_niah.haystacks.tokens import Tokenizer

_FORMAT = 1
_UNKNOWN = -1
# A sentence's ids, and each token's character span within the sentence.
Pieces = tuple[np.ndarray, np.ndarray, np.ndarray]


class SentenceTokens(SentenceCounts):
    """Token ids and spans of sentences of several books, encoded on demand.

    :class:`~pytest_niah.haystacks.sentence_counts.SentenceCounts` (``get``, ``fill``,
    ``save``) whose sentences are encoded rather than counted, and :meth:`joined`.

    Args:
        books: Each book's sentences.
        tokenizer: The model's tokenizer; it must split at white space first.
        cache_file: Where tokens persist between runs (read if present, written by
            :meth:`save`); ``None`` keeps them in memory only.
    """

    def __init__(
        self, books: Sequence[Sequence[str]], tokenizer: Tokenizer, cache_file: Path | None
    ) -> None:
        self._pieces: list[dict[int, Pieces]] = [{} for _ in books]  # before _load fills them
        super().__init__(books, tokenizer, cache_file)

    def joined(self, refs: Sequence[tuple[int, int]], sentences: Sequence[str]) -> SplicedEncoding:
        """The tokens of ``" ".join(sentences)``, from each sentence's own.

        ``refs``: each sentence's book and index, encoded already (:meth:`get`, :meth:`fill`).
        """
        pieces = [self._pieces[book][index] for book, index in refs]
        sizes = [p[0].size for p in pieces]
        starts_at = np.cumsum([0] + [len(s) + 1 for s in sentences[:-1]], dtype=np.int64)
        shift = np.repeat(starts_at, sizes)
        return SplicedEncoding(
            np.concatenate([p[0] for p in pieces]),
            np.concatenate([p[1] for p in pieces]) + shift,
            np.concatenate([p[2] for p in pieces]) + shift,
        )

    def _measure(self, missing: list[tuple[int, int]]) -> None:
        encodings = self._tokenizer.encode_batch([self._books[b][i] for b, i in missing])
        for (book, index), encoding in zip(missing, encodings, strict=True):
            ids = np.asarray(encoding.ids, dtype=np.int64)
            spans = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
            # Pieces before the count: a thread that sees the count finds the pieces.
            self._pieces[book][index] = (ids, spans[:, 0].copy(), spans[:, 1].copy())
            self._counts[book][index] = ids.size

    def _payload(self) -> bytes:
        """What :meth:`save` writes: an ``.npz`` of the counts, ids and spans per book."""
        arrays: dict[str, np.ndarray] = {"format": np.array(_FORMAT)}
        for book, counts in enumerate(self._counts):
            known = np.flatnonzero(counts != _UNKNOWN)
            pieces = [self._pieces[book][int(i)] for i in known]
            arrays[f"counts_{book}"] = counts
            for part, name in enumerate(("ids", "starts", "ends")):
                joined = [p[part] for p in pieces] or [np.zeros(0, dtype=np.int64)]
                arrays[f"{name}_{book}"] = np.concatenate(joined).astype(np.int32)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)  # type: ignore[arg-type]
        return buffer.getvalue()

    def _load(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != _FORMAT:
                    return
                stored = [
                    tuple(np.asarray(data[f"{name}_{book}"]) for name in _PARTS)
                    for book in range(len(self._counts))
                ]
        except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile):
            return  # absent or damaged (a truncated or foreign file, a bad CRC): encode again
        if not all(_plausible(s, c) for s, c in zip(stored, self._counts, strict=True)):
            return
        for book, (counts, ids, starts, ends) in enumerate(stored):
            known = np.flatnonzero(counts != _UNKNOWN)
            if not known.size:
                continue
            bounds = np.cumsum(counts[known], dtype=np.int64)[:-1]
            parts = [np.split(a.astype(np.int64), bounds) for a in (ids, starts, ends)]
            self._pieces[book] = {
                int(index): (i, s, e) for index, i, s, e in zip(known, *parts, strict=True)
            }
            self._counts[book] = counts.astype(np.int32, copy=True)


_PARTS = ("counts", "ids", "starts", "ends")


def _plausible(stored: tuple[np.ndarray, ...], fresh: np.ndarray) -> bool:
    """One count per sentence (or unknown, -1), and as many ids and spans as counted."""
    counts, ids, starts, ends = stored
    if counts.shape != fresh.shape or counts.dtype.kind not in "iu":
        return False
    if counts.size and int(counts.min()) < _UNKNOWN:
        return False
    total = int(counts[counts != _UNKNOWN].sum())
    return all(
        a.ndim == 1 and a.size == total and a.dtype.kind in "iu" for a in (ids, starts, ends)
    )


def tokens_file(
    cache_dir: Path | None, tokenizer_identity: str, corpus_fingerprint: str
) -> Path | None:
    """The ids file of one tokenizer and corpus, or ``None`` without a cache folder."""
    return sentence_cache_file(cache_dir, "tokens", _FORMAT, tokenizer_identity, corpus_fingerprint)
