"""Run the reference experiment: inputs -> haystacks -> embeddings -> scores -> results.

Haystacks are built group by group on a worker thread while the main thread embeds what is
ready (tokenizing releases the GIL, and so does the model's forward pass), so on a GPU the
tokenizer's work hides behind the model's. Each input the model reads is embedded once and
kept in the embedding cache; a finished run is kept in the results cache, keyed by
everything that determines it, so an identical re-run loads no model at all.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.server_fingerprint import is_served, start_watch
from pytest_niah.embed.server_watch import run_seed
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.vector_table import VectorTable
from pytest_niah.embed.window_probe import WindowMeasurement
from pytest_niah.experiment.batch_budget import CPU_TOKEN_BUDGET, GPU_BATCH, budget
from pytest_niah.experiment.measuring import Layout, layout_of, measure
from pytest_niah.experiment.planning import (
    DEFAULT_CHUNK_TOKENS,
    Inputs,
    Planning,
    block_count,
    block_inputs,
    block_weights,
    books_split_meanwhile,
    load_inputs,
    needle_kind,
    plan_in_background,
    probe_window,
    query_text,
    start_planning,
)
from pytest_niah.experiment.results_cache import cached_results, keep_results, results_key
from pytest_niah.experiment.run_report import RunReport, identity_checked
from pytest_niah.experiment.speed import speed_record
from pytest_niah.haystacks.plan import ModelInput, Plan
from pytest_niah.progress import ConsoleProgress, NoProgress, Progress
from pytest_niah.results.niah_results import NiahResults

__all__ = [
    "CPU_TOKEN_BUDGET",
    "DEFAULT_CHUNK_TOKENS",
    "GPU_BATCH",
    "CachePolicy",
    "Inputs",
    "Layout",
    "Planning",
    "Run",
    "RunReport",
    "block_count",
    "block_inputs",
    "budget",
    "layout_of",
    "load_inputs",
    "measure",
    "needle_kind",
    "plan_inputs",
    "query_text",
    "results_key",
    "run_experiment",
    "start_planning",
]


def run_experiment(
    config: NiahConfig,
    *,
    embedder: Embedder | None = None,
    inputs: Inputs | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | bool | None = True,
    report: RunReport | None = None,
    speed: bool = False,
) -> NiahResults:
    """Run the whole experiment of ``config`` and return its results.

    Args:
        config: What to run.
        embedder: A ready embedder; built from ``config`` when omitted.
        inputs: Needle set, corpus and expansions; loaded from ``config`` when omitted.
        cache_dir: The cache root: embeddings (``embeddings.sqlite``), finished results
            (``results/``), sentence token counts and model file hashes. ``None``: the
            plugin's default root (``$NIAH_CACHE_DIR``, else the user cache folder), so an
            identical re-run, from the API or from pytest, loads no model at all (as for
            :func:`plan_inputs` and :func:`~pytest_niah.experiment.shards.run_shard`).
        use_cache: Use the caches under ``cache_dir``; ``False`` reads and writes none of
            them, only downloaded books are kept there (see :class:`CachePolicy`).
        progress: Where to report progress. ``True`` (the default): the plugin's console
            progress on stderr (a bar on a terminal, a line per phase elsewhere, and a
            heartbeat while the model loads); ``False``, ``None`` or a
            :class:`~pytest_niah.progress.NoProgress`: nothing.
        report: Filled in with how the run went.
        speed: Record the model's speed per length in the results (``speed``: tokens/s of
            model time, a served model's request latency). Off by default: it is the one
            field two runs of one config never share, and results are otherwise identical
            bytes (``--niah-speed`` turns it on in the plugin).
    """
    cache = CachePolicy.resolve(cache_dir, use_cache)
    chosen = api_progress(progress)
    console = chosen if isinstance(chosen, ConsoleProgress) and progress is True else None
    if console is not None:
        console.begin(f"{config.model}: loading inputs and the model")
    try:
        run = Run.prepare(
            config,
            cache=cache,
            embedder=embedder,
            inputs=inputs,
            progress=chosen,
            report=report,
            speed=speed,
        )
        results = run.results()
        reused = run.report.reuse_line()
        if console is not None and reused is not None:  # the embedding's end said the rest
            console.begin(f"{config.model}: {reused}; {run.report.embedded_line()}")
        return results
    finally:
        if console is not None:
            console.stop()


def api_progress(progress: Progress | bool | None) -> Progress:
    """The progress of the API's ``progress`` argument: a console one, or a silent one."""
    if progress is True:
        return ConsoleProgress()
    if progress is False or progress is None:
        return NoProgress()
    return progress


@dataclass
class Run:
    """One run of one config: plan -> embed all inputs or a share -> measure.

    Every kind of run goes through it: a whole run (:meth:`results`), a shard job (plans
    everything, embeds its share: :func:`~pytest_niah.experiment.shards.run_shard`) and a
    gate job (measures from the parts, no model:
    :func:`~pytest_niah.experiment.shards.results_from_shards`). Its caches are the ones
    ``cache`` allows, and no others.

    Attributes:
        config: What to run.
        cache: Which caches the run reads and writes, and where.
        embedder: The model.
        inputs: Needle set, corpus and expansions.
        progress: Where progress goes.
        report: Filled in with how the run went.
        measured: What the window probe found (set by :meth:`plan`).
        model_seconds: Model seconds per input the model embedded (set by :meth:`embed`).
        request_seconds: Seconds of each request to a served model (set by :meth:`embed`).
        record_speed: Put the speed record in the results (off: ``speed`` is ``None``).
    """

    config: NiahConfig
    cache: CachePolicy
    embedder: Embedder
    inputs: Inputs
    progress: Progress
    report: RunReport
    measured: WindowMeasurement | None = None
    model_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    request_seconds: list[float] = dataclasses.field(default_factory=list)
    record_speed: bool = False

    @classmethod
    def prepare(
        cls,
        config: NiahConfig,
        *,
        cache: CachePolicy,
        embedder: Embedder | None = None,
        inputs: Inputs | None = None,
        progress: Progress | None = None,
        report: RunReport | None = None,
        speed: bool = False,
    ) -> Run:
        """The run of ``config``, loading the inputs and the model not given."""
        cache.check_links()
        inputs = inputs or load_inputs(config, cache_dir=cache.books)
        embedder = embedder or load_embedder(config, memo_dir=cache.model_hashes)
        report = report if report is not None else RunReport()
        report.cache = cache.work
        progress = progress or NoProgress()
        return cls(config, cache, embedder, inputs, progress, report, record_speed=speed)

    def probe(self) -> WindowMeasurement:
        """Measure what the model reads, once per run (a served model: its answers too)."""
        if self.measured is None:
            tokens = budget(self.config, self.embedder)
            measured = probe_window(self.config, self.embedder, self.inputs, self.cache, tokens)
            self.measured, self.report.probe = measured, dataclasses.replace(measured.stats)
        return self.measured

    def plan(self) -> Planning:
        """Measure what the model reads, then start planning the run's haystacks.

        The blocks come as they are built.
        """
        with books_split_meanwhile(self.inputs.corpus):
            measured = self.probe()
        return start_planning(
            self.config, self.embedder, self.inputs, self.cache.sentence_counts, measured
        )

    def embed(
        self, batches: Iterable[Iterable[ModelInput]], *, formed: bool = False
    ) -> VectorTable:
        """Embed inputs, through the embedding cache when the policy has one.

        ``batches`` are the inputs in plan order, formed into the run's batches as they
        come; ``formed``: each is one of the run's batches already (a shard job's share).
        """
        store = None
        if self.cache.embeddings is not None and not self.embedder.fits_on_documents:
            store = EmbeddingStore(self.cache.embeddings)
        probe = self.measured
        requests: list[float] = getattr(self.embedder, "request_seconds", [])
        watch = None
        if is_served(self.embedder):  # checked during the run: it must not change
            watch = start_watch(self.embedder, self.inputs.corpus, run_seed())
        sent = len(requests)  # the window probe's requests are not the grid's
        try:
            encoder = Encoder(
                self.embedder,
                store,
                budget=budget(self.config, self.embedder),
                batch_size=self.config.batch_size,
                # One model, one dimension: the probe's vectors count as the run's.
                dim=probe.dim if probe is not None else None,
                stats=dataclasses.replace(probe.stats) if probe is not None else None,
                watch=watch,
            )
            self.report.embedding = encoder.stats  # filled in as the encoder goes
            for batch in batches:
                if formed:
                    encoder.submit_batch(list(batch))
                else:
                    encoder.submit(batch)
            vectors = encoder.finish()
            self.model_seconds = encoder.model_seconds
            self.request_seconds = list(requests[sent:])
        finally:
            if store is not None:
                store.close()
        self.report.notes.extend(getattr(self.embedder, "notes", []))
        if watch is not None:
            self.report.notes.append(watch.summary())
        return vectors

    def results(self) -> NiahResults:
        """The whole run's results: from the results cache, else embedded and measured."""
        config, embedder, inputs = self.config, self.embedder, self.inputs
        results_file = None
        if is_served(embedder):
            self.probe()  # a server's answers are part of its identity: measured every run
        if self.cache.results is not None:
            results_file = self.cache.results / f"{results_key(config, embedder, inputs)}.json"
            cached = cached_results(results_file, config, embedder.identity.digest)
            if cached is not None:
                self.report.reused, self.report.cached_results = True, results_file
                self.report.checked = identity_checked(embedder.identity)
                self.report.embedding = dataclasses.replace(self.report.probe)  # its checks
                return cached if self.record_speed else cached.without_speed()
        results = self._embed_and_measure()
        if results_file is not None:
            keep_results(results, results_file)
        return results

    def _embed_and_measure(self) -> NiahResults:
        planning = self.plan()
        config = self.config
        total = block_count(config, self.inputs)
        progress = self.progress
        # The time left, from the tokens the model reads of each block.
        weights = block_weights(config, self.inputs, self.embedder.windows.document)
        progress.start("building and embedding haystacks", total, "blocks", weights=weights)
        started = time.perf_counter()
        seconds = self.report.seconds
        tokens = [0]

        def batches() -> Generator[list[ModelInput], None, None]:
            yield planning.queries
            for fresh in plan_in_background(planning, seconds):
                yield fresh
                stats = self.report.embedding
                progress.advance(1, stats.tokens - tokens[0])
                tokens[0] = stats.tokens

        with contextlib.closing(batches()) as planned:  # stops the planner on an error
            vectors = self.embed(planned)
        stats = self.report.embedding
        progress.finish(f"{stats.embedded:,} texts embedded, {stats.read:,} read from the cache")
        measured = time.perf_counter()
        layout = layout_of(planning, self.inputs, self.embedder)
        results = measure(self.config, self.inputs.selected.groups, layout, vectors)
        if self.record_speed:
            speed = speed_record(
                planning.plan, self.config.lengths, self.model_seconds, self.request_seconds
            )
            results = dataclasses.replace(results, speed=speed)
        done = time.perf_counter()
        seconds |= {"encode": stats.seconds, "measure": done - measured, "total": done - started}
        return results


def plan_inputs(
    config: NiahConfig,
    *,
    embedder: Embedder | None = None,
    inputs: Inputs | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> tuple[Plan, list[ModelInput]]:
    """Build every haystack and plan every model input of ``config``, as its run would.

    Nothing of the grid is embedded; the window probe's few texts are, through the caches
    a run with the same ``cache_dir`` and ``use_cache`` uses, so the plan cuts inputs where
    the run's would.
    """
    run = Run.prepare(
        config, cache=CachePolicy.resolve(cache_dir, use_cache), embedder=embedder, inputs=inputs
    )
    planning = run.plan()
    out = list(planning.queries)
    for block in planning.blocks:
        out.extend(block_inputs(planning, block))
    return planning.plan, out
