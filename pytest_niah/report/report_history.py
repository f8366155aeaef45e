"""report.html's History section: the saved runs of the report's models, read from the store.

Each label's series shows the arm and scoring ``pytest-niah history`` shows by default
(onehop, whole) when this run measured them, else this run's first arm and scoring; the
section itself is drawn by :mod:`pytest_niah.report.history_view`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pytest_niah.results.niah_results import NiahResults


def history_html_section(
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
