"""The report folder, written as a unit: after a kill it holds one run's report, never a mix.

Every file of a report is written into a new hidden folder beside the target, named like
every temporary output (``.<folder>.niah-tmp-<pid>-<random>``), which then takes the
target's place in one step: on Linux the two folders are exchanged (``renameat2`` with
``RENAME_EXCHANGE``), elsewhere (or where the file system cannot exchange) the old folder
is renamed aside (``.<folder>.niah-tmp-<pid>-old-<random>``) and the new one renamed in.
So whatever is at the target's name is one complete report: its presence is the marker.
A kill between the two renames of the fallback leaves the previous report in the ``-old-``
folder; the next write puts it back before anything else. Hidden folders of writers that no
longer run are removed by the next write, by the rule of every temporary output
(:func:`pytest_niah.results.stale_temps.remove_stale_temps_in`).

The previous folder is dropped whole, so a folder that holds anything but report files (a
file of the user's, a subfolder, a link) is refused, never emptied: nothing a user made is
lost. A folder that holds only report files is a previous report, whichever version of
pytest-niah wrote it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from pytest_niah.errors import OutputError
from pytest_niah.files import TMP_MARK, fsync_folder, temp_prefix
from pytest_niah.results.stale_temps import is_temp_file, remove_stale_temps_in

__all__ = ["foreign_entries", "is_report_file", "replaced_folder", "report_folder_problem"]

OLD_MARK = "old-"  # after the pid in the name of a previous report renamed aside
# Every name write_report gives a file (results.<label>.json: see naming.results_file_names).
_REPORT_FILE = re.compile(
    r"report\.html|cases\.csv|summary\.md|comparison\.json|results(\.[A-Za-z0-9._-]+)?\.json"
)
_WHERE = "(--niah-report, or --out for pytest-niah report)"
_SHOWN = 3
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# What renameat2 answers where it, or the exchange, is not supported: rename instead.
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV}


def is_report_file(name: str) -> bool:
    """Whether ``name`` is the name of a file :func:`pytest_niah.report.write_report` writes."""
    return _REPORT_FILE.fullmatch(name) is not None


def foreign_entries(folder: Path) -> list[str]:
    """The entries of ``folder`` that are not report files (folders end in ``/``), sorted.

    Temporary files of killed writes of single files (how older versions wrote a report)
    are not foreign. A missing folder has none.
    """
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    foreign = []
    for entry in entries:
        if is_temp_file(entry):
            continue
        if entry.is_symlink() or not entry.is_file():
            foreign.append(entry.name + ("/" if entry.is_dir() else ""))
        elif not is_report_file(entry.name):
            foreign.append(entry.name)
    return sorted(foreign)


def report_folder_problem(path: str | os.PathLike[str]) -> str:
    """Why the report cannot replace the folder ``path``, or ``""`` when it can.

    Checked by the writer; a caller may check it before a run, so a refusal costs no
    embedding.
    """
    return _refusal(_real(Path(path)))[0]


def _refusal(real: Path) -> tuple[str, str]:
    """What keeps the report from replacing ``real``, and the fix; ``("", "")`` for nothing."""
    new_folder = f"choose a new or empty folder {_WHERE}"
    if not real.name:
        return "is the root folder, which a report cannot replace", new_folder
    if not real.exists():
        return "", ""
    if not real.is_dir():
        return "is not a folder", new_folder
    if _is_current_folder(real):
        return "is the current folder, which a report cannot replace", new_folder
    try:
        foreign = foreign_entries(real)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})", f"choose a folder you can read {_WHERE}"
    if not foreign:
        return "", ""
    shown = ", ".join(foreign[:_SHOWN])
    more = f" and {len(foreign) - _SHOWN} more" if len(foreign) > _SHOWN else ""
    return (
        f"holds files that are not a pytest-niah report ({shown}{more}); the report replaces "
        "its folder whole, so it would drop them",
        f"move those files out, or {new_folder}",
    )


@contextlib.contextmanager
def replaced_folder(target: Path) -> Iterator[Path]:
    """Yield a new empty folder for the report's files; on success it replaces ``target``.

    ``target`` (created with its parents when missing; a link to a folder is written
    through) keeps the previous report until the new one is complete. An exception in the
    block removes the new folder and leaves ``target`` as it was.

    Raises:
        OutputError: ``target`` is not a folder, holds files that are not a report, or
            cannot be created or replaced; the message names it and the fix.
    """
    real = _real(target)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        _put_back_previous(real)
    except OSError as exc:
        raise OutputError(
            f"cannot create the report folder {target}: {exc.strerror or exc}",
            f"choose a folder you can write {_WHERE}",
        ) from None
    problem, hint = _refusal(real)
    if problem:
        raise OutputError(f"the report folder {target} {problem}", hint)
    remove_stale_temps_in(real.parent)  # folders of killed writes (theirs, not the target)
    staging = _new_folder(real, target)
    try:
        yield staging
        try:
            fsync_folder(staging)
            _swap_in(staging, real)
        except OSError as exc:
            raise OutputError(
                f"cannot replace the report folder {target}: {exc.strerror or exc}",
                f"choose a folder you can write {_WHERE}; the previous report was kept",
            ) from None
    finally:
        if staging.exists():  # a failed write, or the previous report after the exchange
            shutil.rmtree(staging, ignore_errors=True)
    fsync_folder(real.parent)


def _real(target: Path) -> Path:
    """The folder to replace: absolute, through a link (the link itself is kept)."""
    if target.is_symlink():
        return Path(os.path.realpath(target))
    return Path(os.path.abspath(target))


def _is_current_folder(real: Path) -> bool:
    """Replacing the working folder would leave this process in a deleted one."""
    try:
        return os.path.realpath(real) == os.path.realpath(os.getcwd())
    except OSError:
        return False


def _put_back_previous(real: Path) -> None:
    """A kill between the fallback's two renames left no folder: restore the previous one."""
    if real.exists() or real.is_symlink():
        return
    prefix = f".{real.name}{TMP_MARK}"
    previous = [
        entry
        for entry in real.parent.iterdir()
        if entry.name.startswith(prefix)
        and f"-{OLD_MARK}" in entry.name[len(prefix) :]
        and entry.is_dir()
    ]
    if previous:
        os.rename(max(previous, key=lambda p: p.stat().st_mtime_ns), real)


def _new_folder(real: Path, target: Path) -> Path:
    """An empty hidden folder beside ``real``, with the mode of the folder it will replace."""
    try:
        mode = stat.S_IMODE(real.stat().st_mode)
    except OSError:
        mode = None
    while True:
        staging = real.with_name(temp_prefix(real) + secrets.token_hex(4))
        try:
            os.mkdir(staging, 0o777)  # less the umask, as a plain mkdir gives
        except FileExistsError:
            continue
        except OSError as exc:
            raise OutputError(
                f"cannot write the report folder {target}: cannot create a folder in "
                f"{real.parent} ({exc.strerror or exc})",
                f"choose a folder in a folder you can write {_WHERE}",
            ) from None
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(staging, mode)
        return staging


def _swap_in(staging: Path, real: Path) -> None:
    """Put ``staging`` at ``real``'s name; the previous folder ends at ``staging``'s or goes."""
    if not real.exists():
        os.rename(staging, real)
        return
    if _exchange(staging, real):
        return
    old = real.with_name(temp_prefix(real) + OLD_MARK + secrets.token_hex(4))
    os.rename(real, old)
    try:
        os.rename(staging, real)  # a kill before this line: the next write puts ``old`` back
    except OSError:
        os.rename(old, real)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two folders in one step (Linux); ``False`` where the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without it (musl)
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    result = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(second))
