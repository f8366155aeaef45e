"""Syrupy snapshots of per-length metric tables, stored in the user's project, one folder per model.

One folder per model label keeps snapshot discovery per model: running only model A never
reports model B's snapshots as unused.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

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


def metric_table(results: NiahResults, digits: int = 3) -> dict[str, Any]:
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
    """An Amber extension that keeps its snapshot files in ``directory``."""
    from syrupy.extensions.amber import AmberSnapshotExtension

    target = str(directory)

    class NiahSnapshotExtension(AmberSnapshotExtension):
        @classmethod
        def dirname(cls, *, test_location: Any) -> str:
            return target

        @classmethod
        def discovery_dirname(cls, *, test_location: Any) -> str:
            return target

        @classmethod
        def matches_test_location(cls, *, test_location: Any, snapshot_location: str) -> bool:
            # The folder is ours by construction; the file is named after the test module.
            return bool(Path(snapshot_location).stem == test_location.basename)

    return NiahSnapshotExtension


def model_dir(root: Path, label: str) -> Path:
    """The folder of one model's snapshots under ``root``: one per label, always inside it."""
    from pytest_niah.results.storage import label_folder

    return root / label_folder(label)
