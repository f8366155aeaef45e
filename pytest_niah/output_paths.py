"""Why a path cannot be written, found before a run so that a bad path costs no embedding."""

from __future__ import annotations

import os
from pathlib import Path

_NAME_MAX = 255
_PATH_MAX = 4096


def output_problem(path: str | os.PathLike[str], *, folder: bool = False) -> str:
    """Why ``path`` cannot be written, or ``""`` when it can.

    ``path`` is a file, or with ``folder`` a folder to write into. Checked before a run, so
    a bad path costs no embedding.
    """
    target = Path(path)
    if "\0" in str(target):
        return "is not a usable path (it holds a NUL byte)"
    try:
        too_long = [p for p in target.parts if len(os.fsencode(p)) > _NAME_MAX]
        if too_long:
            return f"the name {too_long[0][:40]}... is longer than {_NAME_MAX} bytes"
        if len(os.fsencode(str(target.absolute()))) > _PATH_MAX:
            return f"the path is longer than {_PATH_MAX} bytes"
        if target.exists():
            if folder and not target.is_dir():
                return "is not a folder"
            if not folder and target.is_dir():
                return "is a folder, not a file"
            if not os.access(target, os.W_OK):
                return "is not writable"
            return ""
        parent = target.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            return f"cannot be created: {parent} is not a folder"
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot be created: no write access to {parent}"
    except (OSError, ValueError) as exc:  # e.g. a NUL byte in the name
        return f"is not a usable path ({exc})"
    return ""
