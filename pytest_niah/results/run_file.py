"""One saved run's file: its name, who saved it and when (read cheaply), and its order.

A saved run is a JSON document holding the results with their provenance::

    {"run_schema_version": 2, "name": ..., "label": ..., "saved_at": ..., "machine": {...},
     "commit": {...}, "results": {...}}

gzip-compressed in ``<name>.json.gz`` (:func:`run_file_name`, :func:`encode_run`: about a
tenth of the text, and the same run always gives the same bytes). Runs saved by earlier
versions as plain ``<name>.json`` are read alike (:func:`run_name_of`); every reader
decompresses transparently (:func:`~pytest_niah.results.niah_results.read_text`).

:func:`run_order` is the one order of saved runs: the newest run
(``--niah-compare=previous``) is the last one in it, and the history lists runs in it.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_niah.config import strict_json
from pytest_niah.errors import ConfigError, ResultsError
from pytest_niah.naming import file_slug
from pytest_niah.results.niah_results import read_text
from pytest_niah.results.results_schema import RUN_SCHEMA_VERSION

RUN_SUFFIX = ".json.gz"
"""The end of a saved run's file name: gzip-compressed JSON."""
PLAIN_RUN_SUFFIX = ".json"
"""The end of a run saved by an earlier version, before runs were compressed; still read."""

# A run name's file, "<name>.json.gz", and its temporary file while written (about 32 bytes
# more) must fit the usual 255-byte limit of a file name.
_MAX_NAME_BYTES = 200


def run_file_name(name: str) -> str:
    """The file name run ``name`` is saved under: ``<name>.json.gz``."""
    return f"{name}{RUN_SUFFIX}"


def run_file_names(name: str) -> tuple[str, str]:
    """The file names that can hold run ``name``: this version's first, then the plain one."""
    return run_file_name(name), f"{name}{PLAIN_RUN_SUFFIX}"


def run_name_of(path: Path) -> str | None:
    """The run name a file name in the store stands for, or ``None`` for no run's file.

    ``base.json.gz`` and (saved by an earlier version) ``base.json`` are run ``base``.
    """
    for suffix in (RUN_SUFFIX, PLAIN_RUN_SUFFIX):
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[: -len(suffix)]
    return None


def encode_run(text: str) -> bytes:
    """A saved run's bytes: ``text`` gzip-compressed, the same bytes for the same text.

    The gzip header holds no time (``mtime=0``) and no file name, so saving one run twice,
    here or on another machine, gives identical files (git sees no change).
    """
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as stream:
        stream.write(text.encode("utf-8"))
    return buffer.getvalue()


def run_bytes(
    results: Mapping[str, Any],
    *,
    name: str,
    label: str,
    machine: Mapping[str, str],
    saved_at: datetime,
    commit: Mapping[str, str | bool],
) -> bytes:
    """The file of a saved run: the document of the module docstring, by :func:`encode_run`."""
    document = {
        "run_schema_version": RUN_SCHEMA_VERSION,
        "name": name,
        "label": label,
        # Microseconds: runs saved in one second still sort in the order they were saved.
        "saved_at": saved_at.isoformat(),
        "machine": dict(machine),
        "commit": dict(commit),
        "results": results,
    }
    return encode_run(json.dumps(document, indent=1, sort_keys=True, allow_nan=False))


def run_order(saved_at: datetime, name: str, path: Path) -> tuple[datetime, str, str]:
    """Where a run sorts among saved runs: by save time, then by name, then by file.

    Runs keep microseconds; two with one time (files that kept whole seconds) are ordered
    by name. File times never count: a checkout, a copy or a restored CI cache changes them.
    """
    return (saved_at, name, str(path))


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

    @property
    def order_key(self) -> tuple[datetime, str, str]:
        """This run's place in the order of saved runs (:func:`run_order`)."""
        return run_order(self.saved_at, self.name, self.path)


def parse_saved_at(text: str) -> datetime:
    """A run's ``saved_at`` as a timezone-aware time; a time without a zone is UTC.

    Raises:
        ValueError: ``text`` is not an ISO 8601 time.
    """
    stamp = text.strip()
    if stamp.endswith(("Z", "z")):
        stamp = stamp[:-1] + "+00:00"
    return aware(datetime.fromisoformat(stamp))


def aware(moment: datetime) -> datetime:
    """``moment`` with its time zone; a time without one is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def run_header(path: Path) -> RunHeader:
    """The name, label, save time and machine of a saved run, without validating its results.

    Raises:
        ResultsError: the file cannot be read, is not JSON, or is not a saved run; the
            message names the file.
    """
    text = read_text(path, "saved run")
    data = strict_json.strict_loads(
        text,
        lambda problem, _, field: ResultsError(
            f"{path}: not a saved run: {problem}", "save the run again"
        ),
    )
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


def check_name(name: str) -> None:
    """Refuse run names that are empty, leave the store folder (``a/b``, ``..``) or are too long.

    Raises:
        ConfigError: the name cannot be a run's file name; the message says why.
    """
    if not name.strip() or not is_name(name) or "\0" in name:
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
            f"give a shorter name, e.g. {file_slug(name)[:40]!r}",
        )


def is_name(text: str) -> bool:
    """Whether ``text`` names a file in a folder: no path separator, not ``.`` or ``..``."""
    separators = {"/", "\\", os.sep, *([os.altsep] if os.altsep else [])}
    return not any(sep in text for sep in separators) and text not in (".", "..")
