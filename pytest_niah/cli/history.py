"""``pytest-niah history``: each length's metrics over every saved run, with drift."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_niah.cli.common import EXIT_FAILED, EXIT_OK, PROG, write_files
from pytest_niah.cli.shared_options import given_text
from pytest_niah.errors import CliError

OUT_HELP = "also write history.png, history.md and history.html here"

if TYPE_CHECKING:
    from pathlib import Path


def add_history(commands: Any) -> None:
    """Add the ``history`` command to the command parser's sub-parsers."""
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
        type=given_text,
        metavar="DIR",
        help=(
            "folder of saved runs (default: .niah/runs in the current folder or the nearest "
            "folder above that has one)"
        ),
    )
    history.add_argument(
        "--label",
        type=given_text,
        action="extend",
        nargs="+",
        metavar="LABEL",
        help="only these model labels (repeatable; default: every label)",
    )
    for flag, default in (("--arm", "onehop"), ("--scoring", "whole")):
        history.add_argument(
            flag, type=given_text, default=default, help=f"{flag[2:]} to show (default: {default})"
        )
    history.add_argument(
        "--metric",
        type=given_text,
        default="auc,ratio",
        metavar="METRICS",
        help="metrics, comma-separated: auc, ratio, norm, sep, effect (default: %(default)s)",
    )
    history.add_argument(
        "--machine",
        type=given_text,
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
    history.add_argument("--out", type=given_text, metavar="DIR", help=OUT_HELP)
    history.set_defaults(handler=run_history)


def run_history(args: argparse.Namespace) -> int:
    """Print (and with ``--out`` write) the history of the saved runs."""
    from pathlib import Path

    from pytest_niah.report.escape import one_line
    from pytest_niah.report.figures import MatplotlibMissingError
    from pytest_niah.report.history_plot import history_figure
    from pytest_niah.report.history_terminal import history_lines
    from pytest_niah.report.history_view import history_html, history_markdown
    from pytest_niah.results.history_series import DRIFT_MIN
    from pytest_niah.results.run_history import load_history, metric_names

    metrics = metric_names(args.metric)
    min_change = DRIFT_MIN if args.min_drift is None else args.min_drift
    if not min_change >= 0:
        raise CliError(f"--min-drift: {args.min_drift} is not a number >= 0")
    store = Path(args.storage) if args.storage else default_storage()
    if store.exists() and not store.is_dir():
        raise CliError(
            f"--storage: {store} is a file, not a folder of saved runs",
            "point --storage at the folder --niah-storage names (default .niah/runs)",
        )
    if not store.is_dir():
        raise CliError(
            f"no saved runs: the storage folder {store} does not exist",
            "save runs with pytest --niah-model=... --niah-save=NAME, or point --storage at "
            "the folder --niah-storage names",
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
        raise no_runs_error(store, labels, machine, args, bool(unreadable), read)
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
        for path in write_files(Path(args.out), texts):
            print(path)
    return EXIT_OK


def default_storage() -> Path:
    """``.niah/runs`` in the current folder or the nearest folder above that has one."""
    from pathlib import Path

    from pytest_niah.config.paths import store_dir

    here = Path.cwd()
    for folder in (here, *here.parents):
        if store_dir(folder).is_dir():
            return store_dir(folder)
    return store_dir(here)


def no_runs_error(
    store: Path,
    labels: Sequence[str],
    machine: str | None,
    args: argparse.Namespace,
    bad: bool,
    read: bool,
) -> CliError:
    """Why no saved run was shown, and what to choose instead."""
    from pytest_niah.results.storage import RunStore

    if bad and not read:
        return CliError(
            f"no readable saved run in {store} (every file was skipped, see the warnings)",
            "save runs again with pytest --niah-model=... --niah-save=NAME",
        )
    if not RunStore(store).files():
        return CliError(
            f"no saved runs in {store}",
            "save runs with pytest --niah-model=... --niah-save=NAME (or point --storage at "
            "the folder --niah-storage names)",
        )
    folders = sorted({f"{p.parent.parent.name}/{p.parent.name}" for p in RunStore(store).files()})
    wanted = ", ".join(
        [*(f"label {label!r}" for label in labels), *([f"machine {machine!r}"] if machine else [])]
    )
    what = f"of {wanted} " if wanted else ""
    return CliError(
        f"no saved run {what}with arm {args.arm!r} and scoring {args.scoring!r} in {store}",
        f"choose among the saved label/machine folders: {', '.join(folders)}",
    )
