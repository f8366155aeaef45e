"""Reports of saved results: a self-contained HTML page, markdown, CSV and JSON.

One results object gives a report of that model; several give a comparison in which every
figure draws every model. matplotlib is needed only for :func:`write_report`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from pytest_niah.report.tables import cases_csv, summary_markdown
from pytest_niah.results.niah_results import NiahResults

__all__ = ["check_labels", "default_labels", "summary_markdown", "write_report"]

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def write_report(
    results: Sequence[NiahResults],
    out_dir: str | os.PathLike[str],
    *,
    labels: Sequence[str] | None = None,
) -> dict[str, Path]:
    """Write a report of one model, or a comparison of several, into ``out_dir``.

    Files: ``report.html`` (self-contained: images embedded as base64 PNG, no external
    links or scripts), ``results.json`` (or ``results.<label>.json`` per model when there
    are several), ``cases.csv`` (every case of every model, with a ``model`` column) and
    ``summary.md``. When ``GITHUB_STEP_SUMMARY`` is set, ``summary.md``'s text is appended
    to that file.

    Args:
        results: One results object per model; at least one.
        out_dir: The folder to write into (created if missing).
        labels: The display name of each model; defaults to each model's name, made unique.

    Returns:
        File name -> path of every file written into ``out_dir``.

    Raises:
        ValueError: no results, or labels that do not match them one to one.
        MatplotlibMissingError: matplotlib is not installed.
    """
    from pytest_niah.report.figures import render_figures
    from pytest_niah.report.html import render_html

    runs = list(results)
    names = check_labels(runs, labels)
    figures = render_figures(runs, names)
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    summary = summary_markdown(runs, names)
    written = {
        "report.html": _write(target / "report.html", render_html(runs, names, figures)),
        **_write_results(target, runs, names),
        "cases.csv": _write(target / "cases.csv", cases_csv(runs, names)),
        "summary.md": _write(target / "summary.md", summary),
    }
    append_step_summary(summary)
    return written


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


def append_step_summary(text: str) -> Path | None:
    """Append ``text`` to the GitHub Actions step summary file, when one is set.

    Returns:
        The step summary's path, or ``None`` outside GitHub Actions.
    """
    path = os.environ.get(STEP_SUMMARY_ENV)
    if not path:
        return None
    target = Path(path)
    # Keep what earlier steps wrote and start on a fresh line.
    previous = target.read_text(encoding="utf-8") if target.is_file() else ""
    separator = "\n" if previous and not previous.endswith("\n") else ""
    with target.open("a", encoding="utf-8") as handle:
        handle.write(separator + text)
    return target


def results_file_names(labels: Sequence[str]) -> list[str]:
    """``results.json`` for one model, else ``results.<label>.json`` with a file-safe label."""
    if len(labels) == 1:
        return ["results.json"]
    stems = [re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "model" for label in labels]
    # Labels that differ only in unsafe characters would otherwise share a file.
    unique = [s if stems.count(s) == 1 else f"{s}-{i + 1}" for i, s in enumerate(stems)]
    return [f"results.{stem}.json" for stem in unique]


def _write_results(
    target: Path, results: Sequence[NiahResults], labels: Sequence[str]
) -> dict[str, Path]:
    names = results_file_names(labels)
    return {name: r.save(target / name) for name, r in zip(names, results, strict=True)}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
