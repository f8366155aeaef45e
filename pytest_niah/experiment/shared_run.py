"""One model's results for a pytest run: its experiment, or its shard jobs' parts gathered.

Called under the shared results file's lock (:func:`~pytest_niah.results.shared_files.
load_or_compute`), so one process per machine runs it; the model and inputs are asked for
only when the experiment runs here (a gate job of a sharded run loads no model).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_niah.results.shared_files import run_report_file

if TYPE_CHECKING:
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.config.run_settings import RunSettings
    from pytest_niah.embed.protocol import Embedder
    from pytest_niah.experiment import Inputs
    from pytest_niah.progress import Progress
    from pytest_niah.results.niah_results import NiahResults


def run_or_gather(
    label: str,
    config: NiahConfig,
    path: Path,
    settings: RunSettings,
    *,
    several: bool,
    embedder: Callable[[], Embedder],
    inputs: Callable[[], Inputs],
    progress: Progress | None,
) -> NiahResults:
    """Gather one model's parts (``--niah-from-shards``) or run it; save results and run report.

    Args:
        label: The model's label.
        config: Its experiment.
        path: Its shared results file; the run report is written beside it.
        settings: The run's options: the shard folder, the caches, ``--niah-speed``.
        several: The run has several models (each has a sub-folder of parts).
        embedder: Gives the model (loaded on first use).
        inputs: Gives the needle set, corpus and expansions.
        progress: Where the experiment reports its progress.
    """
    from pytest_niah.experiment import RunReport, run_experiment

    report = RunReport()
    if settings.from_shards:
        from pytest_niah.experiment.shards import results_from_shards

        parts = settings.parts_dir(label, several=several)
        results = results_from_shards(config, parts)
        report.from_shards = parts
    else:
        results = run_experiment(
            config,
            embedder=embedder(),
            inputs=inputs(),
            cache_dir=settings.cache.root,
            use_cache=settings.cache.enabled,
            progress=progress,
            report=report,
            speed=settings.speed,
        )
    results.save(path)
    report.save(run_report_file(path))
    return results
