"""Temporary files that killed writes left in a folder: found and removed by the next write.

Every temporary file beside an output is named ``.<file>.niah-tmp-<pid>-<random>``
(:func:`pytest_niah.files.temp_prefix`). :func:`~pytest_niah.files.write_atomic` removes
those of the file it writes; a folder of many outputs (the run store's machine folders, the
snapshot folder) needs every file's removed, also of files nobody writes again. A report is
staged in a temporary folder of the same name (:mod:`pytest_niah.report.report_folder`):
those are removed whole.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from pytest_niah.files import TMP_MARK, remove_stale_temps, remove_temp

STALE_AFTER_S = 3600.0
"""A temporary file older than this is stale whoever wrote it (its process id was reused)."""


def is_temp_file(path: Path) -> bool:
    """Whether ``path`` is a temporary file beside an output, never an output itself."""
    return path.name.startswith(".") and TMP_MARK in path.name


def remove_stale_temps_in(folder: Path, *, now: float | None = None) -> list[Path]:
    """Remove the temporary files in ``folder`` that no running write owns; return them.

    A file is stale when the process that named it no longer runs, or when it is older than
    :data:`STALE_AFTER_S`. This process's own are left alone (another thread may be writing
    one). Never raises: a file that cannot be removed stays.
    """
    try:
        entries = [p for p in Path(folder).iterdir() if is_temp_file(p)]
    except OSError:
        return []
    cutoff = (time.time() if now is None else now) - STALE_AFTER_S
    mine = f"{TMP_MARK}{os.getpid()}-"
    for entry in entries:
        if mine in entry.name:
            continue
        target = entry.name[1 : entry.name.index(TMP_MARK)]
        remove_stale_temps(entry.parent / target)  # those of writers that no longer run
        with contextlib.suppress(OSError):
            if entry.lstat().st_mtime < cutoff:
                remove_temp(entry)  # a file, or a report's staging folder
    return [entry for entry in entries if not entry.exists()]
