"""A run's first step: the window probe, measuring what the model reads, beside the books' split.

The probe runs before any haystack is planned: the plan cuts inputs to the window it finds.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.server_fingerprint import (
    FIXED_BATCH,
    ServerFingerprint,
    answers_key,
    is_served,
)
from pytest_niah.embed.server_noise import fixed_inputs, measure_noise
from pytest_niah.embed.server_watch import watch_batch
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.window_probe import WindowMeasurement, measure_window
from pytest_niah.experiment.run_inputs import Inputs
from pytest_niah.inputs.corpus import Corpus


def probe_window(
    config: NiahConfig,
    embedder: Embedder,
    inputs: Inputs,
    cache: CachePolicy,
    token_budget: int | None = None,
) -> WindowMeasurement:
    """Measure what the model reads (:mod:`~pytest_niah.embed.window_probe`).

    The probe's texts are batched as the run's (``token_budget``: the run's, else the
    config's) and go through the embedding cache when the policy has one. A served model's
    go to the server every run, after its noise is measured (a server whose answers ignore
    the text is refused), and pin its answers -- the window and the fixed texts sent as a
    batch of their own, twice -- into its identity
    (:mod:`~pytest_niah.embed.server_fingerprint`) before any cache is read.
    """
    tokens = config.token_budget if token_budget is None else token_budget

    def measure(store: EmbeddingStore | None, noise: float = 0.0) -> WindowMeasurement:
        return measure_window(
            embedder,
            inputs.corpus,
            max(config.lengths),
            store,
            budget=tokens,
            batch_size=config.batch_size,
            noise=noise,
        )

    if is_served(embedder):
        noise = measure_noise(embedder)
        measured = measure(None, noise.pair)
        space = embedder.served_identity.digest
        fixed = watch_batch(embedder, FIXED_BATCH, fixed_inputs(embedder))
        fingerprint = ServerFingerprint.of(measured, fixed)
        embedder.pin_answers(answers_key(fingerprint, space, cache.work), fingerprint)
        return measured
    store = None
    if cache.embeddings is not None and not embedder.fits_on_documents:
        store = EmbeddingStore(cache.embeddings)
    try:
        return measure(store)
    finally:
        if store is not None:
            store.close()


@contextlib.contextmanager
def books_split_meanwhile(corpus: Corpus) -> Iterator[None]:
    """Split the books into sentences on a thread while the body runs; joined at its end.

    The body is the window probe: its forward passes and requests release the GIL, so a
    cold run's sentence splitting (seconds for the packaged books) costs no wall time.
    """
    thread = threading.Thread(target=_split, args=(corpus,), name="niah-sentences", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


def _split(corpus: Corpus) -> None:
    for book in corpus.books:
        book.sentences  # noqa: B018 - kept by the book (a cached property)
