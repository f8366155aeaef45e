"""Turning a run's model inputs into vectors: cache first, then the model, in even batches.

Inputs arrive as the haystacks are built and are formed into the run's batches
(:mod:`pytest_niah.embed.batching`): one kind and one exact token count each, so the model
pads nothing, and the same batches in a whole, a resumed or a sharded run. A batch whose
every vector is in the cache is read from there; any other goes to the model whole, so each
input's vector is the one its own batch gives, and each batch the model embeds is written
back at once, so an interrupted run keeps what it finished.

Inputs read as token vectors (``--niah-scoring=maxsim``) go to the model only, never to the
cache (a haystack's token vectors are as many as its tokens), and are kept apart from the
one-vector rows: :attr:`VectorTable.multi`.

A served model is watched (:mod:`~pytest_niah.embed.server_watch`): its checks run between
batches, and what it embeds reaches the cache only once a later check has passed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_niah.embed.batching import Batch, BatchFormer, batch_texts, form_batches
from pytest_niah.embed.encode_checks import (
    check_dimension,
    check_rows,
    encode_failure,
    token_vector_arrays,
)
from pytest_niah.embed.models import no_token_vectors
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.vector_table import VectorTable, is_sparse
from pytest_niah.errors import NiahError
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, is_multi

if TYPE_CHECKING:
    from pytest_niah.embed.server_watch import ServerWatch


@dataclass
class EmbeddingStats:
    """What the embedding phase did.

    Attributes:
        embedded: Inputs the model embedded.
        read: Inputs read from the cache.
        dropped: Cache rows found unusable (another dimension, NaN) and embedded again.
        tokens: Tokens the model read.
        seconds: Time inside the model's encode calls.
    """

    embedded: int = 0
    read: int = 0
    dropped: int = 0
    tokens: int = 0
    seconds: float = 0.0


class Encoder:
    """Embeds inputs as they come; :meth:`finish` returns every vector.

    Args:
        embedder: The model.
        store: The embedding cache, or ``None``.
        budget: Most tokens per batch (texts x tokens); ``0`` uses ``batch_size`` texts.
        batch_size: Texts per batch when ``budget`` is 0.
        dim: The model's dimension where an earlier encoder of the run learned it (the
            window probe's): a model that changes it between the two is stopped.
        stats: Counts to go on from (the window probe's), else fresh ones.
        watch: A served model's checks: run when due and at :meth:`finish`; vectors are
            written to the cache only after a check has passed.
    """

    def __init__(
        self,
        embedder: Embedder,
        store: EmbeddingStore | None,
        *,
        budget: int,
        batch_size: int,
        dim: int | None = None,
        stats: EmbeddingStats | None = None,
        watch: ServerWatch | None = None,
    ) -> None:
        self.embedder = embedder
        self.watch = watch
        # (space, keys, rows) embedded since the last check passed: not in the cache yet.
        self._unchecked: list[tuple[str, list[str], np.ndarray]] = []
        self.store = None if embedder.fits_on_documents else store
        self.budget = budget
        self.batch_size = batch_size
        self.stats = stats if stats is not None else EmbeddingStats()
        self.table = VectorTable()
        # Input key -> model seconds spent on it (its batch's time shared by tokens): the
        # inputs the model embedded, never those read from the cache.
        self.model_seconds: dict[str, float] = {}
        self._dim: int | None = dim
        # Vectors read before the model's dimension was known: checked once it is.
        self._pending: dict[str, tuple[ModelInput, np.ndarray]] = {}
        self._former = BatchFormer(self._size)
        self._held: list[ModelInput] = []  # a backend that fits on documents gets them all at once
        self._space = embedder.identity.digest

    @property
    def dim(self) -> int | None:
        """The model's dimension, once known."""
        return self._dim

    def submit(self, inputs: Iterable[ModelInput]) -> None:
        """Queue inputs in plan order; each batch they complete is embedded right away."""
        for item in inputs:
            if self.embedder.fits_on_documents:
                self._held.append(item)
                continue
            batch = self._former.add(item)
            if batch is not None:
                self._flush(batch)

    def submit_batch(self, batch: Batch) -> None:
        """Embed one batch of the run as it is (a shard job's share is whole batches)."""
        self._flush(batch)

    def finish(self) -> VectorTable:
        """Embed what is queued; every submitted key then has its vector."""
        for batch in self._former.rest():
            self._flush(batch)
        self._settle_pending()
        if self._held:
            if any(is_multi(i.kind) for i in self._held):
                raise no_token_vectors(self.embedder.name)
            documents = [i for i in self._held if i.kind == DOCUMENT]
            queries = [i for i in self._held if i.kind != DOCUMENT]
            for part in (documents, queries):
                if part:
                    self._encode(part)
            self._held = []
        if self.watch is not None:
            self.checkpoint("at the end of the run")
        return self.table

    def checkpoint(self, when: str) -> None:
        """Check the server (:class:`ServerWatch`); then write what it embedded before."""
        if self.watch is None:
            return
        self.watch.check(when)
        unchecked, self._unchecked = self._unchecked, []
        if self.store is not None:
            for space, keys, rows in unchecked:
                self.store.put_many(space, keys, rows)

    def _size(self, tokens: int) -> int:
        return batch_texts(self.budget, self.batch_size, tokens)

    def _flush(self, batch: Batch) -> None:
        fresh = list(
            {
                item.key: item
                for item in batch
                if item.key not in self.table.index
                and item.key not in self._pending
                and item.key not in self.table.multi
            }.values()
        )
        if not fresh:
            return
        if self.store is not None and not is_multi(fresh[0].kind):
            space = f"{self._space}:{fresh[0].kind}"
            before = self.store.dropped
            found = self.store.get_many(space, [i.key for i in fresh], self._dim)
            self.stats.dropped += self.store.dropped - before
            if len(found) == len(fresh):
                read = [(item, found[item.key]) for item in fresh]
                if self._dim is None:
                    # Which dimension is right is not known until the model embeds something.
                    self._pending.update((item.key, (item, vector)) for item, vector in read)
                else:
                    self._take(read)
                return
            # A batch read in part would be embedded in another company than its own: the
            # model embeds it whole, as a cold run does, and its vectors replace the rows
            # found (a warm run then reads what this one used; a damaged row is mended).
            self._discard([item for item in fresh if item.key in found])
        self._encode(fresh)

    def _take(self, read: list[tuple[ModelInput, np.ndarray]]) -> None:
        """Put vectors read from the cache (all of the model's dimension) in the table."""
        if read:
            self.table.add([item.key for item, _ in read], np.stack([v for _, v in read]))
            self.stats.read += len(read)

    def _settle_pending(self) -> None:
        """Check the vectors read before the model's dimension was known.

        Those of another dimension than the model's are dropped from the cache and embedded
        again. When the model has embedded nothing yet and the vectors disagree among
        themselves, one input is embedded to learn the dimension.
        """
        if not self._pending:
            return
        if self._dim is None:
            dims = {int(vector.shape[0]) for _, vector in self._pending.values()}
            if len(dims) == 1:
                self._dim = dims.pop()  # no evidence against them: a warm run embeds nothing
            else:
                key, (item, vector) = next(iter(self._pending.items()))
                del self._pending[key]
                self._discard([item])  # so the model's vector is written in its place
                self._encode([item])  # sets the dimension, then settles the rest
                if vector.shape[0] != self._dim:
                    self.stats.dropped += 1
                return
        pending, self._pending = list(self._pending.values()), {}
        self._take([(item, vector) for item, vector in pending if vector.shape[0] == self._dim])
        wrong = [item for item, vector in pending if vector.shape[0] != self._dim]
        if wrong:
            self._discard(wrong)
            self.stats.dropped += len(wrong)
            for part in form_batches(wrong, self._size):
                self._encode(part)

    def _discard(self, items: list[ModelInput]) -> None:
        """Remove cached vectors, so the model's new ones can be written in their place."""
        if self.store is None:
            return
        for kind in dict.fromkeys(item.kind for item in items):
            keys = [item.key for item in items if item.kind == kind]
            self.store.discard(f"{self._space}:{kind}", keys)

    def _encode(self, items: list[ModelInput]) -> None:
        if is_multi(items[0].kind) and not getattr(self.embedder, "multi_vector", False):
            raise no_token_vectors(self.embedder.name)
        if self.watch is not None and self.watch.due():
            self.checkpoint(f"after {self.watch.requests():,} requests")
        started = time.perf_counter()
        try:
            rows = self.embedder.encode(items)
        except NiahError:
            raise
        except Exception as exc:  # the model's own code failed: one stop that names it
            cached = self.store is not None and self.watch is None  # else: only checked ones
            raise encode_failure(self.embedder.name, items, exc, cached) from exc
        spent = time.perf_counter() - started
        self.stats.seconds += spent
        self._share(items, spent)
        if is_multi(items[0].kind):
            self._take_multi(items, rows)
            return
        check_rows(self.embedder.name, rows, len(items))
        learned = False
        if not is_sparse(rows):
            rows = np.asarray(rows, dtype=np.float32)
            if self._dim is None:
                self._dim = int(rows.shape[1])
                learned = True
            else:
                check_dimension(self.embedder.name, int(rows.shape[1]), self._dim)
            space, keys = f"{self._space}:{items[0].kind}", [i.key for i in items]
            if self.watch is not None:
                self._unchecked.append((space, keys, rows))
            elif self.store is not None:
                self.store.put_many(space, keys, rows)
        keys = [i.key for i in items]
        self.table.add(keys, rows)
        tokens = sum(i.tokens for i in items)
        self.stats.embedded += len(items)
        self.stats.tokens += tokens
        if learned:
            self._settle_pending()

    def _share(self, items: list[ModelInput], seconds: float) -> None:
        """Share one batch's model time among its inputs, by tokens."""
        tokens = sum(i.tokens for i in items) or len(items)
        for item in items:
            share = seconds * (item.tokens or 1) / tokens
            self.model_seconds[item.key] = self.model_seconds.get(item.key, 0.0) + share

    def _take_multi(self, items: list[ModelInput], rows: Any) -> None:
        """Keep the token vectors of ``items``: one 2-D array per input, all of one width."""
        first = next(iter(self.table.multi.values()), None)  # all earlier ones share its width
        arrays = token_vector_arrays(self.embedder.name, items, rows, first)
        for item, array in zip(items, arrays, strict=True):
            self.table.multi[item.key] = array
        self.stats.embedded += len(items)
        self.stats.tokens += sum(i.tokens for i in items)
