"""Snapshot tests of each model's metric table (with --niah-snapshot or --snapshot-update)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from pytest_niah.plugin.session import NiahSession
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.snapshot_diff import mismatch_block
from pytest_niah.results.snapshots import (
    extension_for,
    metric_table,
    model_dir,
    remove_stale_snapshot_temps,
)

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

pytestmark = pytest.mark.niah


def identity_text(label: str, results: NiahResults) -> str:
    """Which model produced a table: its label, name or path, and identity fingerprint.

    The snapshot holds the table under the label only (a role such as ``prod``), so that an
    upgraded model is checked against the table of the model it replaces; the identity lives
    in the results, and is shown when the table differs.
    """
    model = results.model
    reads = "every token" if model.max_tokens is None else f"{model.max_tokens} tokens"
    return (
        f"the metric table of {label!r} differs from its snapshot; this table came from model "
        f"{model.name} (identity fingerprint {model.fingerprint}, reads {reads}); the snapshot "
        "holds the table only, under the label: --snapshot-update accepts this table"
    )


def test_metric_table(
    niah_snapshot_model: str, niah_session: NiahSession, snapshot: SnapshotAssertion
) -> None:
    """The rounded per-length tables equal the stored snapshot (--snapshot-update writes it)."""
    results = niah_session.results_or_stop(niah_snapshot_model)
    remove_stale_snapshot_temps(
        niah_session.settings.snapshot_dir
    )  # a killed update's, any label's
    directory = model_dir(niah_session.settings.snapshot_dir, niah_snapshot_model)
    table = metric_table(results, niah_session.settings.snapshot_digits)
    assertion = snapshot(extension_class=extension_for(directory))
    if assertion == table:  # syrupy records the check (and writes under --snapshot-update)
        return
    execution = assertion.executions[assertion.num_executions - 1]
    # One block of changed cells, as a failed gate reads, not a traceback of this function.
    pytest.fail(
        mismatch_block(
            identity_text(niah_snapshot_model, results),
            _text(execution.recalled_data),
            _text(execution.asserted_data),
            execution.snapshot_name,
        ),
        pytrace=False,
    )


def _text(data: object) -> str | None:
    return None if data is None else str(data)
