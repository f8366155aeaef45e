"""Escaping of text that came from the user, for each output format.

Model names, labels, file paths, needle-set and corpus names, needle names and problems
reach the reports. Each format gets its own escaping, so that such text always shows as
the text it is and never as markup or a formula:

- HTML (``report.html``): :func:`html_text` (``&``, ``<``, ``>``, both quotes);
- markdown (``summary.md``, the GitHub step summary, a PR comment): :func:`md_text` for
  running text and headings, :func:`md_cell` for table cells. No user text goes into a
  code span: markup cannot be escaped there, so the raw file would still hold it;
- CSV (``cases.csv``): :func:`csv_cell` defuses formula injection (OWASP "CSV Injection"):
  a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a line break gets a leading
  ``'``, while numbers, negative ones included, stay numbers;
- every file's bytes: :func:`file_bytes` shows a lone surrogate escaped.
"""

from __future__ import annotations

import html
import re

__all__ = ["csv_cell", "file_bytes", "html_text", "md_cell", "md_text", "one_line"]

# Line breaks and other control characters: a table cell, heading or list item is one line.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# Characters that start markdown or HTML constructs inline: code spans, emphasis, links and
# images, raw HTML and entities, strikethrough, table cells, escapes themselves.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]&|~])")
# Characters that a spreadsheet reads as the start of a formula (OWASP, CSV Injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
# A number, an interval of numbers or a count: nothing in it can form markup.
_NUMERIC_CELL = re.compile(r"[0-9naif+\-.,%\[\] ]*")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)")


def one_line(text: object) -> str:
    """``text`` on one line: each run of line breaks or control characters becomes a space."""
    return _CONTROL.sub(" ", str(text))


def html_text(text: object) -> str:
    """Text for HTML content or a quoted attribute value."""
    return html.escape(str(text), quote=True)


def md_text(text: object) -> str:
    r"""Text for markdown running text, a heading or a table cell, shown as written.

    Line breaks become spaces; ``<`` and ``>`` become ``&lt;`` and ``&gt;`` (no tag, no
    quote); every other character that could open markup is backslash-escaped (backticks,
    ``*``, ``_``, ``[``, ``]``, ``&``, ``|``, ``~`` and ``\`` itself), and so is a leading
    ``#``, ``+``, ``-`` or ``=`` (a heading or a list).
    """
    flat = one_line(text)
    escaped = _MD_SPECIAL.sub(r"\\\1", flat)
    # Angle brackets as entities: the file itself then holds no tag, not even an escaped one.
    escaped = escaped.replace("<", "&lt;").replace(">", "&gt;")
    if escaped[:1] in ("#", "+", "-", "="):
        escaped = "\\" + escaped
    return escaped


def md_cell(text: object) -> str:
    """Text for a markdown table cell.

    :func:`md_text`, except that a cell of numbers and intervals (``0.812 [0.78,0.84]``,
    ``-0.012``, ``nan``) is kept as written: nothing in it can form markup.
    """
    flat = one_line(text)
    return flat if _NUMERIC_CELL.fullmatch(flat) else md_text(flat)


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet shows as data, never runs as a formula.

    Numbers (``int``, ``float``, ``bool``) and ``None`` are returned as they are; so is text
    that is just a number (``-0.5``). Other text starting with ``=``, ``+``, ``-``, ``@``, a
    tab, a carriage return or a line feed gets a leading ``'``.
    """
    if not isinstance(value, str) or not value.startswith(FORMULA_START):
        return value
    if _NUMBER.fullmatch(value):
        return value
    return "'" + value


def file_bytes(text: str) -> bytes:
    """``text`` as a report file's UTF-8 bytes, a lone surrogate shown as its escape."""
    # A label from undecodable command-line bytes holds lone surrogates: show them escaped.
    return text.encode("utf-8", errors="backslashreplace")
