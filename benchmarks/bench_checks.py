"""Argument checks the benchmark scripts share: a bad value is a usage error, before any work.

Each check ends the script through ``parser.error`` (exit 2, one line naming the option):
no traceback, and no minutes of measuring before an output path turns out unwritable.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any


def check_output(parser: argparse.ArgumentParser, option: str, path: Path | None) -> None:
    """``path`` can be written: its folder exists (or can be made) and takes a new file."""
    if path is None:
        return
    from pytest_niah.files import output_problem

    problem = output_problem(path)
    if not problem:
        problem = _probe(path)
    if problem:
        parser.error(f"{option} {path}: {problem}")


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
    parser: argparse.ArgumentParser, option: str, value: int | None, low: int
) -> None:
    """A whole-number option is at least ``low``."""
    if value is not None and value < low:
        parser.error(f"{option}: {value} is too small (give at least {low})")
