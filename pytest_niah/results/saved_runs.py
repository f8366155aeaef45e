"""The saved runs a history reads: each run with its provenance, and the files left out.

:func:`read_runs` reads every saved run of a store (through
:class:`~pytest_niah.results.storage.RunStore`, in its order); one bad file never hides the
rest, it is listed as :class:`Skipped` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_niah.errors import ResultsError
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.run_file import RunHeader, run_order
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.storage import RunStore

# Shown digits of a commit id and of a model identity's digest.
COMMIT_DIGITS = 7
IDENTITY_DIGITS = 8


@dataclass(frozen=True)
class SavedRun:
    """One saved run with its provenance.

    Attributes:
        path: The run's file.
        name: The run's name (``--niah-save=NAME``).
        label: The model label it was saved for.
        saved_at: When it was saved (timezone-aware).
        machine: The machine id of its store folder, e.g. ``Linux-x86_64-cp311``.
        commit: The git commit it was saved at (``id``, ``branch``, ``dirty``; may be empty).
        results: Its results.
    """

    path: Path
    name: str
    label: str
    saved_at: datetime
    machine: str
    commit: Mapping[str, Any]
    results: NiahResults

    @property
    def commit_text(self) -> str:
        """The commit's short id, with ``+dirty`` for uncommitted changes; ``-`` for none."""
        sha = self.commit.get("id")
        if not isinstance(sha, str) or not sha:
            return "-"
        return sha[:COMMIT_DIGITS] + ("+dirty" if self.commit.get("dirty") is True else "")

    @property
    def identity(self) -> str:
        """The model identity's short digest: a change means other weights or settings."""
        return self.results.model.fingerprint[:IDENTITY_DIGITS]

    @property
    def date(self) -> str:
        """The save date, ``YYYY-MM-DD`` in UTC."""
        return self.saved_at.astimezone(timezone.utc).strftime("%Y-%m-%d")

    @property
    def order_key(self) -> tuple[datetime, str, str]:
        """This run's place in the order of saved runs (:func:`~.run_file.run_order`)."""
        return run_order(self.saved_at, self.name, self.path)


@dataclass(frozen=True)
class Skipped:
    """A run file or run left out of the history, and why (one line).

    Attributes:
        path: The run's file.
        reason: Why, naming the file or the run.
        unreadable: ``True`` when the file could not be read as a saved run; ``False`` when
            it was read but measured nothing for the arm and scoring shown.
    """

    path: Path
    reason: str
    unreadable: bool = True


def read_runs(
    store: Path, *, labels: Sequence[str] = (), machine: str | None = None
) -> tuple[list[SavedRun], list[Skipped]]:
    """Read every saved run in ``store`` (optionally of some labels and one machine id).

    One bad file never hides the rest: a file that cannot be read, or is not a valid saved
    run, is returned in the second list with the reason, and the others are read.

    Returns:
        The runs in history order (save time, then name), and the skipped files.
    """
    headers, unreadable = RunStore(Path(store)).headers(labels, machine)
    runs: list[SavedRun] = []
    skipped = [Skipped(bad.path, bad.reason) for bad in unreadable]
    for header in headers:
        try:
            runs.append(_read_run(header))
        except ResultsError as exc:
            skipped.append(Skipped(header.path, str(exc)))
    return runs, skipped


def _read_run(header: RunHeader) -> SavedRun:
    path = header.path
    try:
        metadata, results = load_run(path)
    except (AttributeError, TypeError, ValueError, LookupError, RecursionError) as exc:
        raise ResultsError(f"{path}: not a pytest-niah saved run ({type(exc).__name__})") from None
    commit = metadata.get("commit")
    return SavedRun(
        path=Path(path),
        name=header.name,
        label=header.label,
        saved_at=header.saved_at,
        machine=header.machine,
        commit=commit if isinstance(commit, dict) else {},
        results=results,
    )
