"""--niah-json: every number of the run in one file, the same the terminal table shows."""

from __future__ import annotations

import json
import math

from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.results_schema import ResultsDocument
from pytest_niah.results.results_validation import validate


def _cell(value: float, digits: int = 3) -> str:
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def test_file_is_written_and_reads_back(niah):
    result = niah.run("--niah-json=out/results.json")
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    path = niah.pytester.path / "out" / "results.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["schema_version"] == 3
    validate(ResultsDocument, path.read_bytes(), str(path))  # the published JSON schema
    results = NiahResults.load(path)
    assert results.model.name == "lexical:tfidf"
    assert results.config.lengths == (128, 256)
    assert results.config.groups == ("dietary-01", "location-01")
    assert len(results.cases) == niah.n_cases
    assert results.to_json() == path.read_text(encoding="utf-8")


def test_same_numbers_as_the_terminal_table(niah):
    result = niah.run("--niah-json=r.json")
    results = niah.load("r.json")
    tables = niah.tables(result)
    assert set(tables) == set(results.config.arms)
    for arm, table in tables.items():
        assert sorted(table["rows"]) == list(results.config.lengths)
        for length, cells in table["rows"].items():
            row = results.row(arm, length)
            assert cells["norm.sim"] == _cell(row.normalized)
            assert cells["ratio"] == _cell(row.comparative_ratio)
            assert cells["AUC"].split()[0] == _cell(row.auc)
            assert cells["separation"] == _cell(row.separation, 4)
            assert cells["effect"] == _cell(row.effect_size, 2)
            assert (cells["found"], cells["missed"], cells["truncated"]) == (
                str(row.found),
                str(row.missed),
                str(row.truncated),
            )


def test_case_outcomes_match_the_file(niah):
    result = niah.run("--niah-json=r.json")
    results = niah.load("r.json")
    found = sum(c.found for c in results.cases)
    missed = sum(not c.found for c in results.cases)
    result.assert_outcomes(passed=found + niah.n_gates, xfailed=missed)


def test_two_models_two_files(niah):
    result = niah.run(
        "--niah-model=a=lexical:tfidf", "--niah-model=b=lexical:tfidf", "--niah-json=out.json"
    )
    result.assert_outcomes(passed=2 * (niah.n_cases // 2 + niah.n_gates), xfailed=niah.n_cases)
    assert not (niah.pytester.path / "out.json").exists()
    a, b = niah.load("out.a.json"), niah.load("out.b.json")
    assert a.config == b.config
    assert [c.cos_qh for c in a.cases] == [c.cos_qh for c in b.cases]


def test_no_file_without_the_option(niah):
    niah.run("--niah-arms=literal").assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert not list(niah.pytester.path.rglob("*.json"))
