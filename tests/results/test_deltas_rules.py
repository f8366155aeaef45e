"""Rules of results/deltas.py beside the comparison tests."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_niah.results.deltas import Delta


def test_a_delta_cannot_be_changed_once_made():
    # Found (mutation seed 981343202, deltas.py:22): a comparison's figures are what was
    # measured; a report or gate must not be able to edit one in place.
    delta = object.__new__(Delta)
    with pytest.raises(dataclasses.FrozenInstanceError):
        delta.delta = 0.5  # type: ignore[misc]
