"""The run store's layout: each model's folder per kind of machine, and its runs' files.

A saved run lives at ``<store>/<model label>/<machine id>/<name>.json.gz``: the label's file
name (:func:`~pytest_niah.naming.label_file_name`), then the machine id
(:func:`~pytest_niah.results.provenance.machine_id`). This module names those folders and
finds the saved runs' files in them; :class:`~pytest_niah.results.storage.RunStore` reads
and writes the runs through it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_niah.naming import label_file_name
from pytest_niah.results.provenance import machine_id
from pytest_niah.results.run_file import run_file_names, run_name_of
from pytest_niah.results.stale_temps import is_temp_file


def run_key(model_label: str, machine: Mapping[str, str]) -> str:
    """The store folder of one model on one kind of machine, relative to the store.

    E.g. ``packaged-minilm/Linux-x86_64-cp311``: the label's file name, then the machine id.
    """
    return f"{label_file_name(model_label)}/{machine_id(machine)}"


def saved_in(folder: Path, name: str) -> Path | None:
    """The file of run ``name`` in ``folder``: ``<name>.json.gz``, else a plain ``<name>.json``."""
    for path in map(folder.joinpath, run_file_names(name)):
        with contextlib.suppress(OSError):  # a path the file system cannot hold: no run
            if path.is_file():
                return path
    return None


def store_files(root: Path, labels: Sequence[str] = (), machine: str | None = None) -> list[Path]:
    """Every saved run's file under ``root``, sorted by path; nothing when it is missing.

    Args:
        root: The store folder.
        labels: Only the folders of these model labels; every label when empty.
        machine: Only this machine id's folders; every machine when ``None``.
    """
    wanted = {label_file_name(label) for label in labels}
    found: list[Path] = []
    # Iterate rather than glob: a label folder may hold glob characters such as "[".
    for model_dir in _subfolders(Path(root)):
        if wanted and model_dir.name not in wanted:
            continue
        for machine_dir in _subfolders(model_dir):
            if machine is None or machine_dir.name == machine:
                found.extend(_run_files_in(machine_dir))
    return sorted(found)


def _run_files_in(folder: Path) -> list[Path]:
    try:
        entries = list(folder.iterdir())
    except OSError:
        return []
    return [
        p
        for p in entries
        if run_name_of(p) is not None and not p.name.startswith(".") and not is_temp_file(p)
    ]


def _subfolders(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
