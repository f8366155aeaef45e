"""Escaping user text for each output format (pytest_niah.report.escape), issue 15 class 8."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.report.escape import csv_cell, html_text, md_cell, md_text, one_line

markdown_it = pytest.importorskip("markdown_it")

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '=HYPERLINK("http://x","click")',
    "| a | b",
    "a | b | c",
    "line one\nline two",
    "carriage\rreturn",
    "`code` and ``more``",
    "[click](http://evil.example)",
    "![pixel](http://evil.example/p.png)",
    "[x]: http://evil.example",
    "# heading",
    "> quote",
    "- item",
    "+1-2",
    "1. first",
    "*bold* and _em_ and ~~gone~~",
    "&lt;b&gt; &amp; entity",
    "back\\slash\\",
    "$\\alpha$",
    "<!-- comment -->",
    "",
]


def render(markdown: str) -> str:
    """GitHub-like rendering: CommonMark with tables and strikethrough."""
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return str(md.render(markdown))


def as_html_text(text: str) -> str:
    """What a markdown renderer writes for plain text (it escapes & < > and ")."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_in_a_heading_renders_as_the_text_itself(text: str) -> None:
    html = render(f"## {md_text(text)}\n")
    expected = as_html_text(" ".join(one_line(text).split()))
    assert html == (f"<h2>{expected}</h2>\n" if expected else "<h2></h2>\n")


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_in_running_text_adds_no_markup(text: str) -> None:
    html = render(f"Model {md_text(text)} ran.\n")
    assert html == f"<p>Model {as_html_text(one_line(text))} ran.</p>\n"


@pytest.mark.parametrize("text", HOSTILE)
def test_md_cell_keeps_the_table_shape(text: str) -> None:
    table = f"| name | n |\n| :--- | --: |\n| {md_cell(text)} | 1 |\n"
    html = render(table)
    body = html.split("<tbody>", 1)[1]
    assert body.count("<td") == 2
    assert f">{as_html_text(one_line(text).strip())}</td>" in body
    for tag in ("<script", "<img", "<a ", "<em", "<strong", "<code", "<s>", "<del"):
        assert tag not in html


def test_numeric_cells_are_kept_as_written() -> None:
    for cell in ("0.812 [0.78,0.84]", "-0.012", "+0.003", "[+0.00, -0.01]", "nan", "1,024", "5%"):
        assert md_cell(cell) == cell
    assert md_cell("[x](y)") == "\\[x\\](y)"


def test_one_line_removes_every_line_break() -> None:
    assert one_line("a\nb\r\nc\rd\u2028e\x85f\tg") == "a b c d e f g"


def test_html_text_escapes_markup_and_quotes() -> None:
    assert html_text("<a href=\"x\" title='y'>&</a>") == (
        "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;"
    )


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd", "'+cmd"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\tTAB", "'\tTAB"),
        ("\rCR", "'\rCR"),
        ("\nLF", "'\nLF"),
        ("-0.5", "-0.5"),
        ("+1", "+1"),
        ("-1e-05", "-1e-05"),
        ("-inf", "-inf"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        (-0.5, -0.5),
        (-3, -3),
        (None, None),
        (True, True),
    ],
)
def test_csv_cell_defuses_formulas_and_keeps_numbers(value: object, cell: object) -> None:
    assert csv_cell(value) == cell


@given(st.text())
def test_csv_cell_never_starts_a_formula(text: str) -> None:
    cell = csv_cell(text)
    assert isinstance(cell, str)
    if cell.startswith(("=", "+", "-", "@", "\t", "\r", "\n")):
        float(cell)  # only a plain number may start so
    assert cell in (text, "'" + text)
    # Through the csv module and back, the cell is unchanged.
    buffer = io.StringIO()
    csv.writer(buffer).writerow([cell, 1])
    assert next(csv.reader(io.StringIO(buffer.getvalue()))) == [cell, "1"]


@given(st.text())
def test_md_text_is_always_one_line_and_never_opens_html(text: str) -> None:
    escaped = md_text(text)
    assert "\n" not in escaped and "\r" not in escaped
    html = render(f"## {escaped}\n")
    assert html.count("<h2>") == 1
    assert "<" not in html.removeprefix("<h2>").removesuffix("</h2>\n")
