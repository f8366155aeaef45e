"""Issue 16 (comparisons everywhere): the comparison in summary.md, report.html, the GitHub
step summary and comparison.json, with the terminal table's columns and verdicts."""

from __future__ import annotations

import base64
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_niah.config.gate_expressions import parse_allowances
from pytest_niah.errors import OutputError
from pytest_niah.naming import results_file_names
from pytest_niah.report import (
    ReportComparison,
    append_step_summary,
    check_step_summary,
    step_summary_markdown,
    step_summary_path,
    summary_markdown,
    write_report,
    write_step_summary,
)
from pytest_niah.report.comparison_table import COMPARISON_HEADER, comparison_table
from pytest_niah.report.escape import md_text
from pytest_niah.report.figures import COMPARISON_FIGURE, comparison_figure
from pytest_niah.report.html import render_html
from pytest_niah.results.compare import compare_results
from pytest_niah.results.niah_results import NiahResults

ALLOWANCES = parse_allowances("auc:0.02,sep:0.001")


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture(scope="module")
def compared(results: NiahResults, worse: NiahResults) -> ReportComparison:
    """The worse run against the original as its baseline, gated on AUC and separation."""
    comparison = compare_results(worse, results, n_resamples=50, seed=42, source="base.json")
    return ReportComparison("lexical:tfidf", "base.json", comparison, ALLOWANCES)


@pytest.fixture(scope="module")
def written(
    worse: NiahResults,
    results: NiahResults,
    compared: ReportComparison,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        out = tmp_path_factory.mktemp("compared")
        return write_report(
            [worse, results],
            out,
            labels=["lexical:tfidf", "lexical:tfidf (base)"],
            comparisons=[compared],
        )


def split_terminal(lines: list[str]) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in lines]


def markdown_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return [rows[0], *rows[2:]]


class Cells(HTMLParser):
    """The text of each cell of each row of the tables of one section."""

    def __init__(self, section: str) -> None:
        super().__init__(convert_charrefs=True)
        self.section = section
        self.inside = self.in_cell = False
        self.rows: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self.inside = ("id", self.section) in attrs
        if self.inside and tag == "tr":
            self.rows.append([])
        if self.inside and tag in ("td", "th"):
            self.rows[-1].append("")
            self.in_cell = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.inside = False
        if tag in ("td", "th"):
            self.in_cell = False

    def handle_data(self, data: str) -> None:
        if self.inside and self.in_cell:
            self.rows[-1][-1] += data


def html_table(page: str, section: str) -> list[list[str]]:
    parser = Cells(section)
    parser.feed(page)
    return parser.rows


# -- the table: one source, three outputs -------------------------------------------------------


def test_comparison_is_a_regression_with_paired_cells(compared: ReportComparison) -> None:
    states = compared.counts()
    assert states.get("regressed", 0) >= 1
    assert sum(compared.comparison.paired.values()) == len(compared.comparison.deltas) // 6 * 48
    assert compared.verdict_texts() and all("L512" in t for t in compared.verdict_texts())


def test_summary_markdown_has_the_terminal_comparison_table(
    results: NiahResults, worse: NiahResults, compared: ReportComparison
) -> None:
    text = summary_markdown([worse], ["lexical:tfidf"], [compared])
    terminal = split_terminal(comparison_table(compared.comparison, compared.allowances))
    expected = [[*row, *[""] * (len(COMPARISON_HEADER) - len(row))] for row in terminal]
    # The gated rows first; the metrics no gate looked at follow, folded.
    gated = markdown_rows(text, "| arm ")
    folded = text.split("<details><summary>Metrics not gated", 1)[1]
    rest = markdown_rows(folded, "| arm ")
    assert gated[0] == rest[0] == expected[0]
    assert all(row[-1] for row in gated[1:]) and not any(row[-1] for row in rest[1:])
    assert sorted(gated[1:] + rest[1:]) == sorted(expected[1:])
    assert "## Comparison: lexical:tfidf versus base.json\n" in text
    assert "Paired on " in text and " cells " in text
    assert "Verdicts (auc:0.02, separation:0.001): " in text and " regressed" in text
    for line in compared.verdict_texts():
        assert f"\n- {md_text(line)}\n" in text
    # The comparison comes first; the per-length tables follow, collapsed.
    assert text.index("## Comparison") < text.index("## lexical:tfidf\n")
    assert text.count("<details><summary>Per-length tables</summary>") == 1
    assert text.count("\n| length |") == len(worse.variants)


def test_summary_without_comparison_is_not_collapsed(results: NiahResults) -> None:
    text = summary_markdown([results], ["m"])
    assert "<details>" not in text and "Comparison" not in text
    assert "<details>" in summary_markdown([results], ["m"], collapse=True)


def test_html_has_the_terminal_comparison_table(
    written: dict[str, Path], compared: ReportComparison
) -> None:
    page = written["report.html"].read_text(encoding="utf-8")
    terminal = split_terminal(comparison_table(compared.comparison, compared.allowances))
    rows = html_table(page, "comparison")
    assert rows[0] == list(COMPARISON_HEADER)
    assert [[c for c in row if c] for row in rows[1:]] == terminal[1:]
    assert '<a href="#comparison">Comparison</a>' in page
    assert '<td class="regressed">regressed</td>' in page
    assert "<h3>lexical:tfidf versus base.json</h3>" in page
    assert page.index('id="comparison"') < page.index('id="runs"')


def test_html_draws_the_baseline_versus_current_figure(written: dict[str, Path]) -> None:
    page = written["report.html"].read_text(encoding="utf-8")
    found = re.search(
        rf'<figure id="{COMPARISON_FIGURE.id}"><img src="data:image/png;base64,([^"]+)"', page
    )
    assert found is not None
    assert base64.b64decode(found.group(1)).startswith(b"\x89PNG")
    assert f"<b>Figure 1. {COMPARISON_FIGURE.title}.</b>" in page
    assert "<b>Figure 2. Normalized similarity.</b>" in page


def test_comparison_figure_is_deterministic(compared: ReportComparison) -> None:
    assert comparison_figure([compared]) == comparison_figure([compared])


def test_render_html_without_comparisons_has_no_section(results: NiahResults) -> None:
    page = render_html([results], ["m"], [])
    assert 'id="comparison"' not in page and "#comparison" not in page


# -- files --------------------------------------------------------------------------------------


def test_report_writes_comparison_json(
    written: dict[str, Path], compared: ReportComparison
) -> None:
    # "lexical:tfidf" and its baseline "lexical:tfidf (base)": named by the one label rule.
    own, base = results_file_names(["lexical:tfidf", "lexical:tfidf (base)"])
    assert own.startswith("results.lexical-tfidf-") and base.startswith(
        "results.lexical-tfidf-base-"
    )
    assert sorted(written) == sorted(
        ["cases.csv", "comparison.json", "report.html", own, base, "summary.md"]
    )
    data = json.loads(written["comparison.json"].read_text(encoding="utf-8"))
    (entry,) = data["comparisons"]
    assert entry["label"] == "lexical:tfidf" and entry["baseline"] == "base.json"
    assert entry["allowances"] == ["auc:0.02", "separation:0.001"]
    assert len(entry["deltas"]) == len(compared.comparison.deltas)
    assert sum(p["cells"] for p in entry["paired"]) == sum(compared.comparison.paired.values())
    states = [v["state"] for v in entry["verdicts"]]
    assert states.count("regressed") == compared.counts()["regressed"]
    # NaN (undefined normalized similarity of one-hop lexical runs) is null, never NaN.
    assert "NaN" not in written["comparison.json"].read_text(encoding="utf-8")


def test_summary_md_holds_the_comparison(written: dict[str, Path]) -> None:
    summary = written["summary.md"].read_text(encoding="utf-8")
    headline, rest = summary.split("\n", 1)
    assert headline.startswith("# ❌ pytest-niah: ") and " gates failed (lexical:tfidf)" in headline
    assert rest.startswith("\n## Comparison: lexical:tfidf versus")
    assert "## lexical:tfidf (base)\n" in summary


# -- GitHub step summary ------------------------------------------------------------------------


@pytest.mark.integration
def test_write_report_appends_the_comparison_to_the_step_summary(
    worse: NiahResults,
    compared: ReportComparison,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    written = write_report([worse], tmp_path / "out", comparisons=[compared])
    assert step.read_text(encoding="utf-8") == written["summary.md"].read_text(encoding="utf-8")
    assert "## Comparison: lexical:tfidf versus base.json" in step.read_text(encoding="utf-8")


@pytest.mark.integration
def test_write_report_can_leave_the_step_summary_to_the_caller(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    write_report([results], tmp_path / "out", step_summary=False)
    assert not step.exists()


def test_write_step_summary_without_a_report(
    worse: NiahResults, compared: ReportComparison, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step = tmp_path / "step.md"
    step.write_bytes(b"## earlier step\nkept")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert write_step_summary([worse], ["lexical:tfidf"], [compared]) == step
    expected = step_summary_markdown([worse], ["lexical:tfidf"], [compared])
    assert expected == summary_markdown([worse], ["lexical:tfidf"], [compared])
    assert step.read_text(encoding="utf-8") == "## earlier step\nkept\n" + expected


def test_write_step_summary_does_nothing_outside_github(results: NiahResults) -> None:
    assert step_summary_path() is None
    assert check_step_summary() is None
    assert write_step_summary([results]) is None


def test_step_summary_path_reads_the_given_environment(tmp_path: Path) -> None:
    assert step_summary_path({"GITHUB_STEP_SUMMARY": str(tmp_path / "s")}) == tmp_path / "s"
    assert step_summary_path({"GITHUB_STEP_SUMMARY": ""}) is None


@pytest.mark.integration
@pytest.mark.parametrize("case", ["folder", "missing-folder"])
def test_an_unusable_step_summary_is_an_output_error(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    step = tmp_path if case == "folder" else tmp_path / "no" / "such" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    with pytest.raises(OutputError, match="GITHUB_STEP_SUMMARY") as checked:
        check_step_summary()
    assert str(step) in str(checked.value) and "Fix:" in str(checked.value)
    with pytest.raises(OutputError, match=re.escape(str(step))) as appended:
        append_step_summary("text")
    assert "Fix:" in str(appended.value)
    # The report itself is written first; the message says where.
    with pytest.raises(OutputError, match="the report itself was written to"):
        write_report([results], tmp_path / "out")
    assert (tmp_path / "out" / "summary.md").is_file()


@pytest.mark.integration
def test_an_unwritable_report_folder_is_an_output_error(
    results: NiahResults, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(OutputError, match=re.escape(str(blocker))) as raised:
        write_report([results], blocker / "report")
    assert "Fix:" in str(raised.value)
    assert blocker.read_text(encoding="utf-8") == "not a folder"
