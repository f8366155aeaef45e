"""Saved runs: results plus where and when they were measured, filed by model and machine.

A saved run lives at ``<store>/<model label>/<machine id>/<name>.json`` (the store is
``<rootdir>/.niah/runs`` by default) and holds the results with their provenance::

    {"run_schema_version": 2, "name": ..., "label": ..., "saved_at": ..., "machine": {...},
     "commit": {...}, "results": {...}}

Saving a name again replaces that run. Only the standard library is imported here, so the
plugin can resolve ``--niah-compare`` before any model work starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_niah.config import paths
from pytest_niah.errors import CompareError, ConfigError, NiahWarning, OutputError, ResultsError
from pytest_niah.files import write_atomic
from pytest_niah.results.niah_results import NiahResults, read_text
from pytest_niah.results.schema import RUN_SCHEMA_VERSION, RunDocument, validate

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
PREVIOUS = "previous"
_HASHED = re.compile(r"-[0-9a-f]{10}$")
_GIT_TIMEOUT_S = 10
_LISTED_RUNS = 20
_MAX_PLAIN = 100  # the longest label used as a folder name as it is (MAX_LABEL_LENGTH)
# A run name's file, "<name>.json", and its temporary file while written (about 32 bytes
# more) must fit the usual 255-byte limit of a file name.
_MAX_NAME_BYTES = 200


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
    return f"{label_folder(model_label)}/{_machine_id(machine)}"


def label_folder(label: str) -> str:
    """The store folder of a model label; also what any file named after a label is built from.

    The label itself when it is a plain, safe name of at most :data:`_MAX_PLAIN` characters,
    else a readable slug plus a hash of the label, so two labels never share a folder
    (``模型`` and ``型号``, ``.`` and ``..``), none leaves the store, and none is longer than
    71 characters: a file name built from it stays far below the file system's limit.
    """
    if _safe(label) == label and not _HASHED.search(label) and len(label) <= _MAX_PLAIN:
        return label
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{_safe(label)[:60]}-{digest}"


def save_run(
    results: NiahResults,
    name: str,
    *,
    store: Path,
    label: str,
    now: datetime | None = None,
    commit: Mapping[str, str | bool] | None = None,
    overwrite: bool = False,
) -> Path:
    """Save ``results`` as run ``name`` of model ``label``.

    Args:
        results: The results to save.
        name: The run's name, e.g. ``baseline``; a file name, not a path.
        store: The store folder (see :func:`default_store_dir`).
        label: The model label the plugin uses, e.g. ``packaged-minilm``.
        now: The save time; the current UTC time when ``None``.
        commit: The commit to record (``id``, ``branch``, ``dirty``); when ``None``, the
            checkout the store sits in (:func:`commit_info`).
        overwrite: Replace a run saved under this name before; otherwise that is an error.

    Returns:
        The written file, ``<store>/<run_key>/<name>.json``.

    Raises:
        ConfigError: ``name`` is empty or holds a path separator.
        OutputError: a run of this name exists and ``overwrite`` is off.
    """
    machine = machine_info()
    target = run_path(name, store=store, label=label)
    if target.exists() and not overwrite:
        raise OutputError(
            f"--niah-save: run {name!r} of model {label!r} exists already ({target})",
            "add --niah-save-overwrite to replace it, or save under another name",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "run_schema_version": RUN_SCHEMA_VERSION,
        "name": name,
        "label": label,
        "saved_at": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
        "machine": machine,
        # The store sits inside the project, so git finds the project's checkout from it.
        "commit": dict(commit) if commit is not None else commit_info(target.parent),
        "results": results.to_dict(),
    }
    write_atomic(target, json.dumps(payload, indent=1, sort_keys=True, allow_nan=False))
    return target


def run_path(name: str, *, store: Path, label: str) -> Path:
    """Where run ``name`` of model ``label`` is saved on this kind of machine.

    Raises:
        ConfigError: ``name`` is empty or holds a path separator.
    """
    check_name(name)
    return Path(store) / run_key(label, machine_info()) / f"{name}.json"


def resolve_run(ref: str, *, store: Path, label: str, before: datetime | None = None) -> Path:
    """The file a ``--niah-compare`` reference points at.

    Args:
        ref: A path to an existing results file (a saved run or a ``--niah-json`` file), or
            the name of a saved run.
        store: The store folder.
        label: The model label; a name is looked up among this model's runs.
        before: For ``previous``: only runs saved before this time (the session's start).

    Returns:
        ``ref`` itself when it is an existing file; for ``previous`` (unless a run is named
        so) the newest run of this model saved on this kind of machine; else the run
        ``ref`` saved on this kind of machine, else the most recently modified run ``ref``
        of this model on any machine.

    Raises:
        CompareError: nothing matches; the message lists the saved runs.
    """
    path = Path(ref)
    if path.is_file():
        return path
    store = Path(store)
    if ref == PREVIOUS and not (store / run_key(label, machine_info()) / f"{ref}.json").is_file():
        latest = latest_run(store, label, machine_id(), before=before)
        if latest is None:
            raise CompareError(
                f"--niah-compare=previous: no run of model {label!r} is saved on this kind of "
                f"machine ({machine_id()}) in {store}",
                "save one first with --niah-save=NAME (CI: save every run under a new name, "
                "e.g. the commit id, and restore the run store between jobs)",
            )
        return latest
    if ref and _is_name(ref):
        here = store / run_key(label, machine_info()) / f"{ref}.json"
        if here.is_file():
            return here
        model_dir = store / label_folder(label)
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

    Returns:
        The run's metadata (every key but ``results``; ``{}`` for a bare results file) and
        its results.

    Raises:
        ResultsError: the file cannot be read or is not a valid run or results file; the
            message names the file, the JSON path and the fix.
    """
    source = str(path)
    text = read_text(path, "saved run")
    if '"run_schema_version"' not in text:
        return {}, NiahResults.from_json(text, source=source)
    run = validate(RunDocument, text, source)
    if run.run_schema_version != RUN_SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: saved-run schema version {run.run_schema_version!r} is not "
            f"{RUN_SCHEMA_VERSION}",
            "save the run again with this pytest-niah version",
        )
    metadata = run.model_dump(mode="json", exclude={"results"})
    return metadata, NiahResults.from_document(run.results, source=source)


@dataclass(frozen=True)
class RunHeader:
    """Who saved a run, when and where, read without validating its results.

    Attributes:
        path: The run's file.
        name: The run's name (``--niah-save=NAME``).
        label: The model label it was saved for.
        saved_at: When it was saved, timezone-aware (a time without a zone is read as UTC).
        machine: The machine id of its folder, e.g. ``Linux-x86_64-cp311``.
    """

    path: Path
    name: str
    label: str
    saved_at: datetime
    machine: str


def machine_id(machine: Mapping[str, str] | None = None) -> str:
    """The id of a kind of machine, as its store folder is named (this machine's by default).

    E.g. ``Linux-x86_64-cp311``: system, architecture, Python implementation and version.
    """
    return _machine_id(machine_info() if machine is None else machine)


def parse_saved_at(text: str) -> datetime:
    """A run's ``saved_at`` as a timezone-aware time; a time without a zone is UTC.

    Raises:
        ValueError: ``text`` is not an ISO 8601 time.
    """
    stamp = text.strip()
    if stamp.endswith(("Z", "z")):
        stamp = stamp[:-1] + "+00:00"
    moment = datetime.fromisoformat(stamp)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def run_files(store: Path, *, labels: Sequence[str] = (), machine: str | None = None) -> list[Path]:
    """Every saved run's file in ``store``, sorted by path; nothing when the store is missing.

    Args:
        store: The store folder.
        labels: Only the folders of these model labels; every label when empty. A folder
            name can stand for several labels (``a:b`` and ``a-b``), so a caller that must
            be exact checks each run's own ``label``.
        machine: Only this machine id's folders (see :func:`machine_id`); every machine
            when ``None``.
    """
    root = Path(store)
    wanted = {label_folder(label) for label in labels}
    files: list[Path] = []
    # Iterate rather than glob: a label folder may hold glob characters such as "[".
    for model_dir in _subfolders(root):
        if wanted and model_dir.name not in wanted:
            continue
        for machine_dir in _subfolders(model_dir):
            if machine is not None and machine_dir.name != machine:
                continue
            try:
                entries = list(machine_dir.iterdir())
            except OSError:
                continue
            files.extend(p for p in entries if p.suffix == ".json" and not p.name.startswith("."))
    return sorted(files)


def run_header(path: Path) -> RunHeader:
    """The name, label, save time and machine of a saved run, without validating its results.

    Raises:
        ResultsError: the file cannot be read, is not JSON, or is not a saved run; the
            message names the file.
    """
    text = read_text(path, "saved run")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ResultsError(
            f"{path}: not a saved run (not valid JSON: {exc})", "save the run again"
        ) from None
    fields = data if isinstance(data, dict) else {}
    name, label, saved_at = (fields.get(key) for key in ("name", "label", "saved_at"))
    if (
        "run_schema_version" not in fields
        or not isinstance(name, str)
        or not isinstance(label, str)
        or not isinstance(saved_at, str)
    ):
        raise ResultsError(
            f"{path}: not a saved run (no run_schema_version, name, label and saved_at)",
            "save runs with --niah-save=NAME; a --niah-json results file does not belong "
            "in the run store",
        )
    try:
        moment = parse_saved_at(saved_at)
    except ValueError:
        raise ResultsError(
            f"{path}: saved_at {saved_at!r} is not an ISO 8601 time", "save the run again"
        ) from None
    return RunHeader(Path(path), name, label, moment, Path(path).parent.name)


def latest_run(
    store: Path,
    label: str,
    machine: str | None = None,
    *,
    before: datetime | None = None,
) -> Path | None:
    """The newest run saved for model ``label``: what ``--niah-compare=previous`` compares with.

    Runs are ordered by ``saved_at``, then (within its second) by when the file was
    written, then by name and path. A file that cannot be
    read is skipped with a :class:`~pytest_niah.errors.NiahWarning` naming it.

    Args:
        store: The store folder.
        label: The model label, as given to :func:`save_run`.
        machine: Only runs saved on this machine id (see :func:`machine_id`); runs of any
            machine when ``None``.
        before: Only runs saved before this time (a time without a zone is UTC). Runs keep
            whole seconds, so a run saved in the same second as ``before`` counts as not
            before it. Pass the time this session started, so that the run this session
            saves itself is never its own "previous".

    Returns:
        The newest matching run's file, or ``None`` when there is none.
    """
    limit = None if before is None else _aware(before).replace(microsecond=0)
    newest: tuple[datetime, int, str, str] | None = None
    found: Path | None = None
    for path in run_files(store, labels=[label], machine=machine):
        try:
            header = run_header(path)
        except ResultsError as exc:
            warnings.warn(NiahWarning(f"{exc} (skipped)"), stacklevel=2)
            continue
        if header.label != label or (limit is not None and header.saved_at >= limit):
            continue
        # Runs keep whole seconds: within one second the file written last is the newer.
        key = (header.saved_at, _mtime_ns(path), header.name, str(path))
        if newest is None or key > newest:
            newest, found = key, path
    return found


def _mtime_ns(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []


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
    """Refuse run names that are empty, leave the store folder (``a/b``, ``..``) or are too long."""
    if not name.strip() or not _is_name(name) or "\0" in name:
        raise ConfigError(
            f"--niah-save: run name {name!r} is not a plain file name",
            "give a name such as 'baseline' (not empty, no path separators)",
        )
    try:
        size = len(os.fsencode(name))
    except UnicodeError:  # a lone surrogate the file system encoding cannot hold
        raise ConfigError(
            f"--niah-save: run name {name!r} cannot be a file name here (its characters have "
            "no encoding on this file system)",
            "give a name such as 'baseline'",
        ) from None
    if size > _MAX_NAME_BYTES:
        raise ConfigError(
            f"--niah-save: run name {name[:40]!r}... is {size} bytes long, too long for a file "
            f"name (at most {_MAX_NAME_BYTES})",
            f"give a shorter name, e.g. {_safe(name)[:40]!r}",
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
