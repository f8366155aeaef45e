"""Saved runs: results plus where and when they were measured, filed by model and machine.

A saved run lives at ``<store>/<model label>/<machine id>/<name>.json`` (the store is
``<rootdir>/.niah/runs`` by default) and holds the results with their provenance::

    {"run_schema_version": 1, "name": ..., "label": ..., "saved_at": ..., "machine": {...},
     "commit": {...}, "results": {...}}

Saving a name again replaces that run. Only the standard library is imported here, so the
plugin can resolve ``--niah-compare`` before any model work starts.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_niah.config import paths
from pytest_niah.errors import CompareError, ConfigError, ResultsError
from pytest_niah.results.niah_results import NiahResults

RUN_SCHEMA_VERSION = 1
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_GIT_TIMEOUT_S = 10
_LISTED_RUNS = 20


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


default_store_dir = paths.store_dir


def run_key(model_label: str, machine: Mapping[str, str]) -> str:
    """The store folder of one model on one kind of machine.

    E.g. ``packaged-minilm/Linux-x86_64-cp311``: the model label made safe for a folder name,
    then the machine id: system, architecture, Python implementation and version, but not
    the host name, so runs of one setup on different hosts share a folder.
    """
    return f"{_safe(model_label)}/{_machine_id(machine)}"


def save_run(
    results: NiahResults,
    name: str,
    *,
    store: Path,
    label: str,
    now: datetime | None = None,
) -> Path:
    """Save ``results`` as run ``name`` of model ``label``, replacing a run of that name.

    Args:
        results: The results to save.
        name: The run's name, e.g. ``baseline``; a file name, not a path.
        store: The store folder (see :func:`default_store_dir`).
        label: The model label the plugin uses, e.g. ``packaged-minilm``.
        now: The save time; the current UTC time when ``None``.

    Returns:
        The written file, ``<store>/<run_key>/<name>.json``.

    Raises:
        ValueError: If ``name`` is empty or holds a path separator.
    """
    check_name(name)
    machine = machine_info()
    target = Path(store) / run_key(label, machine) / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "run_schema_version": RUN_SCHEMA_VERSION,
        "name": name,
        "label": label,
        "saved_at": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "machine": machine,
        # The store sits inside the project, so git finds the project's checkout from it.
        "commit": commit_info(target.parent),
        "results": results.to_dict(),
    }
    _write_atomic(target, json.dumps(payload, indent=1, sort_keys=True, allow_nan=False))
    return target


def resolve_run(ref: str, *, store: Path, label: str) -> Path:
    """The file a ``--niah-compare`` reference points at.

    Args:
        ref: A path to an existing results file (a saved run or a ``--niah-json`` file), or
            the name of a saved run.
        store: The store folder.
        label: The model label; a name is looked up among this model's runs.

    Returns:
        ``ref`` itself when it is an existing file; else the run ``ref`` saved on this kind of
        machine, else the most recently modified run ``ref`` of this model on any machine.

    Raises:
        FileNotFoundError: If nothing matches; the message lists the saved runs.
    """
    path = Path(ref)
    if path.is_file():
        return path
    store = Path(store)
    if ref and _is_name(ref):
        here = store / run_key(label, machine_info()) / f"{ref}.json"
        if here.is_file():
            return here
        model_dir = store / _safe(label)
        # Iterate rather than glob: a name may hold glob characters such as "[".
        machines = sorted(model_dir.iterdir()) if model_dir.is_dir() else []
        anywhere = [m / f"{ref}.json" for m in machines if (m / f"{ref}.json").is_file()]
        if anywhere:
            return max(anywhere, key=lambda p: p.stat().st_mtime)
    raise CompareError(
        f"--niah-compare: {ref!r} is neither a results file nor a run saved for model "
        f"{label!r} in {store}",
        _available(store),
    )


def load_run(path: Path) -> tuple[dict[str, Any], NiahResults]:
    """Read a saved run, or a bare results file written by ``--niah-json``.

    Args:
        path: The file.

    Returns:
        The run's metadata (every key but ``results``; ``{}`` for a bare results file) and
        its results.

    Raises:
        ResultsError: If the file cannot be read or is not a run or results file; the
            message names the file.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"{source}: cannot read the saved run ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            f"{source}: not valid JSON ({exc.msg}, line {exc.lineno}); the file is damaged, "
            "save the run again"
        ) from None
    if not isinstance(data, dict):
        raise ResultsError(f"{source}: not a pytest-niah run or results file (not an object)")
    if "run_schema_version" not in data:
        return {}, NiahResults.from_dict(data, source=source)
    return _split_run(data, source)


def _split_run(data: dict[str, Any], source: str) -> tuple[dict[str, Any], NiahResults]:
    version = data["run_schema_version"]
    if version != RUN_SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: saved-run schema version {version!r} is not {RUN_SCHEMA_VERSION}; "
            "save the run again with this pytest-niah version"
        )
    results = data.get("results")
    if not isinstance(results, dict):
        raise ResultsError(f"{source}: a saved run without results; save the run again")
    metadata = {key: value for key, value in data.items() if key != "results"}
    return metadata, NiahResults.from_dict(results, source=source)


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


def _machine_id(machine: Mapping[str, str]) -> str:
    impl = machine.get("python_implementation", "")
    tag = {"CPython": "cp", "PyPy": "pp"}.get(impl, impl.lower()[:2] or "py")
    version = "".join(machine.get("python_version", "").split(".")[:2])
    parts = [machine.get("system") or "unknown", machine.get("machine") or "unknown", tag + version]
    return _safe("-".join(parts))


def _safe(text: str) -> str:
    """A single, portable folder name from any text."""
    return _UNSAFE.sub("-", text).strip("-.") or "unnamed"


def _is_name(text: str) -> bool:
    separators = {"/", "\\", os.sep, *([os.altsep] if os.altsep else [])}
    return not any(sep in text for sep in separators) and text not in (".", "..")


def check_name(name: str) -> None:
    """Refuse run names that are empty or would leave the store folder (``a/b``, ``..``)."""
    if not name.strip() or not _is_name(name) or "\0" in name:
        raise ConfigError(
            f"--niah-save: run name {name!r} is not a plain file name",
            "give a name such as 'baseline' (not empty, no path separators)",
        )


def _available(store: Path) -> str:
    runs = sorted(str(p.relative_to(store).with_suffix("")) for p in store.glob("*/*/*.json"))
    if not runs:
        return "no runs are saved there yet: save one with --niah-save=NAME"
    listed = ", ".join(runs[:_LISTED_RUNS])
    more = f" and {len(runs) - _LISTED_RUNS} more" if len(runs) > _LISTED_RUNS else ""
    return (
        f"give the name of a run of this model, or the path of any run's file; saved runs "
        f"(model/machine/name): {listed}{more}"
    )


def _write_atomic(target: Path, text: str) -> None:
    """Write via a temporary file and a rename, so a reader never sees half a file."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
