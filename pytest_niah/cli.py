"""The ``pytest-niah`` command: reports from saved results, without running any model.

Examples::

    pytest-niah report results.json --out niah-report
    pytest-niah report minilm.json jina.json --label MiniLM --label jina-v3
    pytest-niah report results.json --compare .niah/runs/minilm/Linux-x86_64-cp311/base.json
    pytest-niah summary results.json --compare baseline.json --compare-fail auc:0.02
    pytest-niah history --storage .niah/runs --out niah-history
    pytest-niah options
    pytest-niah --version

Every ``RESULTS.json`` may be a results file (``--niah-json``, a report's ``results.json``)
or a saved run (``--niah-save``). Exit codes: 0 done; 1 an output could not be written
(or matplotlib is missing); 2 a usage error or an input file that cannot be read or
compared; 130 interrupted. An error is one line on stderr, ``pytest-niah: error: ...``,
naming the file and the fix; never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_niah.errors import NiahError

if TYPE_CHECKING:
    from pathlib import Path

    from pytest_niah.report.comparison import ReportComparison
    from pytest_niah.results.niah_results import NiahResults

PROG = "pytest-niah"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CliError(NiahError):
    """A problem to report in one line, with the exit code to return."""

    def __init__(self, problem: str, hint: str = "", *, code: int = EXIT_USAGE) -> None:
        super().__init__(problem, hint)
        self.code = code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The exit code: 0 on success, 1 when writing failed, 2 on a usage error or a
        results file that cannot be read or compared, 130 when interrupted.
    """
    from pytest_niah.errors import OutputError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        code: int = args.handler(args)
        return code
    except CliError as exc:
        return _fail(str(exc), exc.code)
    except OutputError as exc:
        return _fail(str(exc), EXIT_FAILED)
    except NiahError as exc:
        return _fail(str(exc), EXIT_USAGE)
    except BrokenPipeError:
        # The reader went away (``pytest-niah summary x | head``): not an error of ours.
        _silence_stdout()
        return EXIT_FAILED
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPTED)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its ``report``, ``summary`` and ``options`` commands."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Render reports of saved pytest-niah results (no model is run).",
        epilog=(
            "Exit codes: 0 done, 1 an output could not be written, 2 a usage error or an "
            "input file that cannot be read or compared."
        ),
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    report = commands.add_parser(
        "report",
        help="write an HTML report (a comparison when several files are given)",
        description=(
            "Write report.html, results JSON, cases.csv and summary.md (and comparison.json "
            "with --compare) into --out. With GITHUB_STEP_SUMMARY set, the summary is also "
            "appended there."
        ),
    )
    _add_inputs(report)
    report.add_argument(
        "--out", default="niah-report", metavar="DIR", help="output folder (default: %(default)s)"
    )
    report.add_argument(
        "--no-step-summary",
        action="store_true",
        help="do not append the summary to GITHUB_STEP_SUMMARY even when it is set",
    )
    report.set_defaults(handler=_report)
    summary = commands.add_parser(
        "summary",
        help="print the markdown summary (comparison and per-length tables) to stdout",
        description=(
            "Print the markdown summary of saved results: a PR comment or step summary body "
            '(pytest-niah summary r.json --compare base.json >> "$GITHUB_STEP_SUMMARY").'
        ),
    )
    _add_inputs(summary)
    summary.set_defaults(handler=_summary)
    _add_history(commands)
    options = commands.add_parser(
        "options",
        help="print every --niah-* option as a markdown table",
        description="Print the option table (option, ini key, environment variable, default).",
    )
    options.set_defaults(handler=_options)
    return parser


def version() -> str:
    """The installed pytest-niah version (the package's own when not installed)."""
    from importlib import metadata

    try:
        return metadata.version("pytest-niah")
    except metadata.PackageNotFoundError:
        from pytest_niah import __version__

        return __version__


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS.json",
        help="results file(s) (--niah-json) or saved run(s) (--niah-save)",
    )
    parser.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="display name per results file, in order (default: the model's name)",
    )
    parser.add_argument(
        "--compare",
        action="append",
        metavar="BASELINE.json",
        help=(
            "compare with this baseline (results file or saved run), paired on identical "
            "cells; give one per results file, in order"
        ),
    )
    parser.add_argument(
        "--compare-fail",
        metavar="EXPR,...",
        default="",
        help="allowed drops that fill the verdict column, e.g. 'auc:0.02,ratio:5%%'",
    )
    parser.add_argument(
        "--compare-allow",
        metavar="FIELDS",
        default="",
        help="fields the baseline may differ in (comma list), e.g. 'tokenizer'",
    )


def _report(args: argparse.Namespace) -> int:
    from pytest_niah.report import write_report
    from pytest_niah.report.figures import MatplotlibMissingError

    results = _load_all(args.results)
    labels = _labels(results, args.label)
    comparisons = _comparisons(args, results, labels)
    try:
        written = write_report(
            results,
            args.out,
            labels=labels,
            comparisons=comparisons,
            step_summary=not args.no_step_summary,
        )
    except MatplotlibMissingError as exc:
        raise CliError(str(exc), code=EXIT_FAILED) from None
    for path in written.values():
        print(path)
    return EXIT_OK


def _summary(args: argparse.Namespace) -> int:
    from pytest_niah.report import summary_markdown

    results = _load_all(args.results)
    labels = _labels(results, args.label)
    comparisons = _comparisons(args, results, labels)
    sys.stdout.write(summary_markdown(results, labels, comparisons))
    sys.stdout.flush()
    return EXIT_OK


def _options(args: argparse.Namespace) -> int:
    from pytest_niah.config.options import markdown_table

    sys.stdout.write(markdown_table())
    sys.stdout.flush()
    return EXIT_OK


def _add_history(commands: Any) -> None:
    history = commands.add_parser(
        "history",
        help="print (and plot) each length's metrics over every saved run, with drift",
        description=(
            "Read every saved run (--niah-save) in the store and print, per model label, one "
            "table per metric: a row per run (save date, name, commit, model identity), a "
            "column per length with its 95% interval, then the total change from the first "
            "run to the last and the largest single step. A length whose total change is "
            "larger than every single step drifted slowly: no comparison with the previous "
            "run showed it. With --out, also write history.png, history.md and history.html."
        ),
    )
    history.add_argument(
        "--storage",
        metavar="DIR",
        help=(
            "folder of saved runs (default: .niah/runs in the current folder or the nearest "
            "folder above that has one)"
        ),
    )
    history.add_argument(
        "--label",
        action="extend",
        nargs="+",
        metavar="LABEL",
        help="only these model labels (repeatable; default: every label)",
    )
    history.add_argument("--arm", default="onehop", help="arm to show (default: %(default)s)")
    history.add_argument(
        "--scoring", default="whole", help="scoring to show (default: %(default)s)"
    )
    history.add_argument(
        "--metric",
        default="auc,ratio",
        metavar="METRICS",
        help="metrics, comma-separated: auc, ratio, norm, sep, effect (default: %(default)s)",
    )
    history.add_argument(
        "--machine",
        default="all",
        metavar="ID|all",
        help="only runs saved on this machine id, e.g. Linux-x86_64-cp311 (default: all)",
    )
    history.add_argument(
        "--min-drift",
        type=float,
        default=None,
        metavar="X",
        help="smallest total change called drift (default: 0.01)",
    )
    history.add_argument(
        "--out", metavar="DIR", help="also write history.png, history.md and history.html here"
    )
    history.set_defaults(handler=_history)


def _history(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pytest_niah.report.escape import one_line
    from pytest_niah.report.figures import MatplotlibMissingError
    from pytest_niah.report.history import (
        history_figure,
        history_html,
        history_lines,
        history_markdown,
    )
    from pytest_niah.results.history import DRIFT_MIN, load_history, metric_names

    metrics = metric_names(args.metric)
    min_change = DRIFT_MIN if args.min_drift is None else args.min_drift
    if not min_change >= 0:
        raise CliError(f"--min-drift: {args.min_drift} is not a number >= 0")
    store = Path(args.storage) if args.storage else _default_storage()
    if not store.is_dir():
        raise CliError(
            f"no saved runs: the storage folder {store} does not exist. Fix: save runs with "
            "pytest --niah-model=... --niah-save=NAME, or point --storage at the folder "
            "--niah-storage names"
        )
    labels = list(args.label or ())
    machine = None if args.machine == "all" else args.machine
    history = load_history(
        store, labels=labels, machine=machine, arm=args.arm, scoring=args.scoring
    )
    unreadable = [s for s in history.skipped if s.unreadable]
    for skipped in unreadable:
        print(f"{PROG}: warning: skipped {one_line(skipped.reason)}", file=sys.stderr)
    if not history.series:
        read = len(unreadable) < len(history.skipped)
        raise CliError(_no_runs_message(store, labels, machine, args, bool(unreadable), read))
    for skipped in history.skipped:
        if not skipped.unreadable:
            print(f"{PROG}: note: left out {one_line(skipped.reason)}", file=sys.stderr)
    try:
        figure = history_figure(history, metrics, min_change=min_change) if args.out else None
    except MatplotlibMissingError as exc:
        raise CliError(f"--out: {exc}", code=EXIT_FAILED) from None
    for line in history_lines(history, metrics, min_change=min_change):
        print(line)
    if args.out and figure is not None:
        texts: dict[str, str | bytes] = {
            "history.png": figure,
            "history.md": history_markdown(history, metrics, min_change=min_change),
            "history.html": history_html(history, metrics, figure, min_change=min_change),
        }
        for path in _write_files(Path(args.out), texts):
            print(path)
    return EXIT_OK


def _default_storage() -> Path:
    """``.niah/runs`` in the current folder or the nearest folder above that has one."""
    from pathlib import Path

    from pytest_niah.config.paths import store_dir

    here = Path.cwd()
    for folder in (here, *here.parents):
        if store_dir(folder).is_dir():
            return store_dir(folder)
    return store_dir(here)


def _no_runs_message(
    store: Path,
    labels: Sequence[str],
    machine: str | None,
    args: argparse.Namespace,
    bad: bool,
    read: bool,
) -> str:
    from pytest_niah.results.storage import run_files

    if bad and not read:
        return (
            f"no readable saved run in {store} (every file was skipped, see the warnings). "
            "Fix: save runs again with pytest --niah-model=... --niah-save=NAME"
        )
    if not run_files(store):
        return (
            f"no saved runs in {store}. Fix: save runs with pytest --niah-model=... "
            "--niah-save=NAME (or point --storage at the folder --niah-storage names)"
        )
    folders = sorted({f"{p.parent.parent.name}/{p.parent.name}" for p in run_files(store)})
    wanted = ", ".join(
        [*(f"label {label!r}" for label in labels), *([f"machine {machine!r}"] if machine else [])]
    )
    what = f"of {wanted} " if wanted else ""
    return (
        f"no saved run {what}with arm {args.arm!r} and scoring {args.scoring!r} in {store}. "
        f"Fix: choose among the saved label/machine folders: {', '.join(folders)}"
    )


def _write_files(target: Path, files: dict[str, str | bytes]) -> list[Path]:
    from pytest_niah.errors import OutputError
    from pytest_niah.files import write_atomic

    written = []
    for name, data in files.items():
        path = target / name
        payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
        try:
            written.append(write_atomic(path, payload))
        except OSError as exc:
            raise OutputError(
                f"cannot write {path}: {exc.strerror or exc}", "choose a folder you can write"
            ) from None
    return written


def _labels(results: Sequence[NiahResults], given: Sequence[str] | None) -> list[str]:
    from pytest_niah.report import check_labels

    try:
        return check_labels(results, given)
    except ValueError as exc:
        raise CliError(f"--label: {exc}") from None


def _comparisons(
    args: argparse.Namespace, results: Sequence[NiahResults], labels: Sequence[str]
) -> list[ReportComparison]:
    """Each results file against its --compare baseline (none without --compare)."""
    from pytest_niah.config.options import default
    from pytest_niah.config.parsers import choices_parser, named, parse_allowances
    from pytest_niah.config.vocabulary import COMPARED
    from pytest_niah.report.comparison import ReportComparison
    from pytest_niah.results.compare import compare_results

    baselines: list[str] = args.compare or []
    if not baselines:
        if args.compare_fail or args.compare_allow:
            raise CliError("--compare-fail and --compare-allow need --compare BASELINE.json")
        return []
    if len(baselines) != len(results):
        raise CliError(
            f"--compare: got {len(baselines)} baselines for {len(results)} results files; "
            "give one --compare per results file, in order"
        )
    allowances = (
        named("--compare-fail", parse_allowances, args.compare_fail) if args.compare_fail else ()
    )
    allow = (
        named("--compare-allow", choices_parser(COMPARED), args.compare_allow)
        if args.compare_allow
        else ()
    )
    out = []
    for label, current, source in zip(labels, results, baselines, strict=True):
        baseline = _load(source)
        comparison = compare_results(
            current,
            baseline,
            n_resamples=current.config.bootstrap or default("bootstrap"),
            seed=current.config.seed,
            allow=allow,
            source=source,
        )
        out.append(ReportComparison(label, source, comparison, tuple(allowances)))
    return out


def _load_all(paths: Sequence[str]) -> list[NiahResults]:
    return [_load(path) for path in paths]


def _load(path: str) -> NiahResults:
    """A results file or a saved run; any problem is a one-line error naming the file."""
    from pathlib import Path

    from pytest_niah.errors import ResultsError
    from pytest_niah.results.storage import load_run

    file = Path(path)
    if not file.exists():
        raise CliError(
            f"{path}: no such file. Fix: give the path of a results file (--niah-json) or a "
            "saved run (--niah-save)"
        )
    if file.is_dir():
        raise CliError(
            f"{path}: is a folder, not a results file. Fix: give a results file inside it, "
            "e.g. its results.json"
        )
    try:
        return load_run(file)[1]
    except ResultsError as exc:
        raise CliError(str(exc)) from None
    except (AttributeError, TypeError, ValueError, LookupError, RecursionError) as exc:
        # A shape the validation did not foresee: still a problem of this file, not a crash.
        raise CliError(
            f"{path}: not a pytest-niah results file ({type(exc).__name__}: {exc}). Fix: "
            "write the file again with --niah-json, --niah-save or NiahResults.save"
        ) from None


def _fail(message: str, code: int) -> int:
    from pytest_niah.report.escape import one_line

    # One line, whatever a path or label in the message holds.
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
