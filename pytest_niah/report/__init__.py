"""Reports of saved results: a self-contained HTML page, markdown, CSV and JSON.

One results object gives a report of that model; several give a comparison in which every
figure draws every model. matplotlib is needed only for :func:`write_report`.
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
from pytest_niah.report.headline import GateOutcome
from pytest_niah.report.markdown_and_csv import cases_csv, step_summary_markdown, summary_markdown
from pytest_niah.report.report_folder import replaced_folder
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

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


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
    history = (
        _history_html(storage, names if history_labels is None else history_labels, runs, names)
        if storage is not None
        else ""
    )
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


def write_step_summary(
    results: Sequence[NiahResults],
    labels: Sequence[str] | None = None,
    comparisons: Sequence[ReportComparison] = (),
) -> Path | None:
    """Append the markdown summary (with its comparisons) to the GitHub step summary.

    Does nothing outside GitHub Actions (``GITHUB_STEP_SUMMARY`` unset or empty).

    Returns:
        The step summary's path, or ``None`` when none is set.

    Raises:
        ValueError: no results, or labels that do not match them.
        OutputError: the step summary file cannot be written.
    """
    if step_summary_path() is None:
        return None
    runs = list(results)
    names = check_labels(runs, labels)
    return append_step_summary(step_summary_markdown(runs, names, comparisons))


def write_refusal_summary(target: str | os.PathLike[str], text: str) -> Path:
    """Write a refused run's report folder: its ``summary.md`` alone, which says why.

    The folder is replaced as a unit, as a report is: it then holds this run's outcome,
    never an earlier run's report that a pull-request comment would post as this one's.
    """
    return _write_all(Path(target), {"summary.md": text})["summary.md"]


def check_labels(results: Sequence[NiahResults], labels: Sequence[str] | None) -> list[str]:
    """The labels to use: the given ones after checks, else :func:`default_labels`.

    Raises:
        ValueError: no results, a label count that differs from the results', or a repeat.
    """
    if not results:
        raise ValueError("a report needs at least one results object")
    if labels is None:
        return default_labels(results)
    names = [str(label) for label in labels]
    if len(names) != len(results):
        raise ValueError(f"got {len(names)} labels for {len(results)} results; give one per model")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"labels must differ; repeated: {', '.join(repeated)}")
    return names


def default_labels(results: Sequence[NiahResults]) -> list[str]:
    """Each model's name; a repeated name gets ``#2``, ``#3`` ... so every label differs."""
    names = [r.model.name for r in results]
    labels = []
    for index, name in enumerate(names):
        seen = names[:index].count(name)
        labels.append(name if seen == 0 else f"{name} #{seen + 1}")
    return labels


def step_summary_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """The GitHub Actions step summary file (``GITHUB_STEP_SUMMARY``), or ``None``."""
    value = (os.environ if environ is None else environ).get(STEP_SUMMARY_ENV, "")
    return Path(value) if value else None


def check_step_summary(environ: Mapping[str, str] | None = None) -> Path | None:
    """Check up front that the step summary, if one is set, can be appended to.

    Returns:
        The step summary's path, or ``None`` when none is set.

    Raises:
        OutputError: it is a folder, or it (or the folder it would be created in) is not
            writable; the message names the path and the variable.
    """
    path = step_summary_path(environ)
    if path is None:
        return None
    if path.is_dir():
        problem = "is a folder"
    elif path.exists():
        problem = "" if os.access(path, os.W_OK) else "is not writable"
    elif not path.parent.is_dir():
        problem = f"cannot be created: its folder {path.parent} does not exist"
    else:
        problem = "" if os.access(path.parent, os.W_OK) else "cannot be created: no write access"
    if problem:
        raise OutputError(
            f"{STEP_SUMMARY_ENV}={path} {problem}",
            f"point {STEP_SUMMARY_ENV} at a writable file, or unset it outside GitHub Actions",
        )
    return path


def append_step_summary(text: str, path: str | os.PathLike[str] | None = None) -> Path | None:
    """Append ``text`` to the GitHub Actions step summary file, when one is set.

    What earlier steps wrote is kept; the text starts on a fresh line and is written in one
    call, so a reader never sees it half-appended.

    Args:
        text: Markdown, e.g. :func:`step_summary_markdown`.
        path: The file; ``GITHUB_STEP_SUMMARY`` when ``None``.

    Returns:
        The step summary's path, or ``None`` outside GitHub Actions.

    Raises:
        OutputError: the file cannot be appended to; the message names it.
    """
    target = Path(path) if path is not None else step_summary_path()
    if target is None:
        return None
    try:
        with target.open("ab+") as handle:
            handle.seek(0, os.SEEK_END)
            separator = b""
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                separator = b"" if handle.read(1) == b"\n" else b"\n"
            handle.write(separator + _encode(text))
    except OSError as exc:
        raise OutputError(
            f"cannot append the summary to the step summary {target} "
            f"({STEP_SUMMARY_ENV}): {exc.strerror or exc}",
            f"point {STEP_SUMMARY_ENV} at a writable file, or unset it outside GitHub Actions",
        ) from None
    return target


def _history_html(
    storage: str | os.PathLike[str],
    labels: Sequence[str],
    results: Sequence[NiahResults],
    names: Sequence[str],
) -> str:
    """The History section of the saved runs of ``labels`` in ``storage``; "" when none.

    Each label's series shows the arm and scoring ``pytest-niah history`` shows by default
    (onehop, whole) when this run measured them, else this run's first arm and scoring.
    """
    from pytest_niah.report.history_plot import history_figure
    from pytest_niah.report.history_view import history_section
    from pytest_niah.results.history_series import Series
    from pytest_niah.results.run_history import DEFAULT_METRICS, History, build_history
    from pytest_niah.results.saved_runs import Skipped, read_runs

    wanted = list(dict.fromkeys(str(label) for label in labels))
    if not wanted:
        return ""
    saved, skipped = read_runs(Path(storage), labels=wanted)
    if not saved:
        return ""
    current = dict(zip(names, results, strict=True))
    series: list[Series] = []
    left_out: list[Skipped] = list(skipped)
    for label in wanted:
        mine = [run for run in saved if run.label == label]
        if not mine:
            continue
        measured = current.get(label)
        variants = measured.variants if measured is not None else ()
        arm, scoring = (
            ("onehop", "whole") if ("onehop", "whole") in variants or not variants else variants[0]
        )
        built = build_history(mine, arm=arm, scoring=scoring)
        series.extend(built.series)
        left_out.extend(built.skipped)
    history = History(tuple(series), tuple(left_out))
    if not history.series:
        return ""
    png = history_figure(history, DEFAULT_METRICS)
    return history_section(history, DEFAULT_METRICS, png)


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
                write_atomic(staging / name, _encode(text))
            except OSError as exc:
                raise OutputError(
                    f"cannot write {path}: {exc.strerror or exc}",
                    "free disk space or choose a folder you can write; the previous report "
                    "was kept",
                ) from None
            written[name] = path
    return written


def _encode(text: str) -> bytes:
    # A label from undecodable command-line bytes holds lone surrogates: show them escaped.
    return text.encode("utf-8", errors="backslashreplace")
