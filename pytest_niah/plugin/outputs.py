"""What a run writes at its end: results files, saved runs, reports and the step summary.

Each file is written whole or not at all. An output that cannot be written is reported
with its path and cause, the others are still written, and the message names the run's
shared folder, where the results computed in this run are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_niah.errors import NiahError
from pytest_niah.plugin.session import NiahSession

if TYPE_CHECKING:
    from pytest_niah.measure.gate_reasons import GateOutcome
    from pytest_niah.report import ReportComparison
    from pytest_niah.results.niah_results import NiahResults


def write_outputs(niah: NiahSession) -> list[str]:
    """Write ``--niah-json``, ``--niah-save``, ``--niah-report`` and the step summary.

    The step summary (``GITHUB_STEP_SUMMARY``) is appended to whenever it is set, with or
    without a report.

    Every path written is added to ``niah.state.written``, the step summary's (appended to) too.

    Returns:
        One message per output that could not be written (empty when all were).
    """
    finished = {label: r for label in niah.labels if (r := niah.stored_results(label))}
    if not finished:
        return []
    if niah.settings.json or niah.settings.save or niah.settings.report:
        from pytest_niah.results.snapshots import remove_stale_snapshot_temps

        remove_stale_snapshot_temps(niah.settings.snapshot_dir)  # never committed with the folder
    failed: list[str] = []

    def attempt(what: str, write: Callable[[], list[Path]]) -> None:
        try:
            niah.state.written.extend(write())
        except (NiahError, OSError) as exc:
            kept = (
                f"; this run's results are kept in {niah.state.shared_dir}"
                if niah.state.shared_dir
                else ""
            )
            failed.append(f"{what} was not written: {exc}{kept}")

    if niah.settings.json:
        for label, results in finished.items():
            target = json_target(niah.settings.json, label, several=len(niah.labels) > 1)
            attempt(f"--niah-json {target}", partial(_save_json, results, target))
    if niah.settings.save:
        for label, results in finished.items():
            save = partial(_save_run, niah, results, label)
            attempt(f"--niah-save {niah.settings.save!r} of {label!r}", save)
    comparisons = _comparisons(niah, finished)
    if niah.settings.report:
        attempt(
            f"--niah-report {niah.settings.report}", partial(_report, niah, finished, comparisons)
        )
    else:
        from pytest_niah.report.step_summary import STEP_SUMMARY_ENV

        step = partial(_step_summary, niah, finished, comparisons)
        attempt(f"the step summary ({STEP_SUMMARY_ENV})", step)
    return failed


def json_target(json_path: str, label: str, *, several: bool) -> Path:
    """The ``--niah-json`` file of one model: FILE itself, or FILE.<label>.json when several.

    The label part is the label's store folder name
    (:func:`~pytest_niah.naming.label_file_name`): one-to-one, bounded and safe.
    """
    target = Path(json_path)
    if not several:
        return target
    from pytest_niah.naming import label_file_name

    return target.with_name(f"{target.stem}.{label_file_name(label)}{target.suffix or '.json'}")


def _save_json(results: NiahResults, target: Path) -> list[Path]:
    return [results.save(target)]


def _save_run(niah: NiahSession, results: NiahResults, label: str) -> list[Path]:
    from pytest_niah.results.storage import RunStore

    store, overwrite = niah.settings.store_dir, niah.settings.save_overwrite
    return [RunStore(store).save(results, niah.settings.save, label=label, overwrite=overwrite)]


def _comparisons(niah: NiahSession, finished: dict[str, NiahResults]) -> list[ReportComparison]:
    from pytest_niah.report import ReportComparison
    from pytest_niah.report.headline import shown_path

    out: list[ReportComparison] = []
    for label in finished:
        comparison = niah.comparison(label)
        if comparison is not None:
            baseline = shown_path(niah.baselines.source(label))  # no runner's absolute path
            speed = getattr(niah.baselines.baseline(label), "speed", None)
            out.append(
                ReportComparison(label, baseline, comparison, niah.settings.compare_fail, speed)
            )
    return out


def gate_outcomes(niah: NiahSession, finished: dict[str, NiahResults]) -> list[GateOutcome]:
    """Every gate of the run (what its gate tests check), for summary.md's headline."""
    return [
        outcome
        for label, results in finished.items()
        for arm, scoring in results.variants
        for row in results.rows("length", arm, scoring)
        for outcome in niah.gates(label, row, results).outcomes(label)
    ]


def written_line(path: Path) -> str:
    """How a file written by the run is listed: its path; the step summary, as appended to.

    The step summary (``GITHUB_STEP_SUMMARY``) is a file of the CI job that earlier steps
    wrote to too: the run added its summary at the end and kept the rest.
    """
    from pytest_niah.report.step_summary import STEP_SUMMARY_ENV, step_summary_path

    step = step_summary_path()
    if step is not None and path == step.absolute():
        return f"{path} (appended: {STEP_SUMMARY_ENV})"
    return str(path)


def _runs_and_labels(
    niah: NiahSession, finished: dict[str, NiahResults]
) -> tuple[list[NiahResults], list[str]]:
    """The run's results, then each baseline, with the labels a report shows them under."""
    from pytest_niah.results.run_file import run_name_of

    runs, labels = list(finished.values()), list(finished)
    for label in finished:
        baseline = niah.baselines.baseline(label)
        if baseline is not None:
            runs.append(baseline)
            source = Path(niah.baselines.source(label))
            labels.append(f"{label} ({run_name_of(source) or source.stem})")
    return runs, labels


def _step_summary(
    niah: NiahSession, finished: dict[str, NiahResults], comparisons: list[ReportComparison]
) -> list[Path]:
    """Without --niah-report, the summary still goes to GITHUB_STEP_SUMMARY when it is set."""
    from pytest_niah.report import append_step_summary, step_summary_markdown, step_summary_path

    if step_summary_path() is None:
        return []
    runs, labels = _runs_and_labels(niah, finished)
    text = step_summary_markdown(runs, labels, comparisons, gates=gate_outcomes(niah, finished))
    path = append_step_summary(text)
    return [path.absolute()] if path is not None else []


def _report(
    niah: NiahSession, finished: dict[str, NiahResults], comparisons: list[ReportComparison]
) -> list[Path]:
    from pytest_niah.report import step_summary_path, write_report

    runs, labels = _runs_and_labels(niah, finished)
    written = write_report(
        runs,
        niah.settings.report,
        labels=labels,
        comparisons=comparisons,
        storage=niah.settings.store_dir,  # saved runs of these labels: a History section
        history_labels=list(finished),
        gates=gate_outcomes(niah, finished),
    )
    paths = list(written.values())
    step = step_summary_path()  # appended to by write_report (it raises when it cannot be)
    if step is not None:
        paths.append(step.absolute())
    return paths


def report_refusal(niah: NiahSession, label: str, refusal: NiahError) -> str:
    """Write a refused comparison where a run's outcome is read: ❌ and why, paths relative.

    The step summary (when one is set) gets it appended, and ``--niah-report``'s folder
    holds it as its ``summary.md``, which a pull-request comment posts; nothing else.

    Returns:
        What to add to the stop message: "" once written, else what could not be.
    """
    from pytest_niah.report import append_step_summary, write_refusal_summary
    from pytest_niah.report.headline import refusal_headline

    text = refusal_headline(label, refusal.problem, refusal.hint)
    missed = []
    try:
        append_step_summary(text)
    except NiahError as exc:
        missed.append(f"the refusal was not added to the step summary: {exc}")
    if niah.settings.report:
        try:
            niah.state.written.append(write_refusal_summary(niah.settings.report, text))
        except NiahError as exc:
            missed.append(f"the refusal was not written to {niah.settings.report}: {exc}")
    return "".join(f" ({note})" for note in missed)
