"""The ``pytest-niah`` command: reports from saved results, without running any model.

Examples::

    pytest-niah report results.json --out niah-report
    pytest-niah report minilm.json jina.json --label MiniLM --label jina-v3
    pytest-niah summary results.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_niah.results.niah_results import NiahResults

PROG = "pytest-niah"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A problem to report in one line, with the exit code to return."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The exit code: 0 on success, 1 when writing failed, 2 on a usage error or a
        results file that cannot be read.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help and on usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        code: int = args.handler(args)
        return code
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with its ``report`` and ``summary`` commands."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Render reports of saved pytest-niah results (no model is run).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    report = commands.add_parser(
        "report",
        help="write an HTML report (a comparison when several files are given)",
        description="Write report.html, results JSON, cases.csv and summary.md into --out.",
    )
    _add_inputs(report)
    report.add_argument(
        "--out", default="niah-report", metavar="DIR", help="output folder (default: %(default)s)"
    )
    report.set_defaults(handler=_report)
    summary = commands.add_parser(
        "summary",
        help="print the markdown summary tables to stdout",
        description="Print the per-length markdown tables of saved results.",
    )
    _add_inputs(summary)
    summary.set_defaults(handler=_summary)
    options = commands.add_parser(
        "options",
        help="print every --niah-* option as a markdown table",
        description="Print the option table (option, ini key, environment variable, default).",
    )
    options.set_defaults(handler=_options)
    return parser


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", metavar="RESULTS.json", help="results file(s) (--niah-json)"
    )
    parser.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="display name per results file, in order (default: the model's name)",
    )


def _report(args: argparse.Namespace) -> int:
    from pytest_niah.report import write_report
    from pytest_niah.report.figures import MatplotlibMissingError

    results = _load_all(args.results)
    try:
        written = write_report(results, args.out, labels=args.label)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except MatplotlibMissingError as exc:
        raise CliError(str(exc), EXIT_FAILED) from None
    except OSError as exc:
        raise CliError(f"cannot write the report to {args.out}: {exc}", EXIT_FAILED) from None
    for path in written.values():
        print(path)
    return EXIT_OK


def _summary(args: argparse.Namespace) -> int:
    from pytest_niah.report import check_labels, summary_markdown

    results = _load_all(args.results)
    try:
        labels = check_labels(results, args.label)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    sys.stdout.write(summary_markdown(results, labels))
    return EXIT_OK


def _options(args: argparse.Namespace) -> int:
    from pytest_niah.config.options import markdown_table

    sys.stdout.write(markdown_table())
    return EXIT_OK


def _load_all(paths: Sequence[str]) -> list[NiahResults]:
    return [_load(path) for path in paths]


def _load(path: str) -> NiahResults:
    from pytest_niah.errors import ResultsError
    from pytest_niah.results.niah_results import NiahResults

    try:
        return NiahResults.load(path)
    except ResultsError as exc:
        raise CliError(str(exc)) from None
    except (AttributeError, TypeError, ValueError) as exc:
        # JSON of the wrong shape (e.g. a top-level list) gets past load's own checks.
        raise CliError(
            f"{path}: not a pytest-niah results file ({type(exc).__name__}: {exc})"
        ) from None


if __name__ == "__main__":
    sys.exit(main())
