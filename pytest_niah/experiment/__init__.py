"""Run the reference experiment: inputs -> haystacks -> embeddings -> scores -> results.

Haystacks are built group by group on a worker thread while the main thread embeds what is
ready (tokenizing releases the GIL, and so does the model's forward pass), so on a GPU the
tokenizer's work hides behind the model's. Each input the model reads is embedded once and
kept in the embedding cache; a finished run is kept in the results cache, keyed by
everything that determines it, so an identical re-run loads no model at all.
"""

from __future__ import annotations

from pathlib import Path

from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.protocol import Embedder
from pytest_niah.experiment.batch_budget import CPU_TOKEN_BUDGET, GPU_BATCH, budget
from pytest_niah.experiment.block_progress import block_count, block_weights
from pytest_niah.experiment.measuring import Layout, layout_of, measure
from pytest_niah.experiment.planning import (
    DEFAULT_CHUNK_TOKENS,
    Planning,
    block_inputs,
    start_planning,
)
from pytest_niah.experiment.probe_step import probe_window
from pytest_niah.experiment.results_cache import results_key
from pytest_niah.experiment.run import Run
from pytest_niah.experiment.run_inputs import Inputs, load_inputs, needle_kind, query_text
from pytest_niah.experiment.run_report import RunReport
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
    "block_weights",
    "budget",
    "layout_of",
    "load_inputs",
    "measure",
    "needle_kind",
    "plan_inputs",
    "probe_window",
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
