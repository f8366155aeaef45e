from __future__ import annotations

import json

import pytest

from pytest_niah.errors import ResultsError
from pytest_niah.results.niah_results import NiahResults, package_versions


def test_not_json_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ResultsError, match=r"broken\.json: not valid JSON"):
        NiahResults.load(path)


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(ResultsError, match=r"nope\.json: cannot read"):
        NiahResults.load(tmp_path / "nope.json")


def test_other_schema_version_is_refused(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"schema_version": 0}), encoding="utf-8")
    with pytest.raises(ResultsError, match="schema version 0"):
        NiahResults.load(path)


def test_wrong_shape_is_refused():
    with pytest.raises(ResultsError, match="not a pytest-niah results file"):
        NiahResults.from_dict({"schema_version": 1, "config": {"model": "x"}})


def test_package_versions_reads_metadata_only():
    versions = package_versions(["pytest", "no-such-package-xyz"])
    assert set(versions) == {"pytest"}
