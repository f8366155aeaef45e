"""--niah-compare with a run an earlier version saved as plain ``<name>.json`` (issue 22, 11).

Runs are saved gzip-compressed now (``<name>.json.gz``); stores filled by earlier versions
keep working: their runs are found by name and as ``previous``, and compare as before.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pytest_niah.results.provenance import machine_info
from pytest_niah.results.store_layout import run_key

# The tiny grid with the literal arm only: every case passes, quickly.
LITERAL = ("--niah-arms=literal", "--niah-lengths=128,256")


def make_plain(niah, name: str) -> Path:
    """Turn saved run ``name`` into the plain JSON file an earlier version wrote."""
    folder = niah.pytester.path / ".niah" / "runs" / run_key(niah.label, machine_info())
    compressed = folder / f"{name}.json.gz"
    plain = folder / f"{name}.json"
    plain.write_bytes(gzip.decompress(compressed.read_bytes()))
    compressed.unlink()
    return plain


def test_an_old_plain_json_run_is_compared_by_name_and_as_previous(niah):
    niah.run(*LITERAL, "--niah-save=old").assert_outcomes(passed=niah.n_cases // 2 + 2)
    plain = make_plain(niah, "old")
    by_name = niah.run(*LITERAL, "--niah-compare=old", "--niah-compare-fail=auc:0")
    by_name.assert_outcomes(passed=niah.n_cases // 2 + 2)
    by_name.stdout.fnmatch_lines([f"{niah.label} versus {plain}:"])
    previous = niah.run(*LITERAL, "--niah-compare=previous")
    previous.assert_outcomes(passed=niah.n_cases // 2 + 2)
    previous.stdout.fnmatch_lines([f"{niah.label} versus {plain}:"])


def test_saving_over_an_old_plain_json_run_is_refused_before_any_work(niah):
    niah.run(*LITERAL, "--niah-save=base").assert_outcomes(passed=niah.n_cases // 2 + 2)
    plain = make_plain(niah, "base")
    refused = niah.run(*LITERAL, "--niah-save=base")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*run 'base' of model*exists already ({plain})*"])
    replaced = niah.run(*LITERAL, "--niah-save=base", "--niah-save-overwrite")
    replaced.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert not plain.exists()
    assert plain.with_name("base.json.gz").is_file()
