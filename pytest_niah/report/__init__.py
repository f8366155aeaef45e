"""Reports of saved results: a self-contained HTML page, markdown, CSV and JSON.

One results object gives a report of that model; several give a comparison in which every
figure draws every model. matplotlib is needed only for :func:`write_report`. The package
re-exports its public API: the labels (:mod:`~pytest_niah.report.report_labels`) and the
GitHub step summary (:mod:`~pytest_niah.report.step_summary`) have modules of their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_niah.errors import OutputError
from pytest_niah.files import write_atomic
from pytest_niah.naming import results_file_names
from pytest_niah.report.comparison import ReportComparison, comparisons_json
from pytest_niah.report.escape import file_bytes
from pytest_niah.report.headline import GateOutcome
from pytest_niah.report.markdown_and_csv import cases_csv, step_summary_markdown, summary_markdown
from pytest_niah.report.report_folder import replaced_folder
from pytest_niah.report.report_history import history_html_section
from pytest_niah.report.report_labels import check_labels, default_labels
from pytest_niah.report.step_summary import (
    append_step_summary,
    check_step_summary,
    step_summary_path,
    write_step_summary,
)
from pytest_niah.results.niah_results import NiahResults

__all__ = [
    "GateOutcome",
    "ReportComparison",
    "append_step_summary",
    "check_labels",
    "check_step_summary",
    "default_labels",
    "step_summary_markdown",
    "step_summary_path",
    "summary_markdown",
    "write_report",
    "write_step_summary",
]


def write_report(
    results: Sequence[NiahResults],
    out_dir: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
    comparisons: Sequence[ReportComparison] = (),
    step_summary: bool = True,
    storage: str | os.PathLike[str] | None = None,
    history_labels: Sequence[str] | None = None,
    gates: Sequence[GateOutcome] | None = None,
    inconclusive: str = "auto",
) -> dict[str, Path]:
    """Write a report of one model, or a comparison of several, into ``out_dir``.

    Files: ``report.html`` (self-contained: images as base64 PNG, no links or scripts),
    ``results.json`` (``results.<label>.json`` each when several), ``cases.csv``,
    ``summary.md`` and, with ``comparisons``, ``comparison.json``: in a new folder that then
    replaces ``out_dir`` whole (a kill leaves the old report or the new one, never a mix).

    Args:
        results: One results object per model; at least one.
        out_dir: The folder (created if missing); it may hold only a report's files.
        labels: Each model's display name; defaults to its name, made unique.
        comparisons: Each model's comparison with its baseline (``comparison.json`` too).
        step_summary: Append summary.md to ``GITHUB_STEP_SUMMARY`` when it is set (False
            for a caller that writes it itself, :func:`write_step_summary`).
        storage: Saved runs (``--niah-storage``): report.html's History section.
        history_labels: The labels whose saved runs it shows; ``labels`` when ``None``.
        gates: Every gate's outcome, for summary.md's headline and gated tables; ``None``
            counts the comparisons' ``--niah-compare-fail`` gates under ``inconclusive``.
        inconclusive: The inconclusive policy when ``gates`` is ``None``.

    Returns:
        File name -> path of every file written into ``out_dir``.

    Raises:
        ValueError: no results, or labels that do not match them one to one.
        MatplotlibMissingError: matplotlib is not installed (nothing is written then).
        OutputError: a file, the folder or the step summary cannot be written, or
            ``out_dir`` holds files that are not a report; the message names the path.
    """
    runs = list(results)
    names = check_labels(runs, labels)
    figures = _figures(runs, names, comparisons)  # before anything else: needs matplotlib
    summary = summary_markdown(runs, names, comparisons, gates=gates, inconclusive=inconclusive)
    shown = names if history_labels is None else history_labels
    history = "" if storage is None else history_html_section(storage, shown, runs, names)
    target = Path(out_dir)
    written = _write_all(target, _texts(runs, names, comparisons, figures, summary, history))
    if step_summary:
        try:
            append_step_summary(summary)
        except OutputError as exc:
            raise OutputError(
                f"{exc.problem} (the report itself was written to {target})", exc.hint
            ) from None
    return written


_Figures = tuple[list[tuple[Any, bytes]], bytes | None]  # (figures, comparison figure)


def _figures(
    runs: list[NiahResults], names: list[str], comparisons: Sequence[ReportComparison]
) -> _Figures:
    """The report's figures (with each baseline's speed) and the comparison figure."""
    from pytest_niah.report.figures import comparison_figure, render_figures
    from pytest_niah.report.speed_figure import with_baselines

    figures = with_baselines(render_figures(runs, names), runs, names, comparisons)
    return figures, comparison_figure(comparisons) if comparisons else None


def _texts(
    runs: list[NiahResults],
    names: list[str],
    comparisons: Sequence[ReportComparison],
    figures: _Figures,
    summary: str,
    history: str,
) -> dict[str, str]:
    """Every file of the report folder, by name."""
    from pytest_niah.report.html import render_html

    html = render_html(runs, names, figures[0], comparisons, figures[1], history)
    texts: dict[str, str] = {"report.html": html}
    texts.update(
        {name: r.to_json() for name, r in zip(results_file_names(names), runs, strict=True)}
    )
    texts["cases.csv"] = cases_csv(runs, names)
    texts["summary.md"] = summary
    if comparisons:
        texts["comparison.json"] = comparisons_json(comparisons)
    return texts


def write_refusal_summary(target: str | os.PathLike[str], text: str) -> Path:
    """Write a refused run's report folder: its ``summary.md`` alone, which says why.

    The folder is replaced as a unit, as a report is: it then holds this run's outcome,
    never an earlier run's report that a pull-request comment would post as this one's.
    """
    return _write_all(Path(target), {"summary.md": text})["summary.md"]


def _write_all(target: Path, texts: Mapping[str, str]) -> dict[str, Path]:
    """Write every file into a new folder that then replaces ``target`` whole.

    A kill or a failure leaves ``target`` holding the previous report, never files of two
    runs (:func:`pytest_niah.report.report_folder.replaced_folder`); a failure names the file.
    """
    written = {}
    with replaced_folder(target) as staging:
        for name, text in texts.items():
            path = target / name
            try:
                write_atomic(staging / name, file_bytes(text))
            except OSError as exc:
                raise OutputError(
                    f"cannot write {path}: {exc.strerror or exc}",
                    "free disk space or choose a folder you can write; the previous report "
                    "was kept",
                ) from None
            written[name] = path
    return written
