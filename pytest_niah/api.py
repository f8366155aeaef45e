"""Compare and report from Python, as the plugin does after a run.

:func:`compare` pairs a run with its baseline, with the run's own bootstrap size and seed;
:func:`write_report` writes the report folder of one run or several. Both are exported from
:mod:`pytest_niah` next to :func:`~pytest_niah.experiment.run_experiment`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pytest_niah.report import ReportComparison
from pytest_niah.report import write_report as write_report_folder
from pytest_niah.results.compare import Comparison, compare_results
from pytest_niah.results.niah_results import NiahResults

__all__ = ["compare", "write_report"]


def compare(
    results: NiahResults,
    baseline: NiahResults,
    *,
    n_resamples: int | None = None,
    seed: int | None = None,
    allow: Iterable[str] = (),
) -> Comparison:
    """Compare ``results`` with ``baseline`` on the cells both measured (paired deltas).

    Args:
        results: The current run.
        baseline: The run to compare with.
        n_resamples: The paired bootstrap's size; ``None``: the current run's
            ``bootstrap`` (0 gives no interval: every verdict is inconclusive).
        seed: The bootstrap's seed; ``None``: the current run's ``seed``.
        allow: Differences of the runs' settings to accept, as ``--niah-compare-allow``
            takes them.

    Returns:
        The comparison: its ``deltas`` (each with a ``verdict`` under an allowance) and
        how many cells were paired.

    Raises:
        CompareError: the runs are not comparable, or share no cell.
    """
    return compare_results(
        results,
        baseline,
        n_resamples=results.config.bootstrap if n_resamples is None else n_resamples,
        seed=results.config.seed if seed is None else seed,
        allow=allow,
    )


def write_report(
    results: NiahResults | Sequence[NiahResults],
    folder: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    comparisons: Sequence[Comparison | ReportComparison] = (),
    step_summary: bool = False,
) -> dict[str, Path]:
    """Write the report of one run, or the comparison of several, into ``folder``.

    The files are the plugin's ``--niah-report`` ones: ``report.html``, ``results.json``,
    ``cases.csv``, ``summary.md`` and, with ``comparisons``, ``comparison.json``.

    Args:
        results: One run, or one run per model.
        folder: The folder to write into (created if missing).
        labels: Each model's display name; each model's name by default.
        comparisons: Comparisons with baselines (from :func:`compare`), in the order of
            ``results``: each becomes a section of the report.
        step_summary: Also append the summary to ``$GITHUB_STEP_SUMMARY`` when it is set.

    Returns:
        File name -> path of every file written.

    Raises:
        ValueError: no results, labels that do not match them, or more comparisons than
            results.
        MatplotlibMissingError: matplotlib is not installed.
        OutputError: a file or the folder cannot be written.
    """
    from pytest_niah.report import check_labels

    runs = [results] if isinstance(results, NiahResults) else list(results)
    names = check_labels(runs, labels)
    if len(comparisons) > len(runs):
        raise ValueError(
            f"got {len(comparisons)} comparisons for {len(runs)} results; give at most one "
            "per model, in the order of the results"
        )
    sections = [
        c if isinstance(c, ReportComparison) else ReportComparison(names[i], "baseline", c)
        for i, c in enumerate(comparisons)
    ]
    return write_report_folder(
        runs, folder, labels=names, comparisons=sections, step_summary=step_summary
    )
