"""The pieces every pytest-niah HTML page is made of: the style sheet, tables, figures, the page.

Shared by the report (:mod:`pytest_niah.report.html`) and the history page
(:mod:`pytest_niah.report.history_view`). Every text is escaped
(:func:`~pytest_niah.report.escape.html_text`); a page references nothing outside itself.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Container, Sequence
from typing import Protocol

from pytest_niah.report.escape import html_text as escape


class Captioned(Protocol):
    """What a figure on the page needs besides its PNG: an id, a title and a caption."""

    @property
    def id(self) -> str:
        """The figure's HTML id."""

    @property
    def title(self) -> str:
        """Its title."""

    @property
    def caption(self) -> str:
        """Its caption."""


CSS = """
body { margin: 0; background: #f6f7f9; color: #1d2330;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 32px 48px; background: #fff;
  box-shadow: 0 0 12px rgba(0, 0, 0, 0.06); }
h1 { margin: 0 0 4px; font-size: 26px; }
h2 { margin: 36px 0 12px; padding-bottom: 4px; border-bottom: 2px solid #e3e6eb; font-size: 20px; }
h3 { margin: 22px 0 8px; font-size: 15px; }
.lead { margin: 0; color: #4d5566; }
nav { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 16px 0 0; font-size: 14px; }
nav a { color: #1f5fbf; text-decoration: none; white-space: nowrap; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0 8px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e6eb; text-align: left;
  white-space: nowrap; }
th { background: #f0f2f5; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums;
  font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
tbody tr:hover { background: #f8fafc; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px;
  background: #f0f2f5; padding: 1px 4px; border-radius: 3px; }
figure { margin: 20px 0 32px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #e3e6eb; }
figcaption { margin-top: 6px; color: #4d5566; font-size: 14px; }
.muted { color: #6b7385; }
ul.verdicts { margin: 4px 0 8px; padding-left: 20px; font-size: 14px; }
td.regressed { color: #b3261e; font-weight: 600; }
td.inconclusive { color: #8a5a00; }
"""


def html_page(title: str, body: Sequence[str]) -> str:
    """A whole page: ``title`` (escaped here), the style sheet, then ``body``'s HTML in order."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{escape(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            "<main>",
            *body,
            "</main>",
            "</body>",
            "</html>",
            "",
        ]
    )


def table(
    header: Sequence[str],
    body: Sequence[Sequence[str]],
    *,
    numeric_from: int = 1,
    numeric: Container[int] | None = None,
    classes: Callable[[int, str], str] | None = None,
) -> str:
    """An HTML table of escaped text.

    Columns from ``numeric_from`` on are right-aligned, or those in ``numeric`` when given;
    ``classes(column, text)`` may add a CSS class to a body cell.
    """

    def is_numeric(i: int) -> bool:
        return i in numeric if numeric is not None else i >= numeric_from

    def cells(tag: str, line: Sequence[str]) -> str:
        out = []
        for i, c in enumerate(line):
            names = ["num"] if is_numeric(i) else []
            if classes is not None and tag == "td" and (extra := classes(i, c)):
                names.append(extra)
            attr = f' class="{escape(" ".join(names))}"' if names else ""
            out.append(f"<{tag}{attr}>{escape(c)}</{tag}>")
        return "".join(out)

    rows = "\n".join(f"<tr>{cells('td', line)}</tr>" for line in body)
    return (
        f'<div class="scroll"><table>\n<thead><tr>{cells("th", header)}</tr></thead>\n'
        f"<tbody>\n{rows}\n</tbody>\n</table></div>"
    )


def figure_html(spec: Captioned, png: bytes, labels: Sequence[str], number: int) -> str:
    """One ``<figure>`` with the PNG inlined as a data URI."""
    data = base64.b64encode(png).decode("ascii")
    alt = f"{spec.title}: {', '.join(labels)}"
    caption = f"<b>Figure {number}. {escape(spec.title)}.</b> {escape(spec.caption)}"
    return (
        f'<figure id="{escape(spec.id)}">'
        f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )
