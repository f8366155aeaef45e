"""Planning a run: its inputs, its haystacks block by block, and the model inputs of each.

Blocks are built, and their model inputs prepared, on worker threads; one more merges them
into the plan in order while the caller embeds what is ready (:func:`plan_in_background`).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.vocabulary import MAXSIM
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
from pytest_niah.haystacks.audit import check_onehop_tokens
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.haystack import Block
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, Plan, PreparedBlock
from pytest_niah.inputs.corpus import Corpus, load_corpus
from pytest_niah.inputs.expansions import ExpansionSet, arm_size, load_expansions
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, load_needle_set

DEFAULT_CHUNK_TOKENS = 512  # for models without a window (the lexical baseline, static models)
_QUEUE_DEPTH = 8


def needle_kind(arm: str) -> str:
    """Which needle an arm inserts: literal needles for ``literal``, one-hop otherwise."""
    return "literal" if arm == "literal" else "onehop"


def query_text(group: NeedleGroup, arm: str, expansions: ExpansionSet | None = None) -> str:
    """The text embedded as the query of ``group`` in ``arm`` (expanded for ``expandN``)."""
    size = arm_size(arm)
    if size is None:
        return group.question
    if expansions is None:
        raise ValueError(f"arm {arm!r} needs an expansion set")
    return expansions.expand(group.question, group.id, size)


@dataclass(frozen=True)
class Inputs:
    """What an experiment reads: the whole needle set, the selected groups, books, terms."""

    needle_set: NeedleSet
    selected: NeedleSet
    corpus: Corpus
    expansions: ExpansionSet | None


def load_inputs(config: NiahConfig, *, cache_dir: Path | None = None) -> Inputs:
    """The needle set, its selected groups, the corpus and expansion terms of ``config``."""
    needle_set = load_needle_set(config.needles)
    selected = needle_set.select(config.groups or None)
    expansions = (
        load_expansions(config.expansions)
        if any(arm_size(arm) is not None for arm in config.arms)
        else None
    )
    corpus = load_corpus(config.corpus, cache_dir=cache_dir / "corpus" if cache_dir else None)
    return Inputs(needle_set, selected, corpus, expansions)


@dataclass
class Planning:
    """A run's plan before any embedding: the builder's blocks still to come.

    Attributes:
        plan: The plan (filled as blocks are planned).
        builder: The haystack builder.
        questions: (arm, group id) -> the question text embedded for it.
        queries: The questions' model inputs.
        blocks: The blocks, not built yet (a generator), each with its model inputs
            prepared on the thread that built it.
        window: Document tokens the model reads (the measured window where it is shorter).
        tokenizer: The haystack tokenizer.
        measured: What the window probe found (``None``: it did not run).
    """

    plan: Plan
    builder: HaystackBuilder
    questions: dict[tuple[str, str], str]
    queries: list[ModelInput]
    blocks: Iterator[PreparedBlock]
    window: int | None
    tokenizer: Any
    measured: WindowMeasurement | None = None


def block_count(config: NiahConfig, inputs: Inputs) -> int:
    """How many blocks a run builds: one per length, needle draw and needle group."""
    return len(config.lengths) * len(config.draws) * len(inputs.needle_set.groups)


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


def haystack_builder(
    config: NiahConfig, embedder: Embedder, inputs: Inputs, cache_dir: Path | None
) -> HaystackBuilder:
    """The builder of a model's haystacks (the export builds them again with it)."""
    # Haystacks in token space for a backend that reads ids (text is still derived and kept).
    splice = not embedder.reads_text and MAXSIM not in config.scoring
    return HaystackBuilder(
        inputs.corpus, inputs.needle_set, embedder.tokenizer, config.seed, cache_dir, splice=splice
    )


def needle_kinds(config: NiahConfig) -> tuple[str, ...]:
    """The needle kinds a run's arms read, in order."""
    return tuple(dict.fromkeys(needle_kind(arm) for arm in config.arms))


def start_planning(
    config: NiahConfig,
    embedder: Embedder,
    inputs: Inputs,
    cache_dir: Path | None,
    measured: WindowMeasurement | None = None,
) -> Planning:
    """Everything needed to build a run's haystacks and plan their inputs.

    It reads the model's tokenizer and window: for a sentence-transformers model that loads
    the model itself. Inputs are cut to the window ``measured`` found where it falls short
    of the declared one, so a needle past it is unread, as past a declared window.
    """
    tokenizer = embedder.tokenizer
    windows = embedder.windows
    window = windows.document if measured is None else measured.effective
    chunk_tokens = config.chunk_tokens or window or DEFAULT_CHUNK_TOKENS
    plan = Plan(config.scoring, window, chunk_tokens, keep_text=embedder.reads_text)
    builder = haystack_builder(config, embedder, inputs, cache_dir)
    groups = inputs.selected.groups
    questions = {
        (arm, g.id): query_text(g, arm, inputs.expansions) for arm in config.arms for g in groups
    }
    texts = list(dict.fromkeys(questions.values()))
    query_window = windows.query
    if window is not None and window != windows.document:
        # The measured window: questions are cut as much shorter as documents are.
        if windows.query is None or windows.document is None:
            query_window = min(windows.query or window, window)
        else:
            query_window = max(1, windows.query - (windows.document - window))
    queries = plan.add_texts(QUERY, texts, tokenizer.encode_batch(texts), query_window)
    kinds = needle_kinds(config)
    if "onehop" in kinds:
        check_onehop_tokens(groups, tokenizer, inputs.needle_set.source)
    blocks = builder.each_block(
        plan.prepare,
        groups,
        config.lengths,
        config.positions,
        kinds,
        config.orders,
        config.controls,
        config.draws,
    )
    return Planning(plan, builder, questions, queries, blocks, window, tokenizer, measured)


def block_inputs(planning: Planning, block: Block | PreparedBlock) -> list[ModelInput]:
    """Plan one block: its haystacks' pieces and needles alone; return the new inputs."""
    plan = planning.plan
    fresh = plan.add_block(block)
    built = block.block if isinstance(block, PreparedBlock) else block
    needles = list(dict.fromkeys(h.needle for h in built.haystacks if h.needle))
    needles = [n for n in needles if n not in plan.needles]
    if needles:
        known = dict(built.needles)  # tokenized by the builder already
        missing = [n for n in needles if n not in known]
        if missing:
            known |= zip(missing, planning.tokenizer.encode_batch(missing), strict=True)
        encodings = [known[n] for n in needles]
        fresh += plan.add_texts(DOCUMENT, needles, encodings, planning.window)
    return fresh


def block_weights(
    config: NiahConfig, inputs: Inputs, document_window: int | None = None
) -> list[float]:
    """The expected tokens of each block, in the order they are built (for the time left).

    Blocks come shortest length first, then draw, groups in needle-set order; a selected
    group's block holds its needle haystacks and controls, another group's its controls only.
    A haystack weighs what the model reads of it: at most ``document_window`` tokens for
    whole-haystack scoring (a 256-token model's 8,192-token block costs what a 256-token one
    does), every token again for chunk scoring, which embeds the whole haystack in pieces.
    """
    selected = {group.id for group in inputs.selected.groups}
    needles = config.positions * len(config.orders) * len(config.arms)
    chunked = any(scoring.startswith("chunk") for scoring in config.scoring)

    def read(length: int) -> int:
        whole = length if document_window is None else min(length, document_window)
        return whole + (length if chunked else 0)

    return [
        float(read(length) * (config.controls + (needles if group.id in selected else 0)))
        for length in config.lengths
        for _ in config.draws
        for group in inputs.needle_set.groups
    ]


def plan_in_background(planning: Planning, seconds: dict[str, float]) -> Iterator[list[ModelInput]]:
    """Plan blocks on a worker thread; yield each block's new inputs as soon as they exist.

    ``seconds`` gets the worker's busy time: ``build`` (drawing snippets, tokenizing and
    checking haystacks, and their model inputs, all on the building threads) and ``plan``
    (merging each block's inputs into the plan in order, needles).
    """
    out: queue.Queue[Any] = queue.Queue(maxsize=_QUEUE_DEPTH)
    stop = threading.Event()
    done = object()

    def work() -> None:
        busy = 0.0
        try:
            for block in _timed(planning.blocks, seconds):
                if stop.is_set():
                    return
                started = time.perf_counter()
                fresh = block_inputs(planning, block)
                busy += time.perf_counter() - started
                seconds["plan"] = busy
                out.put(fresh)
            out.put(done)
        except BaseException as exc:
            out.put(exc)

    worker = threading.Thread(target=work, name="pytest-niah-haystacks", daemon=True)
    worker.start()
    try:
        while True:
            item = out.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let the worker see the stop flag
            with contextlib.suppress(queue.Empty):
                out.get(timeout=0.05)
        worker.join()


def _timed(blocks: Iterator[PreparedBlock], seconds: dict[str, float]) -> Iterator[PreparedBlock]:
    """``blocks``, adding the time spent producing each to ``seconds["build"]``."""
    seconds["build"] = 0.0
    while True:
        started = time.perf_counter()
        block = next(blocks, None)
        seconds["build"] += time.perf_counter() - started
        if block is None:
            return
        yield block
