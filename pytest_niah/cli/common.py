"""What every ``pytest-niah`` command shares: its name, exit codes, error line and file writes."""

from __future__ import annotations

import sys
from pathlib import Path

PROG = "pytest-niah"
# pytest's own exit codes, so that the command and the plugin agree (docs/errors.md).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 2
EXIT_USAGE = 4  # a usage error, or an input refused: pytest's USAGE_ERROR
ARGPARSE_USAGE = 2  # what argparse exits with on a usage error: returned as EXIT_USAGE


def print_error(message: str, code: int) -> int:
    """Print ``pytest-niah: error: MESSAGE`` as one line on stderr; return ``code``."""
    from pytest_niah.report.escape import one_line

    # One line, whatever a path or label in the message holds.
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return code


def write_files(target: Path, files: dict[str, str | bytes]) -> list[Path]:
    """Write each file into ``target`` atomically; a failure is an :class:`OutputError`."""
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
