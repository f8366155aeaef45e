"""The GitHub Actions step summary: checked up front, appended to, never half-written.

``GITHUB_STEP_SUMMARY`` names the file; outside GitHub Actions it is unset and nothing here
writes anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_niah.errors import OutputError
from pytest_niah.report.comparison import ReportComparison
from pytest_niah.report.escape import file_bytes
from pytest_niah.report.markdown_and_csv import step_summary_markdown
from pytest_niah.report.report_labels import check_labels
from pytest_niah.results.niah_results import NiahResults

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


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
            handle.write(separator + file_bytes(text))
    except OSError as exc:
        raise OutputError(
            f"cannot append the summary to the step summary {target} "
            f"({STEP_SUMMARY_ENV}): {exc.strerror or exc}",
            f"point {STEP_SUMMARY_ENV} at a writable file, or unset it outside GitHub Actions",
        ) from None
    return target
