"""Issue 15 (injection): user text in report.html, summary.md and cases.csv stays text.

Labels, model names, needle names, corpus and needle-set names, baseline paths and case
problems come from the user. Each output escapes them for its format: HTML escaping,
markdown escaping (one line, no markup, table shape kept), and CSV cells that no
spreadsheet runs as a formula.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pytest_niah.report import write_report
from pytest_niah.report.escape import one_line
from pytest_niah.report.html import render_html
from pytest_niah.report.markdown_and_csv import cases_csv, markdown_table, summary_markdown
from pytest_niah.results.niah_results import NiahResults

markdown_it = pytest.importorskip("markdown_it")

SCRIPT = "<script>alert(1)</script>"
FORMULA = '=HYPERLINK("http://x","click")'
PIPES = "| a | b"
NEWLINE = "first line\n## injected heading"
HOSTILE_LABELS = [
    SCRIPT,
    FORMULA,
    PIPES,
    NEWLINE,
    "`tick` [link](http://evil.example) ![img](http://evil.example/p.png)",
    "# not a heading",
    "*bold* _em_ ~~struck~~ &amp; <b>b</b>",
    "@SUM(1+1)",
]
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def hostile_results(results: NiahResults, text: str) -> NiahResults:
    """``results`` whose model, corpus, needle set and first cases carry ``text``."""
    cases = list(results.cases)
    for index, field in enumerate(("name", "problem", "control_id", "duplicate_of")):
        cases[index] = dataclasses.replace(cases[index], **{field: text})
    return dataclasses.replace(
        results,
        model=results.model.model_copy(update={"name": text}),
        corpus={**results.corpus, "name": text},
        needle_set={**results.needle_set, "name": text},
        cases=tuple(cases),
    )


def render_markdown(markdown: str) -> str:
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return str(md.render(markdown))


class Tags(HTMLParser):
    """Every start tag of a page, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse_html(page: str) -> Tags:
    parser = Tags()
    parser.feed(page)
    parser.close()
    return parser


# -- summary.md ---------------------------------------------------------------------------------


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_summary_markdown_shows_hostile_labels_and_models_as_text(
    results: NiahResults, label: str
) -> None:
    text = summary_markdown([hostile_results(results, label)], [label])
    html = render_markdown(text)
    # Only the headings, paragraphs, tables and code spans the summary itself writes.
    for tag in ("<script", "<img", "<a ", "<em", "<strong", "<s>", "<del", "<b>", "<ul", "<ol"):
        assert tag not in html
    assert "<h1>" in html and html.count("<h2>") == 1
    sections = len(results.variants) + (results.speed is not None)  # a speed table too
    assert html.count("<h3>") == sections
    assert html.count("<table>") == sections
    flat = " ".join(one_line(label).split())
    shown = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    shown = shown.replace('"', "&quot;")
    assert f"<h2>{shown}</h2>" in html
    # The model name shows as written, and the raw markdown holds no tag either.
    assert f"<p>Model {shown} (fingerprint " in html
    assert "<script" not in text and "<img" not in text


def test_summary_markdown_keeps_each_heading_on_its_line(results: NiahResults) -> None:
    text = summary_markdown([results], [NEWLINE])
    assert "\n## injected heading" not in text
    assert "\n## first line ## injected heading\n" in text


def test_markdown_table_keeps_its_shape_with_hostile_cells() -> None:
    lines = markdown_table(["label", "n"], [[PIPES, "1"], [NEWLINE, "2"], ["`x`", "3"]])
    html = render_markdown("\n".join(lines) + "\n")
    body = html.split("<tbody>", 1)[1]
    assert body.count("<tr>") == 3 and body.count("<td") == 6
    assert re.search(r"<td[^>]*>\| a \| b</td>", body)
    assert re.search(r"<td[^>]*>first line ## injected heading</td>", body)
    assert "<code>" not in body


# -- report.html --------------------------------------------------------------------------------


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_html_shows_hostile_text_as_text(results: NiahResults, label: str) -> None:
    hostile = hostile_results(results, label)
    page = render_html([hostile], [label], [])
    parsed = parse_html(page)
    allowed = {
        "html", "head", "meta", "title", "style", "body", "main", "header", "h1", "h2", "h3",
        "p", "code", "nav", "a", "section", "div", "table", "thead", "tbody", "tr", "th", "td",
    }  # fmt: skip
    assert set(parsed.tags) <= allowed
    assert parsed.tags.count("a") == page.count('<a href="#')
    text = "".join(parsed.text)
    # Label, model, corpus and needle-set name each show as written.
    assert text.count(label) >= 4
    assert SCRIPT not in page and "<img" not in page and "<b>b</b>" not in page


def test_html_escapes_attribute_quotes(results: NiahResults) -> None:
    label = '"><script>alert(1)</script>'
    page = render_html([results], [label], [])
    assert '"><script>' not in page
    assert "&quot;&gt;&lt;script&gt;" in page


# -- cases.csv ----------------------------------------------------------------------------------


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_cases_csv_has_no_formula_cell(results: NiahResults, label: str) -> None:
    hostile = hostile_results(results, label)
    rows = csv_rows(cases_csv([hostile], [label]))
    assert len(rows) == len(results.cases)
    for row in rows:
        for name, cell in row.items():
            if cell.startswith(FORMULA_STARTS):
                float(cell)  # a number such as -0.5 may start with "-"; nothing else may
            if name == "model":
                assert cell.removeprefix("'") == label
    first = rows[0]
    assert first["name"].removeprefix("'") == label
    assert rows[1]["problem"].removeprefix("'") == label
    if label.startswith(FORMULA_STARTS):
        assert first["model"] == "'" + label and first["name"] == "'" + label


def test_cases_csv_keeps_negative_numbers_as_numbers(results: NiahResults) -> None:
    cases = list(results.cases)
    cases[0] = dataclasses.replace(cases[0], cos_qh=-0.5, cos_qn=-1e-05, name="-0.25")
    text = cases_csv([dataclasses.replace(results, cases=tuple(cases))], ["-model"])
    row = csv_rows(text)[0]
    assert row["cos_qh"] == "-0.5" and float(row["cos_qh"]) == -0.5
    assert row["cos_qn"] == "-1e-05"
    assert row["name"] == "-0.25"  # text that is just a number stays as it is
    assert row["model"] == "'-model"


# -- all outputs together -----------------------------------------------------------------------


@pytest.mark.integration
def test_written_report_escapes_every_output(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    labels = [SCRIPT, FORMULA]
    runs = [hostile_results(results, SCRIPT), hostile_results(results, FORMULA)]
    written = write_report(runs, tmp_path / "out", labels=labels)
    page = written["report.html"].read_text(encoding="utf-8")
    summary = written["summary.md"].read_text(encoding="utf-8")
    cases = written["cases.csv"].read_text(encoding="utf-8")
    assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert SCRIPT not in summary and "&lt;script&gt;alert(1)&lt;/script&gt;" in summary
    assert {row["model"] for row in csv_rows(cases)} == {SCRIPT, "'" + FORMULA}
    # Every file name stays inside the folder.
    assert all(path.parent == tmp_path / "out" for path in written.values())


@pytest.mark.integration
@pytest.mark.parametrize("label", ["$\\foo$ and $x_1$", "a\udcffb", "_underscore"])
def test_labels_that_trouble_matplotlib_still_give_a_report(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, label: str
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    written = write_report([results, results], tmp_path, labels=[label, "other"])
    page = written["report.html"].read_bytes()
    assert page.count(b"data:image/png;base64,") >= 8
    page.decode("utf-8")  # valid UTF-8, even for a lone surrogate (shown escaped)
