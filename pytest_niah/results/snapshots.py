"""Syrupy snapshots of per-length metric tables, stored in the user's project, one folder per model.

One folder per model label keeps snapshot discovery per model: running only model A never
reports model B's snapshots as unused.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from pytest_niah.config.options import default
from pytest_niah.results.niah_results import NiahResults

SNAPSHOT_COLUMNS = (
    "normalized",
    "comparative_ratio",
    "auc",
    "separation",
    "effect_size",
    "found",
    "missed",
    "truncated",
    "unread",
)


def metric_table(results: NiahResults, digits: int = default("snapshot_digits")) -> dict[str, Any]:
    """The per-length tables of every arm and scoring, floats rounded to ``digits``.

    Rounding keeps last-bit changes (another BLAS, another batch split) from churning
    snapshots; NaN becomes the string ``"nan"`` so it compares equal to itself.
    """
    # The label, not the model: a snapshot belongs to a role (prod, candidate), so an upgraded
    # model is checked against the table of the model it replaces.
    table: dict[str, Any] = {}
    for arm, scoring in results.variants:
        rows: dict[str, Any] = {}
        for row in results.rows("length", arm, scoring):
            rows[f"L{row.length}"] = {c: _round(getattr(row, c), digits) for c in SNAPSHOT_COLUMNS}
        effective = results.effective_length(arm, scoring)
        rows["effective_length"] = effective.length if effective else None
        table[f"{arm}/{scoring}"] = rows
    return table


def _round(value: Any, digits: int) -> Any:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else round(value, digits) + 0.0  # no "-0.0"
    return value


def extension_for(directory: Path) -> type:
    """An Amber extension that keeps its snapshot files in ``directory``.

    Its files are written whole or not at all, like every output of pytest-niah
    (:func:`~pytest_niah.files.write_atomic`): syrupy itself rewrites a snapshot file in
    place, so a kill or a full disk mid-write would leave half a snapshot.
    """
    from syrupy.extensions.amber import AmberSnapshotExtension

    from pytest_niah.results.stale_temps import is_temp_file

    target = str(directory)

    class NiahSnapshotExtension(AmberSnapshotExtension):
        serializer_class = atomic_serializer(AmberSnapshotExtension.serializer_class)

        @classmethod
        def dirname(cls, *, test_location: Any) -> str:
            return target

        @classmethod
        def discovery_dirname(cls, *, test_location: Any) -> str:
            return target

        @classmethod
        def matches_test_location(cls, *, test_location: Any, snapshot_location: str) -> bool:
            # The folder is ours by construction; the file is named after the test module
            # (never a killed write's temporary file beside it).
            path = Path(snapshot_location)
            return bool(path.stem == test_location.basename) and not is_temp_file(path)

    return NiahSnapshotExtension


def atomic_serializer(base: Any) -> Any:
    """A subclass of syrupy's Amber serializer ``base`` whose files are written atomically.

    syrupy's own ``write_file`` (merging with the file's snapshots when asked) writes a
    staging file next to the snapshot file, whose content then replaces the snapshot file
    through :func:`~pytest_niah.files.write_atomic`; the staging file is always removed.
    The staging file is named like write_atomic's temporary files, so one a killed run left
    behind is removed by the next write into the folder, of this snapshot file or another.
    """
    import contextlib
    import inspect
    import os
    import tempfile

    from pytest_niah.files import temp_prefix, write_atomic
    from pytest_niah.results.stale_temps import remove_stale_temps_in

    # syrupy >= 5 can lock the file for a read-modify-write (pytest-xdist); 4.x cannot.
    locking = "file_lock" in inspect.signature(base.write_file).parameters

    class AtomicAmberSerializer(base):  # type: ignore[misc]
        @classmethod
        def write_file(cls, snapshot_collection: Any, merge: bool = False, **kwargs: Any) -> None:
            real = Path(snapshot_collection.location)
            lock: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
            if locking:
                from syrupy.utils import exclusive_file_lock, snapshot_file_lock_enabled

                wanted = kwargs.get("file_lock")
                wanted = snapshot_file_lock_enabled() if wanted is None else wanted
                if wanted and not kwargs.get("_already_locked", False):
                    lock = exclusive_file_lock(real)
            with lock:
                collection = snapshot_collection
                if merge:
                    collection = cls.read_file(str(real))
                    collection.merge(snapshot_collection)
                real.parent.mkdir(parents=True, exist_ok=True)
                remove_stale_temps_in(real.parent)  # killed writes' files, of any snapshot file
                descriptor, staging = tempfile.mkstemp(dir=real.parent, prefix=temp_prefix(real))
                os.close(descriptor)
                try:
                    staged = copy.copy(collection)
                    staged.location = staging
                    extra = {"file_lock": False} if locking else {}
                    if "name_order" in kwargs:
                        extra["name_order"] = kwargs["name_order"]
                    super().write_file(staged, merge=False, **extra)
                    data = Path(staging).read_bytes()
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(staging)
                write_atomic(real, data)

    return AtomicAmberSerializer


def remove_stale_snapshot_temps(root: Path) -> list[Path]:
    """Remove the temporary files killed snapshot writes left, in every label's folder.

    Run by every run that writes snapshots or results, so that a file a killed
    ``--snapshot-update`` left is gone before anyone commits the folder, whichever label
    it belonged to. Never raises.
    """
    from pytest_niah.results.stale_temps import remove_stale_temps_in

    removed = remove_stale_temps_in(root)
    try:
        folders = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return removed
    for folder in folders:
        removed += remove_stale_temps_in(folder)
    return removed


def model_dir(root: Path, label: str) -> Path:
    """The folder of one model's snapshots under ``root``: one per label, always inside it."""
    from pytest_niah.naming import label_file_name

    return root / label_file_name(label)
