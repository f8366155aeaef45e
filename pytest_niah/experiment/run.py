"""One run of one config: plan -> embed all inputs or a share -> measure (:class:`Run`).

Haystacks are built group by group on a worker thread while the main thread embeds what is
ready; the embedding goes through the embedding cache and, for a served model, its watch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.gil_handoff import quick_handoffs
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.server_fingerprint import is_served, start_watch
from pytest_niah.embed.server_watch import run_seed
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.vector_table import VectorTable
from pytest_niah.embed.window_probe import WindowMeasurement
from pytest_niah.experiment.background_planning import plan_in_background
from pytest_niah.experiment.batch_budget import budget
from pytest_niah.experiment.block_progress import block_count, block_weights
from pytest_niah.experiment.measuring import layout_of, measure
from pytest_niah.experiment.planning import Planning, start_planning
from pytest_niah.experiment.probe_step import books_split_meanwhile, probe_window
from pytest_niah.experiment.results_cache import cached_results, keep_results, results_key
from pytest_niah.experiment.run_inputs import Inputs, load_inputs
from pytest_niah.experiment.run_report import RunReport, identity_checked
from pytest_niah.experiment.speed import speed_record
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.progress import NoProgress, Progress
from pytest_niah.results.niah_results import NiahResults


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

        # closing: stops the planner on an error
        with contextlib.closing(batches()) as planned, quick_handoffs(self.embedder):
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
