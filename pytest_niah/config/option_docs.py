"""The option reference's table (``docs/reference/options.md``), written from the option table."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.config.option import Option
from pytest_niah.config.options import OPTIONS


def markdown_table(options: Sequence[Option] = OPTIONS) -> str:
    """The option table of ``docs/reference/options.md``.

    Columns: option, ini key, environment variable, default, meaning.
    """
    lines = [
        "| option | ini | env | default | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for option in options:
        flag = f"`{option.flag_name}`" + ("" if option.flag else f" `{option.metavar}`")
        ini = f"`{option.dest}`" if option.ini else ""
        env = f"`{option.env}`" if option.env else ""
        shown = option.shown_default()
        default_cell = _html(shown) if option.default_text else f"`{shown}`"
        cells = [flag, ini, env, default_cell, _html(option.described)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
