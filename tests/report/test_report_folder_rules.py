"""Rules of report/report_folder.py beside its kill tests: which previous report comes back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_niah.files import temp_prefix
from pytest_niah.report.report_folder import OLD_MARK, replaced_folder


def test_a_missing_report_comes_back_as_the_newest_one_renamed_aside(tmp_path: Path):
    # Found (mutation seed 981343202, report_folder.py:184): after kills between the
    # fallback's two renames, two previous reports may wait beside the folder: the newest
    # is the one the folder held last.
    target = tmp_path / "niah-report"
    for n, (name, mtime) in enumerate([("older", 1_000_000), ("newer", 2_000_000)]):
        aside = tmp_path / f"{temp_prefix(target)}{OLD_MARK}{n:08x}"
        aside.mkdir()
        (aside / "summary.md").write_text(name, encoding="utf-8")
        os.utime(aside, ns=(mtime * 10**9, mtime * 10**9))
    with pytest.raises(RuntimeError), replaced_folder(target):
        raise RuntimeError("the new report failed: the previous one stays")
    assert (target / "summary.md").read_text(encoding="utf-8") == "newer"
