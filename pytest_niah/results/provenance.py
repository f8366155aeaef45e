"""Where a run was measured: the kind of machine and the git commit a saved run records.

No network; nothing here raises.
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path

from pytest_niah.naming import file_slug

_GIT_TIMEOUT_S = 10


def machine_info() -> dict[str, str]:
    """This machine and interpreter, as strings (no network)."""
    return {
        "node": platform.node(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python_implementation": platform.python_implementation(),
        "python_version": platform.python_version(),
        "cpu_count": str(os.cpu_count() or 0),
    }


def machine_id(machine: Mapping[str, str] | None = None) -> str:
    """The id of a kind of machine, as its store folder is named (this machine's by default).

    E.g. ``Linux-x86_64-cp311``: system, architecture, Python implementation and version,
    but not the host name, so runs of one setup on different hosts share a folder.
    """
    info = machine_info() if machine is None else machine
    impl = info.get("python_implementation", "")
    tag = {"CPython": "cp", "PyPy": "pp"}.get(impl, impl.lower()[:2] or "py")
    version = "".join(info.get("python_version", "").split(".")[:2])
    parts = [info.get("system") or "unknown", info.get("machine") or "unknown", tag + version]
    return file_slug("-".join(parts))


def commit_info(cwd: Path | None = None) -> dict[str, str | bool]:
    """The git commit checked out at ``cwd``: ``id``, ``branch`` and ``dirty``.

    Args:
        cwd: A folder inside the checkout; the current folder when ``None``.

    Returns:
        The commit's details, or ``{}`` when ``cwd`` is not in a git checkout with a commit,
        or git is missing or fails. Never raises.
    """
    sha = _git(["rev-parse", "HEAD"], cwd)
    if not sha:
        return {}
    branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], cwd)
    # Untracked files (saved runs themselves, reports) do not make a checkout dirty.
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return {
        "id": sha,
        # git prints "HEAD" for a detached head.
        "branch": "(detached head)" if branch in (None, "HEAD") else branch,
        "dirty": bool(status),
    }


def _git(args: list[str], cwd: Path | None) -> str | None:
    """Stripped stdout of a git command, or ``None`` when it cannot run or fails."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
            # Never wait on a credential or pager prompt.
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"},
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
