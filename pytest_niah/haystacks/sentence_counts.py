"""Token counts of the corpus's sentences, counted once per tokenizer and kept on disk.

Drawing snippets needs the token count of every sentence drawn. They are counted lazily
(only the sentences a run draws, a snippet's worth per tokenizer call) and kept in a file
named by the tokenizer's identity and the corpus fingerprint, so the next run of any model
with the same tokenizer on the same books counts nothing.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from pytest_niah.files import remove_stale_temps, write_atomic
from pytest_niah.haystacks.tokens import Tokenizer, token_counts

_FORMAT = 1
_UNKNOWN = -1


class SentenceCounts:
    """Token counts of sentences of several books, filled in on demand.

    Args:
        books: Each book's sentences.
        tokenizer: The model's tokenizer.
        cache_file: Where counts persist between runs (read if present, written by
            :meth:`save`); ``None`` keeps them in memory only.
    """

    def __init__(
        self, books: Sequence[Sequence[str]], tokenizer: Tokenizer, cache_file: Path | None
    ) -> None:
        self._books = books
        self._tokenizer = tokenizer
        self._file = cache_file
        self._counts = [np.full(len(b), _UNKNOWN, dtype=np.int32) for b in books]
        self._dirty = False
        if cache_file is not None:
            remove_stale_temps(cache_file)  # a killed run's half-written save
            self._load(cache_file)

    def get(self, book: int, start: int, stop: int) -> list[int]:
        """Counts of sentences ``start..stop-1`` of ``book`` (missing ones counted in one call)."""
        self.fill({book: range(start, stop)})
        return [int(c) for c in self._counts[book][start:stop]]

    def fill(self, wanted: Mapping[int, Iterable[int]]) -> None:
        """Count the missing ones of ``wanted`` (book -> sentence indices) in one call.

        One large call instead of many small ones: a small tokenizer call waits behind any
        large one running in the tokenizer's thread pool (see ``fast_tokenizer``).
        """
        missing = [
            (book, index)
            for book, indices in wanted.items()
            for index in sorted(set(indices))
            if self._counts[book][index] == _UNKNOWN
        ]
        if missing:
            self._measure(missing)
            self._dirty = True

    def _measure(self, missing: list[tuple[int, int]]) -> None:
        """Fill in the counts of ``missing`` (book, sentence index) pairs, in one call."""
        counts = token_counts(self._tokenizer, [self._books[b][i] for b, i in missing])
        for (book, index), count in zip(missing, counts, strict=True):
            self._counts[book][index] = count

    def save(self) -> None:
        """Persist new counts (atomically; a cache that cannot be written is skipped)."""
        if self._file is None or not self._dirty:
            return
        try:
            write_atomic(self._file, self._payload(), inside=self._file.parent)
        except OSError:
            return  # the cache only saves time
        self._dirty = False

    def _payload(self) -> bytes:
        """What :meth:`save` writes: an ``.npz`` of the counts."""
        buffer = io.BytesIO()
        np.savez(buffer, *self._counts, format=np.array(_FORMAT))
        return buffer.getvalue()

    def _load(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != _FORMAT:
                    return
                stored = [np.asarray(data[f"arr_{i}"]) for i in range(len(self._counts))]
        except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile):
            return  # absent or damaged (a truncated or foreign file, a bad CRC): count again
        if all(_plausible(s, c) for s, c in zip(stored, self._counts, strict=True)):
            self._counts = [s.astype(np.int32, copy=True) for s in stored]


def _plausible(stored: np.ndarray, fresh: np.ndarray) -> bool:
    """Counts of this book's sentences: one whole number per sentence, or unknown (-1)."""
    return (
        stored.shape == fresh.shape
        and stored.dtype.kind in "iu"
        and (stored.size == 0 or int(stored.min()) >= _UNKNOWN)
    )


def sentence_cache_file(
    cache_dir: Path | None, kind: str, version: int, tokenizer_identity: str, corpus: str
) -> Path | None:
    """Where a sentence cache keeps one tokenizer's data of one corpus (the one naming rule).

    ``kind`` is ``""`` for the token counts and ``"tokens"`` for the token ids; ``version``
    is the file format's. ``None`` without a cache folder.
    """
    if cache_dir is None:
        return None
    tag = f"{kind}:" if kind else ""
    key = hashlib.sha256(f"{tag}{version}:{tokenizer_identity}:{corpus}".encode())
    prefix = f"{kind}-" if kind else ""
    return Path(cache_dir) / "sentence-counts" / f"{prefix}{key.hexdigest()[:32]}.npz"


def counts_file(
    cache_dir: Path | None, tokenizer_identity: str, corpus_fingerprint: str
) -> Path | None:
    """The counts file of one tokenizer and corpus, or ``None`` without a cache folder."""
    return sentence_cache_file(cache_dir, "", _FORMAT, tokenizer_identity, corpus_fingerprint)
