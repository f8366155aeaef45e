"""A snapshot mismatch as one block of changed cells, the way a failed gate reads.

syrupy's own failure output is a line diff of the serialized table behind a traceback of the
test; a reviewer wants the cells: which arm, length and metric moved, from what to what.
The metric table is a fixed shape (arm/scoring -> ``L<length>`` -> metric -> number), so its
Amber text is read back into ``{"arm/scoring L128 auc": "0.912"}`` cells here.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"^\s*'(?P<key>[^']*)': dict\(\{$")
_LEAF = re.compile(r"^\s*'(?P<key>[^']*)': (?P<value>.*?),?$")
_CLOSE = re.compile(r"^\s*\}\),?$")
CELLS_SHOWN = 12  # a block a reviewer reads whole; the rest is counted


def table_cells(serialized: str) -> dict[str, str]:
    """Every leaf of a serialized metric table, keyed by its path (``arm/scoring L128 auc``)."""
    cells: dict[str, str] = {}
    path: list[str] = []
    for line in serialized.splitlines():
        if opened := _OPEN.match(line):
            path.append(opened["key"])
        elif _CLOSE.match(line):
            if path:
                path.pop()
        elif leaf := _LEAF.match(line):
            cells[" ".join([*path, leaf["key"]])] = leaf["value"].strip("'")
    return cells


def changed_cells(old: str, new: str) -> list[str]:
    """``where: old -> new`` for every cell that differs; cells only on one side say so."""
    before, after = table_cells(old), table_cells(new)
    lines = []
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key, "(absent)"), after.get(key, "(absent)")
        if was != now:
            lines.append(f"{key}: {was} -> {now}")
    return lines


def mismatch_block(title: str, old: str | None, new: str | None, name: str = "") -> str:
    """The failure text: a title line, then the changed cells (at most :data:`CELLS_SHOWN`)."""
    if old is None:
        # syrupy's own words first: users search for them.
        return (
            f"Snapshot {name!r} does not exist! No table is stored for this label yet. "
            "Fix: run once with --snapshot-update"
        )
    lines = changed_cells(old, new or "")
    shown = [f"  {line}" for line in lines[:CELLS_SHOWN]]
    if len(lines) > CELLS_SHOWN:
        shown.append(f"  ... and {len(lines) - CELLS_SHOWN} more changed cells")
    if not lines:
        shown = ["  the stored text differs in layout only (another syrupy or pytest-niah)"]
    count = f"{len(lines)} changed cell{'s' if len(lines) != 1 else ''}"
    fix = "Fix: if the change is intended, accept it with --snapshot-update"
    return "\n".join([f"{title} ({count})", *shown, f"  {fix}"])
