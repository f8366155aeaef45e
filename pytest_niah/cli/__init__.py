"""The ``pytest-niah`` command: reports from saved results, and the audit of a served model.

Examples::

    pytest-niah report results.json --out niah-report
    pytest-niah report minilm.json jina.json --label MiniLM --label jina-v3
    pytest-niah report results.json --compare .niah/runs/minilm/Linux-x86_64-cp311/base.json.gz
    pytest-niah summary results.json --compare baseline.json --compare-fail auc:0.02
    pytest-niah history --storage .niah/runs --out niah-history
    pytest-niah corpus --export books/
    pytest-niah audit openai+http://127.0.0.1:8000/v1#minilm --tokenizer packaged-minilm
    pytest-niah options
    pytest-niah --version

Every ``RESULTS.json`` may be a results file (``--niah-json``, a report's ``results.json``)
or a saved run (``--niah-save``). Options shared with the plugin (``--compare-fail``,
``--compare-allow``, ``--inconclusive``) come from its option table. Exit codes: 0 done;
1 a ``--compare-fail`` gate failed, an output could not be written (or matplotlib is
missing); 2 interrupted; 4 a usage error or an input file that cannot be read or
compared: pytest's codes, as the plugin's (docs/errors.md). An error is one line on
stderr, ``pytest-niah: error: ...``, naming the file and the fix; never a traceback.

The commands live in :mod:`~pytest_niah.cli.reports` (report, summary),
:mod:`~pytest_niah.cli.history`, :mod:`~pytest_niah.cli.corpus_command` and
:mod:`~pytest_niah.cli.audit_command` (its own exit codes: 1 when ``--expect`` finds the
deployment changed); what they share in
:mod:`~pytest_niah.cli.common` and :mod:`~pytest_niah.cli.shared_options`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pytest_niah.cli.common import (
    ARGPARSE_USAGE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    print_error,
)
from pytest_niah.errors import CliError, NiahError

__all__ = ["build_parser", "main", "version"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Args:
        argv: The arguments after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The exit code, pytest's for the same outcome: 0 on success, 1 when a gate failed or
        writing failed, 2 when interrupted, 4 on a usage error or a results file that cannot
        be read or compared.
    """
    from pytest_niah.errors import OutputError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help, --version and usage errors
        exited = exc.code if isinstance(exc.code, int) else EXIT_USAGE
        return EXIT_USAGE if exited == ARGPARSE_USAGE else exited
    try:
        code: int = args.handler(args)
        return code
    except CliError as exc:
        return print_error(str(exc), exc.code)
    except OutputError as exc:
        return print_error(str(exc), EXIT_FAILED)
    except NiahError as exc:
        return print_error(str(exc), EXIT_USAGE)
    except BrokenPipeError:
        # The reader went away (``pytest-niah summary x | head``): not an error of ours.
        silence_stdout()
        return EXIT_FAILED
    except KeyboardInterrupt:
        return print_error("interrupted", EXIT_INTERRUPTED)


def build_parser() -> argparse.ArgumentParser:
    """The parser: ``report``, ``summary``, ``history``, ``corpus``, ``audit``, ``options``."""
    from pytest_niah.cli.audit_command import add_audit
    from pytest_niah.cli.corpus_command import add_corpus
    from pytest_niah.cli.history import add_history
    from pytest_niah.cli.reports import add_report_commands

    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Render reports of saved pytest-niah results (no model is run), or audit a served "
            "embedding model (audit)."
        ),
        epilog=(
            "Exit codes (pytest's): 0 done, 1 a --compare-fail gate failed or an output could "
            "not be written, 2 interrupted, 4 a usage error or an input file that cannot be "
            "read or compared."
        ),
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_report_commands(commands)
    add_history(commands)
    add_corpus(commands)
    add_audit(commands)
    options = commands.add_parser(
        "options",
        help="print every --niah-* option as a markdown table",
        description="Print the option table (option, ini key, environment variable, default).",
    )
    options.set_defaults(handler=print_options)
    return parser


def version() -> str:
    """The installed pytest-niah version (the package's own when not installed)."""
    from importlib import metadata

    try:
        return metadata.version("pytest-niah")
    except metadata.PackageNotFoundError:
        from pytest_niah import __version__

        return __version__


def print_options(args: argparse.Namespace) -> int:
    """``pytest-niah options``: the option table as markdown."""
    from pytest_niah.config.option_docs import markdown_table

    sys.stdout.write(markdown_table())
    sys.stdout.flush()
    return EXIT_OK


def silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
