"""``pytest-niah report`` and ``pytest-niah summary``: reports of saved results.

With ``--compare`` and ``--compare-fail`` the command gates as the plugin does: a change
whose verdict fails (regressed, or inconclusive past the allowance under
``--inconclusive=auto``) makes it exit 1, after the report or summary was written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_niah.cli.common import EXIT_FAILED, EXIT_OK, PROG
from pytest_niah.cli.shared_options import add_shared_option, given, given_text, shared_value
from pytest_niah.errors import CliError

if TYPE_CHECKING:
    from pytest_niah.report.comparison import ReportComparison
    from pytest_niah.results.niah_results import NiahResults

GATE_NOTE = "Here it fills the verdict column, and a failing verdict makes the command exit 1."


def add_report_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``report`` and ``summary`` commands to the command parser's sub-parsers."""
    report = commands.add_parser(
        "report",
        help="write an HTML report (a comparison when several files are given)",
        description=(
            "Write report.html, results JSON, cases.csv and summary.md (and comparison.json "
            "with --compare) into --out. With GITHUB_STEP_SUMMARY set, the summary is also "
            "appended there. Exit 1 when a --compare-fail gate fails."
        ),
    )
    add_inputs(report)
    report.add_argument(
        "--out",
        type=given_text,
        default="niah-report",
        metavar="DIR",
        help="output folder (default: %(default)s)",
    )
    report.add_argument(
        "--no-step-summary",
        action="store_true",
        help="do not append the summary to GITHUB_STEP_SUMMARY even when it is set",
    )
    report.set_defaults(handler=run_report)
    summary = commands.add_parser(
        "summary",
        help="print the markdown summary (comparison and per-length tables) to stdout",
        description=(
            "Print the markdown summary of saved results: a PR comment or step summary body "
            '(pytest-niah summary r.json --compare base.json >> "$GITHUB_STEP_SUMMARY"). '
            "Exit 1 when a --compare-fail gate fails."
        ),
    )
    add_inputs(summary)
    summary.set_defaults(handler=run_summary)


def add_inputs(parser: argparse.ArgumentParser) -> None:
    """The results files, their labels, their baselines and the comparison's options."""
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS.json",
        help="results file(s) (--niah-json) or saved run(s) (--niah-save)",
    )
    parser.add_argument(
        "--label",
        type=given_text,
        action="append",
        metavar="NAME",
        help="display name per results file, in order (default: the model's name)",
    )
    parser.add_argument(
        "--compare",
        type=given_text,
        action="append",
        metavar="BASELINE.json",
        help=(
            "compare with this baseline (results file or saved run), paired on identical "
            "cells; give one per results file, in order"
        ),
    )
    add_shared_option(parser, "compare-fail", note=GATE_NOTE)
    add_shared_option(parser, "compare-allow")
    add_shared_option(parser, "inconclusive")


def run_report(args: argparse.Namespace) -> int:
    """Write the report; exit 1 when a ``--compare-fail`` gate fails."""
    from pytest_niah.report import write_report
    from pytest_niah.report.figures import MatplotlibMissingError

    results = load_all(args.results)
    labels = checked_labels(results, args.label)
    comparisons = build_comparisons(args, results, labels)
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
    return gate_exit_code(comparisons, shared_value(args, "inconclusive"))


def run_summary(args: argparse.Namespace) -> int:
    """Print the summary; exit 1 when a ``--compare-fail`` gate fails."""
    from pytest_niah.report import summary_markdown

    results = load_all(args.results)
    labels = checked_labels(results, args.label)
    comparisons = build_comparisons(args, results, labels)
    sys.stdout.write(summary_markdown(results, labels, comparisons))
    sys.stdout.flush()
    return gate_exit_code(comparisons, shared_value(args, "inconclusive"))


def gate_exit_code(comparisons: Sequence[ReportComparison], policy: str) -> int:
    """1 when a gated change fails under ``policy`` (as its gate test would), else 0.

    Every length of the current run is gated, paired or not: one that no baseline cell
    pairs with fails (*no paired cells*). Each failing model gets one line on stderr with
    its verdict counts.
    """
    from pytest_niah.measure.gating import comparison_gates

    code = EXIT_OK
    for comparison in comparisons:
        slices = comparison_gates(comparison.comparison, comparison.allowances, policy)
        gates = [gate for length in slices for gate in length]
        failed = [gate.verdict for gate in gates if gate.outcome == "fail"]
        if failed:
            code = EXIT_FAILED
            states = ", ".join(
                f"{sum(v.state == s for v in failed)} {s}"
                for s in dict.fromkeys(v.state for v in failed)
            )
            print(
                f"{PROG}: {comparison.title}: {len(failed)} of {len(gates)} gated changes "
                f"fail --compare-fail ({states})",
                file=sys.stderr,
            )
    return code


def checked_labels(results: Sequence[NiahResults], given_labels: Sequence[str] | None) -> list[str]:
    """The labels to show; a count or repeat problem is a usage error."""
    from pytest_niah.report import check_labels

    try:
        return check_labels(results, given_labels)
    except ValueError as exc:
        raise CliError(f"--label: {exc}") from None


def build_comparisons(
    args: argparse.Namespace, results: Sequence[NiahResults], labels: Sequence[str]
) -> list[ReportComparison]:
    """Each results file against its --compare baseline (none without --compare)."""
    from pytest_niah.report.comparison import ReportComparison
    from pytest_niah.results.compare import compare_results

    baselines: list[str] = args.compare or []
    if not baselines:
        if given(args, "compare-fail") or given(args, "compare-allow"):
            raise CliError("--compare-fail and --compare-allow need --compare BASELINE.json")
        return []
    if len(baselines) != len(results):
        raise CliError(
            f"--compare: got {len(baselines)} baselines for {len(results)} results files",
            "give one --compare per results file, in order",
        )
    allowances = tuple(shared_value(args, "compare-fail"))
    allow = tuple(shared_value(args, "compare-allow"))
    out = []
    for label, current, source in zip(labels, results, baselines, strict=True):
        baseline = load(source)
        comparison = compare_results(
            current,
            baseline,
            n_resamples=current.config.bootstrap,  # 0: no interval, every gate inconclusive
            seed=current.config.seed,
            allow=allow,
            source=source,
            flags="--",  # a refusal names this command's --compare-allow
        )
        out.append(ReportComparison(label, source, comparison, allowances, baseline.speed))
    return out


def load_all(paths: Sequence[str]) -> list[NiahResults]:
    """Every results file or saved run, in order."""
    return [load(path) for path in paths]


def load(path: str) -> NiahResults:
    """A results file or a saved run; any problem is a one-line error naming the file."""
    from pathlib import Path

    from pytest_niah.errors import ResultsError
    from pytest_niah.results.run_reading import load_run

    file = Path(path)
    if not file.exists():
        raise CliError(
            f"{path}: no such file",
            "give the path of a results file (--niah-json) or a saved run (--niah-save)",
        )
    if file.is_dir():
        raise CliError(
            f"{path}: is a folder, not a results file",
            "give a results file inside it, e.g. its results.json",
        )
    try:
        return load_run(file)[1]
    except ResultsError as exc:
        raise CliError(str(exc)) from None
    except (AttributeError, TypeError, ValueError, LookupError, RecursionError) as exc:
        # A shape the validation did not foresee: still a problem of this file, not a crash.
        raise CliError(
            f"{path}: not a pytest-niah results file ({type(exc).__name__}: {exc})",
            "write the file again with --niah-json, --niah-save or NiahResults.save",
        ) from None
