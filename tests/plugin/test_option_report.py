"""--niah-report: report.html, cases.csv, summary.md and the results, written at the end."""

from __future__ import annotations

import csv
import io
import json

import pytest

from pytest_niah.naming import results_file_names
from pytest_niah.results.niah_results import NiahResults

LITERAL = ("--niah-arms=literal",)
FILES = {"report.html", "cases.csv", "summary.md", "results.json"}


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch):
    """Never append to the step summary of the CI job running these tests."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def read(path) -> str:
    return path.read_text(encoding="utf-8")


def test_report_files_of_one_model(niah):
    result = niah.run("--niah-report=out/report", "--niah-json=r.json")
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    folder = niah.pytester.path / "out" / "report"
    assert {p.name for p in folder.iterdir()} == FILES
    # The results are the run's own, byte for byte.
    assert (folder / "results.json").read_bytes() == (niah.pytester.path / "r.json").read_bytes()
    results = NiahResults.load(folder / "results.json")
    # One CSV row per case, each named by the model's label.
    rows = list(csv.DictReader(io.StringIO(read(folder / "cases.csv"))))
    assert len(rows) == niah.n_cases == len(results.cases)
    assert {row["model"] for row in rows} == {"lexical-tfidf"}
    # The markdown: a section for the model, a table per arm, a row per length.
    summary = read(folder / "summary.md")
    assert summary.startswith("# ⚠️ pytest-niah: nothing gated (1 model measured")
    assert "## lexical-tfidf\n" in summary
    for arm in ("literal", "onehop"):
        assert f"### lexical-tfidf: arm {arm}, scoring whole" in summary
    assert summary.count("\n|    128 |") == summary.count("\n|    256 |") == 2
    # The page: self-contained, figures embedded.
    html = read(folder / "report.html")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "data:image/png;base64," in html
    assert "lexical-tfidf" in html
    assert 'src="http' not in html and "<script src" not in html


def test_report_with_a_baseline_holds_both_labels(niah):
    niah.run(*LITERAL, "--niah-save=base")
    result = niah.run(*LITERAL, "--niah-compare=base", "--niah-report=rep")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    folder = niah.pytester.path / "rep"
    # The baseline shows as "lexical-tfidf (base)": named by the one label rule, hashed.
    own, base = results_file_names(["lexical-tfidf", "lexical-tfidf (base)"])
    assert own == "results.lexical-tfidf.json" and base.startswith("results.lexical-tfidf-base-")
    assert {p.name for p in folder.iterdir()} == {
        "report.html",
        "cases.csv",
        "summary.md",
        own,
        base,
        "comparison.json",
    }
    current = NiahResults.load(folder / own)
    baseline = NiahResults.load(folder / base)
    assert current.to_json() == baseline.to_json()
    summary = read(folder / "summary.md")
    assert "## lexical-tfidf\n" in summary
    assert "## lexical-tfidf (base)\n" in summary
    rows = list(csv.DictReader(io.StringIO(read(folder / "cases.csv"))))
    assert {row["model"] for row in rows} == {"lexical-tfidf", "lexical-tfidf (base)"}
    assert len(rows) == 2 * (niah.n_cases // 2)
    html = read(folder / "report.html")
    assert "lexical-tfidf (base)" in html
    # The comparison reaches every report, with its number of paired cells.
    compared = json.loads(read(folder / "comparison.json"))
    assert [c["label"] for c in compared["comparisons"]] == ["lexical-tfidf"]
    assert "lexical-tfidf versus" in summary and "Paired on 24 cells" in summary
    assert "lexical-tfidf versus" in html and "Paired on 24 cells" in html


def test_report_with_a_json_baseline_is_named_after_the_file(niah):
    niah.run(*LITERAL, "--niah-json=before.json")
    niah.run(*LITERAL, "--niah-compare=before.json", "--niah-report=rep")
    summary = read(niah.pytester.path / "rep" / "summary.md")
    assert "## lexical-tfidf (before)\n" in summary


def test_two_models_one_report(niah):
    result = niah.run(
        *LITERAL,
        "--niah-model=a=lexical:tfidf",
        "--niah-model=b=lexical:tfidf",
        "--niah-report=rep",
    )
    result.assert_outcomes(passed=2 * (niah.n_cases // 2 + 2))
    folder = niah.pytester.path / "rep"
    assert {p.name for p in folder.glob("results*.json")} == {"results.a.json", "results.b.json"}
    summary = read(folder / "summary.md")
    assert "## a\n" in summary and "## b\n" in summary


def test_step_summary_gets_the_markdown(niah, tmp_path, monkeypatch):
    step = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = niah.run(*LITERAL, "--niah-report=rep")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert read(step) == read(niah.pytester.path / "rep" / "summary.md")
    # Listed with the files written, as appended to rather than written.
    result.stdout.fnmatch_lines(
        ["*= pytest-niah: files written =*", f"{step} (appended: GITHUB_STEP_SUMMARY)"]
    )


def test_step_summary_keeps_what_earlier_steps_wrote(niah, tmp_path, monkeypatch):
    step = tmp_path / "step_summary.md"
    step.write_text("earlier step", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    niah.run(*LITERAL, "--niah-report=rep")
    assert read(step) == "earlier step\n" + read(niah.pytester.path / "rep" / "summary.md")


def test_no_report_without_the_option_but_the_step_summary_still(niah, tmp_path, monkeypatch):
    """GITHUB_STEP_SUMMARY set is enough for the step summary (#31); a report needs the option."""
    step = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    niah.run(*LITERAL).assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert step.read_text(encoding="utf-8").startswith("# ⚠️ pytest-niah: nothing gated")
    assert not list(niah.pytester.path.rglob("report.html"))


def test_no_report_when_no_test_ran(niah):
    niah.run(*LITERAL, "--niah-report=rep", "--collect-only")
    niah.run(*LITERAL, "--niah-report=rep", "-k", "no-such-test")
    assert not (niah.pytester.path / "rep").exists()


def test_ini_report_is_relative_to_the_ini_file(niah, monkeypatch):
    niah.pytester.makeini("[pytest]\nniah_report = ini-report\n")
    sub = niah.pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    niah.run(*LITERAL).assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert (niah.pytester.path / "ini-report" / "report.html").is_file()
    assert not (sub / "ini-report").exists()


def test_the_report_holds_the_history_of_the_labels_saved_runs(niah):
    """Saved runs of the run's label give report.html a History section (#17.4)."""
    niah.run(*LITERAL, "--niah-report=before")
    assert 'id="history"' not in read(niah.pytester.path / "before" / "report.html")
    niah.run(*LITERAL, "--niah-save=first")
    niah.run(*LITERAL, "--niah-save=second", "--niah-report=rep")
    html = read(niah.pytester.path / "rep" / "report.html")
    assert 'id="history"' in html
    section = html[html.index('id="history"') :]
    assert "first" in section and "second" in section
