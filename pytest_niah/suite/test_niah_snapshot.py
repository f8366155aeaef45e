"""Snapshot tests of each model's metric table (with --niah-snapshot or --snapshot-update)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_niah.plugin.session import NiahSession
from pytest_niah.results.snapshots import extension_for, metric_table, model_dir

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

pytestmark = pytest.mark.niah


def test_metric_table(
    niah_snapshot_model: str, niah_session: NiahSession, snapshot: SnapshotAssertion
) -> None:
    """The rounded per-length tables equal the stored snapshot (--snapshot-update writes it)."""
    results = niah_session.results_or_stop(niah_snapshot_model)
    directory = model_dir(niah_session.snapshot_dir, niah_snapshot_model)
    table = metric_table(results, niah_session.snapshot_digits)
    assert table == snapshot(extension_class=extension_for(directory))
