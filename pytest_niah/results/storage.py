"""The run store: saved runs filed by model label and kind of machine, and their order.

A saved run lives at ``<store>/<model label>/<machine id>/<name>.json.gz`` (the store is
``<rootdir>/.niah/runs`` by default; the folders and the finding of files are
:mod:`pytest_niah.results.store_layout`'s, the file, and the plain ``<name>.json`` of runs
saved by earlier versions, are described in :mod:`pytest_niah.results.run_file`).
:class:`RunStore` owns saving, listing, the newest run and the order of runs
(:func:`~pytest_niah.results.run_file.run_order`); ``--niah-save``, ``--niah-compare`` and
``pytest-niah history`` all go through it. No model code is imported here, so the plugin
can resolve ``--niah-compare`` before any model work starts.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pytest_niah.config import paths
from pytest_niah.errors import CompareError, NiahWarning, OutputError, ResultsError
from pytest_niah.files import create_whole, write_atomic
from pytest_niah.naming import label_file_name
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.provenance import commit_info, machine_id, machine_info
from pytest_niah.results.run_file import (
    RunHeader,
    aware,
    check_name,
    is_name,
    run_bytes,
    run_file_name,
    run_header,
    run_name_of,
)
from pytest_niah.results.stale_temps import remove_stale_temps_in
from pytest_niah.results.store_layout import saved_in, store_files

PREVIOUS = "previous"
_LISTED_RUNS = 20

default_store_dir = paths.store_dir


@dataclass(frozen=True)
class Unreadable:
    """A file in the store that is not a readable saved run, and why (names the file)."""

    path: Path
    reason: str


@dataclass(frozen=True)
class RunStore:
    """The saved runs under one folder: every reader and writer of saved runs goes here.

    Attributes:
        root: The store folder (see :func:`default_store_dir`).
    """

    root: Path

    def folder(self, label: str, machine: str | None = None) -> Path:
        """The folder of model ``label``'s runs on kind of machine ``machine`` (this one)."""
        return Path(self.root) / label_file_name(label) / (machine or machine_id())

    def path(self, name: str, label: str, machine: str | None = None) -> Path:
        """Where run ``name`` of model ``label`` is saved on kind of machine ``machine``.

        Raises:
            ConfigError: ``name`` is empty, holds a path separator or is too long.
        """
        check_name(name)
        return self.folder(label, machine) / run_file_name(name)

    def saved(self, name: str, label: str, machine: str | None = None) -> Path | None:
        """The file holding run ``name`` of model ``label`` on ``machine`` (this one), if any.

        A run saved by this version (``<name>.json.gz``) comes before a plain ``<name>.json``
        saved by an earlier one.

        Raises:
            ConfigError: ``name`` is empty, holds a path separator or is too long.
        """
        check_name(name)
        return saved_in(self.folder(label, machine), name)

    def target(self, name: str, label: str) -> Path:
        """The file of run ``name`` of model ``label`` on this kind of machine.

        The run's file when one is saved there (a plain ``<name>.json`` an earlier version
        saved included: a save without overwrite refuses it too), else where it will be saved.

        Raises:
            ConfigError: ``name`` is empty or holds a path separator.
        """
        return self.saved(name, label) or self.path(name, label)

    def save(
        self,
        results: NiahResults,
        name: str,
        *,
        label: str,
        now: datetime | None = None,
        commit: Mapping[str, str | bool] | None = None,
        overwrite: bool = False,
    ) -> Path:
        """Save ``results`` as run ``name`` of model ``label``.

        Without ``overwrite`` the run is created whole or not at all, and only when no run
        of that name exists: of two runs saving one name at once, one fails. Temporary files
        that killed saves left in the run's folder are removed first.

        Args:
            results: The results to save.
            name: The run's name, e.g. ``baseline``; a file name, not a path.
            label: The model label the plugin uses, e.g. ``packaged-minilm``.
            now: The save time; the current UTC time when ``None``.
            commit: The commit to record (``id``, ``branch``, ``dirty``); when ``None``, the
                checkout the store sits in (:func:`~pytest_niah.results.provenance.commit_info`).
            overwrite: Replace a run saved under this name before; otherwise that is an error.

        Returns:
            The written file, ``<store>/<run_key>/<name>.json.gz``; a plain ``<name>.json``
            an earlier version saved there is replaced too (with ``overwrite``).

        Raises:
            ConfigError: ``name`` is empty or holds a path separator.
            OutputError: a run of this name exists and ``overwrite`` is off.
        """
        machine = machine_info()
        target = self.path(name, label, machine_id(machine))
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps_in(target.parent)
        data = run_bytes(
            results.to_dict(),
            name=name,
            label=label,
            machine=machine,
            saved_at=now or datetime.now(timezone.utc),
            # The store sits inside the project, so git finds the project's checkout from it.
            commit=commit if commit is not None else commit_info(target.parent),
        )
        existing = self.saved(name, label, machine_id(machine))
        if overwrite:
            write_atomic(target, data)
            if existing is not None and existing != target:  # the plain file of an old save
                existing.unlink(missing_ok=True)
        elif existing is not None or not create_whole(target, data):
            raise OutputError(
                f"--niah-save: run {name!r} of model {label!r} exists already "
                f"({existing or target})",
                "add --niah-save-overwrite to replace it, or save under another name",
            )
        return target

    def files(self, labels: Sequence[str] = (), machine: str | None = None) -> list[Path]:
        """Every saved run's file, sorted by path; nothing when the store is missing.

        Args:
            labels: Only the folders of these model labels; every label when empty.
            machine: Only this machine id's folders; every machine when ``None``.
        """
        return store_files(Path(self.root), labels, machine)

    def headers(
        self, labels: Sequence[str] = (), machine: str | None = None
    ) -> tuple[list[RunHeader], list[Unreadable]]:
        """The runs of ``labels`` (all when empty) on ``machine`` (all when ``None``), in order.

        Returns:
            The runs' headers in the order of saved runs (oldest first; see
            :func:`~pytest_niah.results.run_file.run_order`), and the files that are not
            readable saved runs. Runs of another label sharing a folder name are left out.
        """
        headers: list[RunHeader] = []
        unreadable: list[Unreadable] = []
        for path in self.files(labels, machine):
            try:
                header = run_header(path)
            except ResultsError as exc:
                unreadable.append(Unreadable(path, str(exc)))
                continue
            if not labels or header.label in labels:
                headers.append(header)
        return sorted(headers, key=lambda h: h.order_key), unreadable

    def latest(
        self, label: str, machine: str | None = None, *, before: datetime | None = None
    ) -> Path | None:
        """The newest run of model ``label``: what ``--niah-compare=previous`` compares with.

        The last run in the order of saved runs (save time, then name, then path; see
        :func:`~pytest_niah.results.run_file.run_order`), the run ``pytest-niah history``
        ends on.

        Args:
            label: The model label.
            machine: Only runs saved on this machine id; any machine when ``None``.
            before: Only runs saved strictly before this time (a time without a zone is
                UTC).

        Returns:
            The newest matching run's file, or ``None``. An unreadable file is skipped with
            a :class:`~pytest_niah.errors.NiahWarning` naming it.
        """
        limit = None if before is None else aware(before)
        headers, unreadable = self.headers([label], machine)
        for bad in unreadable:
            warnings.warn(NiahWarning(f"{bad.reason} (skipped)"), stacklevel=3)
        older = [h for h in headers if limit is None or h.saved_at < limit]
        return older[-1].path if older else None

    def resolve(self, ref: str, label: str, *, before: datetime | None = None) -> Path:
        """The file a ``--niah-compare`` reference points at.

        Args:
            ref: A path to an existing results file (a saved run or a ``--niah-json`` file),
                or the name of a saved run.
            label: The model label; a name is looked up among this model's runs.
            before: For ``previous``: only runs saved before this time (the session's start).

        Returns:
            ``ref`` itself when it is an existing file; for ``previous`` (unless a run is
            named so) the newest run of this model saved on this kind of machine; else the
            run ``ref`` saved on this kind of machine, else the newest run ``ref`` of this
            model on any machine.

        Raises:
            CompareError: nothing matches; the message lists the saved runs.
        """
        path = Path(ref)
        if path.is_file():
            return path
        is_run_name = bool(ref) and is_name(ref)
        here = saved_in(self.folder(label), ref) if is_run_name else None
        if ref == PREVIOUS and here is None:
            latest = self.latest(label, machine_id(), before=before)
            if latest is None:
                raise CompareError(
                    f"--niah-compare=previous: no run of model {label!r} is saved on this kind "
                    f"of machine ({machine_id()}) in {self.root}",
                    "save one first with --niah-save=NAME (CI: save every run under a new "
                    "name, e.g. the commit id, and restore the run store between jobs)",
                )
            return latest
        if here is not None:
            return here
        if is_run_name:  # the newest run of that name saved on any machine
            named = [h for h in self.headers([label])[0] if run_name_of(h.path) == ref]
            if named:
                return named[-1].path
        raise CompareError(
            f"--niah-compare: {ref!r} is neither a results file nor a run saved for model "
            f"{label!r} in {self.root}",
            self._available(),
        )

    def _available(self) -> str:
        runs = [
            str(p.relative_to(self.root).with_name(run_name_of(p) or p.name)) for p in self.files()
        ]
        if not runs:
            return "no runs are saved there yet: save one with --niah-save=NAME"
        listed = ", ".join(runs[:_LISTED_RUNS])
        more = f" and {len(runs) - _LISTED_RUNS} more" if len(runs) > _LISTED_RUNS else ""
        return (
            f"give the name of a run of this model, or the path of any run's file; saved runs "
            f"(model/machine/name): {listed}{more}"
        )
