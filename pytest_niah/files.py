"""Writing files so that a kill, a full disk or a reader never sees half of one.

Every file pytest-niah writes goes through :func:`write_atomic`: a temporary file in the
same folder, flushed to disk, then renamed over the target, so the old content stays whole
until the new one is. Only regular files are replaced that way: a symbolic link the user
named is written through (its target replaced, the link kept), and a device or pipe
(``/dev/stdout``) is written in place, never replaced by a file. Inside a cache folder
(``inside``) nothing is written through a link: a linked file is replaced by the file, a
linked folder refused, since anyone who can write into a shared cache could plant one.
Temporary files a killed run left behind are removed the next time the same file is written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import tempfile
from pathlib import Path

from pytest_niah.errors import NiahError

TMP_MARK = ".niah-tmp-"  # in the name of every temporary file beside an output


class LinkRefused(NiahError, OSError):
    """A folder inside a cache is a symbolic link: writing below it would write elsewhere."""


def first_link(path: Path, root: Path) -> Path | None:
    """The first symbolic link among the parts of ``path`` below ``root``, ``path`` included.

    ``root`` itself may be a link (the user chose it); ``None`` when nothing below it is one,
    or ``path`` is not below ``root``.
    """
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            return current
    return None


def link_refused(link: Path, root: Path) -> LinkRefused:
    """The refusal of a symbolic link found at ``link`` inside the cache folder ``root``."""
    return LinkRefused(
        f"{link} is a symbolic link inside the cache folder {root}; pytest-niah never "
        "writes through one there (the run would change the file it points to)",
        "remove the link (the cache holds only work a run redoes), or point the cache at "
        "another folder (--niah-cache-dir)",
    )


def write_atomic(
    path: str | os.PathLike[str], data: str | bytes, *, inside: Path | None = None
) -> Path:
    """Write ``data`` to ``path`` whole or not at all; return the path written.

    Args:
        path: The file.
        data: Its new content.
        inside: A cache folder ``path`` lies in: no link below it is written through (a
            linked ``path`` is replaced by the file, a linked folder refused).

    Raises:
        LinkRefused: a folder between ``inside`` and ``path`` is a symbolic link.
        OSError: the folder cannot be created or written, or the disk is full; the old file
            (if any) is then unchanged and no temporary file remains.
    """
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if inside is not None:
        link = first_link(target.parent, inside)
        if link is not None:
            raise link_refused(link, inside)
    follow = inside is None and target.is_symlink()
    real = Path(os.path.realpath(target)) if follow else target
    if not real.is_symlink() and _is_special(real):
        with open(real, "wb") as stream:  # a device or pipe: stream into it
            stream.write(payload)
        return target
    real.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(real)
    descriptor, tmp = tempfile.mkstemp(dir=real.parent, prefix=temp_prefix(real))
    try:
        # mkstemp makes the file 0600: give it the mode a plain open() would (or keep the
        # replaced file's), so reports and saved runs stay readable to CI artifact steps.
        os.chmod(tmp, _mode_for(real))
        with os.fdopen(descriptor, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_folder(real.parent)
    return target


def create_whole(target: Path, data: bytes) -> bool:
    """Create ``target`` holding ``data``, whole or not at all; ``False`` when it exists.

    The data go to a temporary file first, which is then linked to ``target``: a link never
    replaces an existing file, so the check and the write are one step. Where the file
    system has no hard links, the check and a rename are as close as it allows.
    """
    tmp = target.with_name(temp_prefix(target) + secrets.token_hex(4))
    # 0o666 less the umask, as a plain open() gives: saved runs stay readable to CI steps.
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, target)
        except FileExistsError:
            return False
        except OSError:  # no hard links here (some network and FAT file systems)
            if target.exists():
                return False
            os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return True


def _mode_for(target: Path) -> int:
    """The permission bits of ``target`` if it exists, else those ``open()`` would give it."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system shows it (Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)  # elsewhere: set and restore at once
    os.umask(umask)
    return umask


def temp_prefix(path: Path) -> str:
    """The name prefix of this process's temporary files beside ``path``.

    :func:`remove_stale_temps` finds them by it once their process no longer runs.
    """
    return f".{path.name}{TMP_MARK}{os.getpid()}-"


def remove_stale_temps(path: Path) -> None:
    """Remove temporary files of ``path`` left by processes that no longer run."""
    prefix = f".{path.name}{TMP_MARK}"
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid_text = entry.name[len(prefix) :].split("-", 1)[0]
        if pid_text.isdigit() and _alive(int(pid_text)) and int(pid_text) != os.getpid():
            continue  # another live process is writing it right now
        remove_temp(entry)


def remove_temp(entry: Path) -> None:
    """Remove one temporary output: a file, or a folder a report was staged in; never raises."""
    with contextlib.suppress(OSError):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _is_special(path: Path) -> bool:
    """A device, pipe or socket: something to write into, never to replace."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except (OSError, OverflowError):  # no such process; a pid past a C long is none either
        return False
    return True


def fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); harmless where folders cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
