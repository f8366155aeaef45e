"""Argument checks the benchmark scripts share: a bad value is a usage error, before any work.

Each check ends the script through ``parser.error`` (exit 2, one line naming the option):
no traceback, and no minutes of measuring before an output path turns out unwritable. The
rules, each written once here: an output is a regular file that can be written (never a
device such as ``/dev/full``), an input a regular file of bounded size (never ``/dev/zero``),
a folder is made absolute before any work (a script may change its working folder), and a
count is not negative.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

INPUT_LIMIT = 256 << 20  # the most read of an input file: bench JSON and docs pages are far less


def check_output(parser: argparse.ArgumentParser, option: str, path: Path | None) -> None:
    """``path`` can be written: a regular file (or none yet) in a folder that takes a new file.

    A device (``/dev/full``, ``/dev/null``) is refused: a script would measure for minutes
    before its write fails, or write nothing anyone can read.
    """
    if path is None:
        return
    from pytest_niah.output_paths import output_problem

    problem = output_problem(path)
    if not problem and path.exists() and not path.is_file():
        problem = "is not a regular file (a device or pipe); give a file path"
    if not problem:
        problem = _probe(path)
    if problem:
        parser.error(f"{option} {path}: {problem}")


def check_input(
    parser: argparse.ArgumentParser, option: str, path: Path, what: str = "file"
) -> bytes:
    """The bytes of the input ``path``: an existing regular file of bounded size."""
    from pytest_niah.bounded_reads import ReadRefused, read_bounded

    try:
        return read_bounded(path, INPUT_LIMIT, what)
    except ReadRefused as exc:  # a device or pipe, or too large
        problem = exc.problem
    except FileNotFoundError:
        problem = "does not exist"
    except IsADirectoryError:
        problem = "is a folder, not a file"
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror or exc})"
    parser.error(f"{option} {path}: {problem}")


def check_folder(parser: argparse.ArgumentParser, option: str, path: Path | None) -> Path | None:
    """``path`` made absolute: a folder (or none yet) that can be written into.

    Absolute before any work: a relative folder would otherwise be read against whatever
    folder a later step runs in.
    """
    if path is None:
        return None
    from pytest_niah.output_paths import output_problem

    folder = Path(os.path.abspath(path.expanduser()))
    problem = output_problem(folder, folder=True)
    if problem:
        parser.error(f"{option} {path}: {problem}")
    return folder


def _probe(path: Path) -> str:
    """Try the write itself (permissions lie for root, and in /proc or a read-only mount)."""
    try:
        if path.exists():
            with path.open("ab"):  # appends nothing: the file is left as it is
                return ""
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if folder == path.parent:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".bench-probe-"):
                return ""
        os.rmdir(tempfile.mkdtemp(dir=folder, prefix=".bench-probe-"))  # folders can be made
        return ""
    except OSError as exc:
        return f"cannot be written ({exc.strerror or exc})"


def check_config(parser: argparse.ArgumentParser, **values: Any) -> Any:
    """The grid as a ``NiahConfig`` (``None`` values left to its defaults), or a usage error."""
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.errors import NiahError

    try:
        return NiahConfig(**{key: value for key, value in values.items() if value is not None})
    except NiahError as exc:
        field, sep, rest = str(exc).partition(": ")
        parser.error(f"--{field.replace('_', '-')}: {rest}" if sep else str(exc))


def check_groups(parser: argparse.ArgumentParser, groups: str | None) -> None:
    """``--groups`` names groups or categories of the built-in needle set."""
    if not groups:
        return
    from pytest_niah.errors import NiahError
    from pytest_niah.inputs.needles import builtin_needle_set

    try:
        builtin_needle_set().select([g for g in groups.split(",") if g.strip()])
    except NiahError as exc:
        parser.error(f"--groups: {exc}")


def check_at_least(
    parser: argparse.ArgumentParser, option: str, value: float | None, low: float
) -> None:
    """A count (or a number of seconds) is at least ``low``: never negative, never NaN."""
    if value is not None and not value >= low:
        parser.error(f"{option}: {value:g} is too small (give at least {low:g})")
