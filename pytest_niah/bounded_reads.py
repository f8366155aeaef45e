"""Reading a file whole, but only a regular one no larger than a bound (and gzip within one).

A device (``/dev/zero``), pipe or socket never ends or blocks, and a huge file (or a
decompression bomb) would fill memory: each is refused before its bytes are read.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from pytest_niah.errors import NiahError

MiB = 1 << 20


class ReadRefused(NiahError, OSError):
    """A file not read at all: not a regular file, or larger than the most that is read.

    Raised by :func:`read_bounded`. ``problem`` does not name the file: the caller's message
    does, in its own way. An ``OSError`` too, so a caller's ``except OSError`` still holds.
    """


def read_bounded(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    A device (``/dev/zero``), pipe or socket never ends or blocks, and a huge file would
    fill memory: each is refused before a byte is read.

    Raises:
        ReadRefused: not a regular file, or over ``limit`` bytes (the message says which).
        IsADirectoryError: a folder.
        OSError: the file cannot be opened or read.
    """
    # Non-blocking: opening a pipe with no writer would otherwise wait for one forever.
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise ReadRefused(
                f"not a regular file (a device, pipe or socket), so it is not read as a {what}",
                f"give the path of a {what} file",
            )
        if os.fstat(descriptor).st_size > limit:
            raise too_large(limit, what)
        data = handle.read(limit + 1)  # it may have grown since
    if len(data) > limit:
        raise too_large(limit, what)
    return data


def too_large(limit: int, what: str) -> ReadRefused:
    """The refusal of a file (or its decompressed content) past ``limit`` bytes."""
    return ReadRefused(
        f"larger than {limit // MiB} MiB, the most read of a {what}, so it is not read",
        f"check that it is a {what} (not another file)",
    )


def gunzip_bounded(data: bytes, limit: int, what: str) -> bytes:
    """``data`` decompressed (gzip), refused past ``limit`` bytes (a decompression bomb)."""
    import gzip

    with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
        out = stream.read(limit + 1)
    if len(out) > limit:
        raise too_large(limit, what)
    return out
