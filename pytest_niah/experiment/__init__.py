"""Run the reference experiment: inputs -> haystacks -> embeddings -> scores -> results.

Haystacks are built group by group on a worker thread while the main thread embeds what is
ready (tokenizing releases the GIL, and so does the model's forward pass), so on a GPU the
tokenizer's work hides behind the model's. Each input the model reads is embedded once and
kept in the embedding cache; a finished run is kept in the results cache, keyed by
everything that determines it, so an identical re-run loads no model at all.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import default
from pytest_niah.config.paths import CACHE_ENV
from pytest_niah.digest import digest
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.runner import EmbeddingStats, Encoder
from pytest_niah.embed.store import CACHE_FILE, EmbeddingStore
from pytest_niah.errors import NiahCacheWarning, NiahError
from pytest_niah.experiment.measuring import Layout, layout_of, measure
from pytest_niah.experiment.planning import (
    DEFAULT_CHUNK_TOKENS,
    Inputs,
    Planning,
    block_inputs,
    load_inputs,
    needle_kind,
    plan_in_background,
    plan_inputs,
    query_text,
    start_planning,
)
from pytest_niah.progress import NoProgress, Progress
from pytest_niah.results.niah_results import NiahResults, package_versions
from pytest_niah.results.schema import SCHEMA_VERSION

CPU_TOKEN_BUDGET = default("token_budget")
GPU_BATCH = 32  # texts of the full window per batch on a GPU (what sentence-transformers uses)

__all__ = [
    "CPU_TOKEN_BUDGET",
    "DEFAULT_CHUNK_TOKENS",
    "GPU_BATCH",
    "Inputs",
    "Layout",
    "Planning",
    "RunReport",
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
    for fresh in plan_in_background(planning, report.seconds):
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
