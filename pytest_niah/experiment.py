"""Run the reference experiment: inputs -> haystacks -> embeddings -> scores -> results.

Haystacks are built group by group on a worker thread while the main thread embeds what is
ready (tokenizing releases the GIL, and so does the model's forward pass), so on a GPU the
tokenizer's work hides behind the model's. Each input the model reads is embedded once and
kept in the embedding cache; a finished run is kept in the results cache, keyed by
everything that determines it, so an identical re-run loads no model at all.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import default
from pytest_niah.config.paths import CACHE_ENV
from pytest_niah.digest import digest
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.runner import EmbeddingStats, Encoder, VectorTable
from pytest_niah.embed.store import CACHE_FILE, EmbeddingStore
from pytest_niah.errors import NiahCacheWarning, NiahError
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.haystack import Block
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, Plan
from pytest_niah.inputs.corpus import Corpus, load_corpus
from pytest_niah.inputs.expansions import ExpansionSet, arm_size, load_expansions
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, load_needle_set
from pytest_niah.measure.records import EffectiveLength, IntervalRow, MetricRow
from pytest_niah.measure.scoring import Collected, Scored, score_slice
from pytest_niah.measure.stats import bootstrap_intervals, effective_length
from pytest_niah.measure.tables import negatives_by_key, question_scores, summarize
from pytest_niah.progress import NoProgress, Progress
from pytest_niah.results.niah_results import NiahResults, package_versions
from pytest_niah.results.schema import SCHEMA_VERSION, ModelInfo

DEFAULT_CHUNK_TOKENS = 512  # for models without a window (the lexical baseline, static models)
CPU_TOKEN_BUDGET = default("token_budget")
GPU_BATCH = 32  # texts of the full window per batch on a GPU (what sentence-transformers uses)
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


@dataclass
class RunReport:
    """How a run went: whether cached results answered, and what the model did.

    Attributes:
        reused: The results came from the results cache (no model was loaded).
        cached_results: That cache file.
        embedding: What the embedding phase did.
        notes: What pytest-niah decided for the user (presets applied, fallbacks).
        seconds: Where the time went: ``build`` (haystacks, tokenizing; on a worker thread,
            beside the model), ``encode`` (inside the model), ``measure`` (scores, tables,
            intervals) and ``total``.
    """

    reused: bool = False
    cached_results: Path | None = None
    embedding: EmbeddingStats = field(default_factory=EmbeddingStats)
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


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


def run_experiment(
    config: NiahConfig,
    *,
    embedder: Embedder | None = None,
    inputs: Inputs | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    report: RunReport | None = None,
) -> NiahResults:
    """Run the whole experiment of ``config`` and return its results.

    Args:
        config: What to run.
        embedder: A ready embedder; built from ``config`` when omitted.
        inputs: Needle set, corpus and expansions; loaded from ``config`` when omitted.
        cache_dir: The cache root: embeddings (``embeddings.sqlite``), finished results
            (``results/``), sentence token counts and model file hashes. ``None`` caches
            nothing.
        use_cache: Read and write the embedding and results caches (under ``cache_dir``).
        progress: Where to report progress; nothing is reported when omitted.
        report: Filled in with how the run went.
    """
    root = Path(cache_dir) if cache_dir is not None else None
    report = report if report is not None else RunReport()
    inputs = inputs or load_inputs(config, cache_dir=root)
    embedder = embedder or load_embedder(config, memo_dir=root)
    results_file = None
    if root is not None and use_cache:
        results_file = root / "results" / f"{results_key(config, embedder, inputs)}.json"
        cached = _cached(results_file, config, embedder.identity.digest)
        if cached is not None:
            report.reused, report.cached_results = True, results_file
            return cached
    store = None
    if root is not None and use_cache and not embedder.fits_on_documents:
        store = EmbeddingStore(root / CACHE_FILE)
    try:
        results = _run(config, embedder, inputs, root, store, progress or NoProgress(), report)
    finally:
        if store is not None:
            store.close()
    report.notes.extend(getattr(embedder, "notes", []))
    if results_file is not None:
        try:
            results.save(results_file)
        except OSError as exc:
            # An unusable cache folder loses only the shortcut, never the results: warn, go on.
            warnings.warn(
                NiahCacheWarning(
                    f"pytest-niah: the results cache {results_file.parent} cannot store this run "
                    f"({exc.strerror or exc}), so a re-run will compute it again. Fix: make it "
                    f"writable, or point the cache elsewhere (--niah-cache-dir or {CACHE_ENV})"
                ),
                stacklevel=2,
            )
    return results


def results_key(config: NiahConfig, embedder: Embedder, inputs: Inputs) -> str:
    """A hash of everything results depend on: config, model identity, data, versions."""
    identity = {
        "schema": SCHEMA_VERSION,
        "config": config.to_dict(),
        "model": embedder.identity.digest,
        "corpus": inputs.corpus.fingerprint(),
        "needles": inputs.needle_set.fingerprint(),
        "expansions": inputs.expansions.fingerprint() if inputs.expansions else None,
        "versions": package_versions(),
    }
    return digest(identity)


def _cached(path: Path, config: NiahConfig, model: str) -> NiahResults | None:
    """The results stored under this run's key, if they are this run's: same config, model."""
    if not path.is_file():
        return None
    try:
        cached = NiahResults.load(path)
    except (NiahError, OSError):
        return None  # damaged or unreadable: compute again and replace it
    if cached.config.to_dict() != config.to_dict() or cached.model.fingerprint != model:
        return None  # another run's results copied or left under this key: not this run's
    return cached


@dataclass
class Planning:
    """A run's plan before any embedding: the builder's blocks still to come.

    Attributes:
        plan: The plan (filled as blocks are planned).
        builder: The haystack builder.
        questions: (arm, group id) -> the question text embedded for it.
        queries: The questions' model inputs.
        blocks: The blocks, not built yet (a generator).
        window: Document tokens the model reads.
    """

    plan: Plan
    builder: HaystackBuilder
    questions: dict[tuple[str, str], str]
    queries: list[ModelInput]
    blocks: Iterator[Block]
    window: int | None
    tokenizer: Any


def start_planning(
    config: NiahConfig, embedder: Embedder, inputs: Inputs, cache_dir: Path | None
) -> Planning:
    """Everything needed to build a run's haystacks and plan their inputs.

    It reads the model's tokenizer and window: for a sentence-transformers model that loads
    the model itself.
    """
    tokenizer = embedder.tokenizer
    windows = embedder.windows
    chunk_tokens = config.chunk_tokens or windows.document or DEFAULT_CHUNK_TOKENS
    plan = Plan(config.scoring, windows.document, chunk_tokens, keep_text=embedder.reads_text)
    builder = HaystackBuilder(inputs.corpus, inputs.needle_set, tokenizer, config.seed, cache_dir)
    groups = inputs.selected.groups
    questions = {
        (arm, g.id): query_text(g, arm, inputs.expansions) for arm in config.arms for g in groups
    }
    texts = list(dict.fromkeys(questions.values()))
    queries = plan.add_texts(QUERY, texts, tokenizer.encode_batch(texts), windows.query)
    kinds = tuple(dict.fromkeys(needle_kind(arm) for arm in config.arms))
    blocks = builder.blocks(
        groups, config.lengths, config.positions, kinds, config.orders, config.controls
    )
    return Planning(plan, builder, questions, queries, blocks, windows.document, tokenizer)


def block_inputs(planning: Planning, block: Block) -> list[ModelInput]:
    """Plan one block: its haystacks' pieces and needles alone; return the new inputs."""
    plan = planning.plan
    fresh = plan.add_block(block)
    needles = list(dict.fromkeys(h.needle for h in block.haystacks if h.needle))
    needles = [n for n in needles if n not in plan.needles]
    if needles:
        encodings = planning.tokenizer.encode_batch(needles)
        fresh += plan.add_texts(DOCUMENT, needles, encodings, planning.window)
    return fresh


def plan_inputs(
    config: NiahConfig,
    *,
    embedder: Embedder | None = None,
    inputs: Inputs | None = None,
    cache_dir: str | Path | None = None,
) -> tuple[Plan, list[ModelInput]]:
    """Build every haystack and plan every model input of ``config``, embedding nothing."""
    root = Path(cache_dir) if cache_dir is not None else None
    inputs = inputs or load_inputs(config, cache_dir=root)
    embedder = embedder or load_embedder(config, memo_dir=root)
    planning = start_planning(config, embedder, inputs, root)
    out = list(planning.queries)
    for block in planning.blocks:
        out.extend(block_inputs(planning, block))
    return planning.plan, out


def _run(
    config: NiahConfig,
    embedder: Embedder,
    inputs: Inputs,
    root: Path | None,
    store: EmbeddingStore | None,
    progress: Progress,
    report: RunReport,
) -> NiahResults:
    planning = start_planning(config, embedder, inputs, root)
    encoder = Encoder(
        embedder, store, budget=budget(config, embedder), batch_size=config.batch_size
    )
    total = len(config.lengths) * len(inputs.needle_set.groups)
    progress.start("building and embedding haystacks", total, "blocks")
    started = time.perf_counter()
    encoder.submit(planning.queries)
    embedded = 0
    for fresh in _planned(planning, report.seconds):
        encoder.submit(fresh)
        progress.advance(1, encoder.stats.tokens - embedded)
        embedded = encoder.stats.tokens
    vectors = encoder.finish()
    report.embedding = encoder.stats
    progress.finish(
        f"{encoder.stats.embedded:,} texts embedded, {encoder.stats.read:,} read from the cache"
    )
    measured = time.perf_counter()
    results = measure(
        config, inputs.selected.groups, layout_of(planning, inputs, embedder), vectors
    )
    done = time.perf_counter()
    report.seconds |= {
        "encode": encoder.stats.seconds,
        "measure": done - measured,
        "total": done - started,
    }
    return results


def budget(config: NiahConfig, embedder: Embedder) -> int:
    """Tokens per batch: the configured budget, or on a GPU a full batch of full windows."""
    placement = getattr(embedder, "placement", None)
    if (
        config.token_budget != CPU_TOKEN_BUDGET
        or placement is None
        or placement.device_type == "cpu"
    ):
        return config.token_budget
    window = embedder.windows.document
    return GPU_BATCH * (window + 2) if window else config.token_budget


def _planned(planning: Planning, seconds: dict[str, float]) -> Iterator[list[ModelInput]]:
    """Plan blocks on a worker thread; yield each block's new inputs as soon as they exist.

    ``seconds`` gets the worker's busy time: ``build`` (drawing snippets, tokenizing and
    checking haystacks) and ``plan`` (model inputs, chunks, needles).
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


def _timed(blocks: Iterator[Block], seconds: dict[str, float]) -> Iterator[Block]:
    """``blocks``, adding the time spent producing each to ``seconds["build"]``."""
    seconds["build"] = 0.0
    while True:
        started = time.perf_counter()
        block = next(blocks, None)
        seconds["build"] += time.perf_counter() - started
        if block is None:
            return
        yield block


@dataclass(frozen=True)
class Layout:
    """Everything measuring a run needs besides its vectors (what a shard part carries).

    Attributes:
        plan: The haystacks and which inputs score each.
        questions: (arm, group id) -> the question text embedded for it.
        model: The model's identity, window and tokenizer.
        corpus: The corpus's name, fingerprint and books.
        needle_set: The needle set's name, source, fingerprint, groups, expansions.
        audit: What the leak audit saw while building the haystacks.
    """

    plan: Plan
    questions: dict[tuple[str, str], str]
    model: ModelInfo
    corpus: dict[str, Any]
    needle_set: dict[str, Any]
    audit: AuditReport

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "plan": self.plan.to_dict(),
            "questions": [[arm, group, text] for (arm, group), text in self.questions.items()],
            "model": self.model.model_dump(mode="json"),
            "corpus": self.corpus,
            "needle_set": self.needle_set,
            "audit": self.audit.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Layout:
        """Inverse of :meth:`to_dict`."""
        return cls(
            plan=Plan.from_dict(data["plan"]),
            questions={(arm, group): text for arm, group, text in data["questions"]},
            model=ModelInfo.model_validate(data["model"]),
            corpus=dict(data["corpus"]),
            needle_set=dict(data["needle_set"]),
            audit=AuditReport.from_dict(data["audit"]),
        )


def layout_of(planning: Planning, inputs: Inputs, embedder: Embedder) -> Layout:
    """The layout of a fully planned run (read after the model loaded: its final identity)."""
    identity = embedder.identity
    return Layout(
        plan=planning.plan,
        questions=planning.questions,
        model=ModelInfo(
            name=embedder.name,
            fingerprint=identity.digest,
            max_tokens=planning.window,
            identity=dict(identity.parts),
            tokenizer=planning.tokenizer.identity,
        ),
        corpus={
            "name": inputs.corpus.name,
            "fingerprint": inputs.corpus.fingerprint(),
            "books": [b.name for b in inputs.corpus.books],
        },
        needle_set={
            "name": inputs.needle_set.name,
            "source": inputs.needle_set.source,
            "fingerprint": inputs.needle_set.fingerprint(),
            "groups": len(inputs.selected.groups),
            "expansions": inputs.expansions.fingerprint() if inputs.expansions else None,
        },
        audit=planning.builder.audit(),
    )


def measure(
    config: NiahConfig, groups: Sequence[NeedleGroup], layout: Layout, vectors: VectorTable
) -> NiahResults:
    """Scores, tables and intervals of a planned and embedded run: its results."""
    plan, questions, window = layout.plan, layout.questions, layout.model.max_tokens
    scored = Scored.of(vectors.matrix, vectors.index)
    collected = Collected()
    for arm in config.arms:
        keys = {g.id: plan.queries[questions[arm, g.id]] for g in groups}
        for scoring in config.scoring:
            for length in config.lengths:
                score_slice(
                    collected,
                    scored,
                    plan,
                    arm=arm,
                    kind=needle_kind(arm),
                    scoring=scoring,
                    length=length,
                    groups=groups,
                    queries=keys,
                    orders=config.orders,
                    window=window,
                )
    tables = summarize(collected.cases, collected.negatives)
    intervals = _intervals(config, collected) if config.bootstrap else ()
    return NiahResults(
        config=config,
        model=layout.model.model_copy(update={"name": config.model}),
        corpus=layout.corpus,
        needle_set=layout.needle_set,
        versions=package_versions(),
        audit=layout.audit,
        cases=tuple(collected.cases),
        negatives=tuple(collected.negatives),
        tables=tables,
        intervals=intervals,
        retrieval=tuple(collected.retrieval),
        effective_lengths=_effective_lengths(config, tables, intervals),
        placement=_placement_summary(plan),
    )


def _intervals(config: NiahConfig, collected: Collected) -> tuple[IntervalRow, ...]:
    negatives = negatives_by_key(collected.negatives)
    slices: dict[tuple[str, str, int], list[Any]] = {}
    for case in collected.cases:
        slices.setdefault((case.arm, case.scoring, case.length), []).append(case)
    rows: list[IntervalRow] = []
    for (arm, scoring, length), cases in slices.items():
        found = bootstrap_intervals(
            question_scores(cases, negatives), n_resamples=config.bootstrap, seed=config.seed
        )
        rows.extend(
            IntervalRow(arm, scoring, length, m, i.point, i.low, i.high, i.se, i.groups)
            for m, i in found.items()
        )
    return tuple(rows)


def _effective_lengths(
    config: NiahConfig, tables: Sequence[MetricRow], intervals: Sequence[IntervalRow]
) -> tuple[EffectiveLength, ...]:
    low = {(r.arm, r.scoring, r.length): r.low for r in intervals if r.metric == "auc"}
    out = []
    for arm in config.arms:
        for scoring in config.scoring:
            rows = sorted(
                (r for r in tables if (r.by, r.arm, r.scoring) == ("length", arm, scoring)),
                key=lambda r: r.length,
            )
            if not rows:
                continue
            # Without bootstrap intervals the point AUC stands in for the lower bound.
            lows = [low.get((arm, scoring, r.length), r.auc) for r in rows]
            best = effective_length([r.length for r in rows], [r.auc for r in rows], lows)
            out.append(EffectiveLength(arm, scoring, best, rows[0].auc))
    return tuple(out)


def _placement_summary(plan: Plan) -> dict[str, Any]:
    """Per length: needle sets placed between sentences, between words, and shared offsets."""
    summary: dict[str, dict[str, int]] = {}
    for _, length, _, between in plan.placements:
        entry = summary.setdefault(str(length), {"sentences": 0, "words": 0, "duplicates": 0})
        entry[between] += 1
    for planned in plan.haystacks:
        if planned.haystack.duplicate_position is not None:
            summary[str(planned.haystack.length)]["duplicates"] += 1
    return summary
