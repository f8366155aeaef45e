"""One row of ``bench_gpu.py`` and how rows are shown: the table and the two targets' verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench_grid_verdicts import verdict_word

LONG = 8192  # the length the no-out-of-memory target is about


@dataclass
class Row:
    """One model and attention implementation: bare and engine, or why not."""

    model: str
    attention: str
    dtype: str
    bare: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] = field(default_factory=dict)
    inputs: str = ""
    error: str = ""
    bare_oom: bool = False
    engine_oom: bool = False

    @property
    def ratio(self) -> float | None:
        """Engine seconds over bare seconds, when both ran."""
        if "seconds" in self.bare and "seconds" in self.engine:
            return float(self.engine["seconds"]) / float(self.bare["seconds"])
        return None

    def verdict(self, target: float) -> str:
        """MET or MISSED against ``target``, OOM, or ERROR."""
        if self.bare_oom or self.engine_oom:
            return "OOM"
        if self.ratio is None:
            return "ERROR"
        return "MET" if self.ratio <= target else "MISSED"

    def to_dict(self, target: float) -> dict[str, Any]:
        """Every number of the row, for the JSON."""
        return {
            "model": self.model,
            "attention": self.attention,
            "dtype": self.dtype,
            "inputs": self.inputs,
            "bare": self.bare,
            "engine": self.engine,
            "ratio": self.ratio,
            "target": target,
            "verdict": self.verdict(target),
            "error": self.error,
            "out_of_memory": {"bare": self.bare_oom, "engine": self.engine_oom},
        }


COLUMNS = (
    ("model", "<"),
    ("attention", "<"),
    ("dtype", "<"),
    ("inputs", "<"),
    ("bare s", ">"),
    ("engine s", ">"),
    ("ratio", ">"),
    ("bare GiB", ">"),
    ("engine GiB", ">"),
    ("tok/s", ">"),
    ("verdict", "<"),
)


def _number(value: Any, digits: int) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def table(rows: list[Row], target: float) -> list[str]:
    """One line per row under a header, columns aligned."""
    cells = [
        [
            row.model,
            row.attention,
            row.dtype,
            row.inputs or "-",
            _number(row.bare.get("seconds"), 2),
            _number(row.engine.get("seconds"), 2),
            _number(row.ratio, 3),
            _number(row.bare.get("device_memory_gib"), 2),
            _number(row.engine.get("device_memory_gib"), 2),
            _number(row.engine.get("tokens_per_s"), 0),
            row.verdict(target),
        ]
        for row in rows
    ]
    names = [name for name, _ in COLUMNS]
    widths = [max(len(line[i]) for line in [names, *cells]) for i in range(len(COLUMNS))]

    def line(values: list[str]) -> str:
        parts = zip(values, COLUMNS, widths, strict=True)
        return "  ".join(f"{value:{align}{width}}" for value, (_, align), width in parts)

    lines = [line(names), "  ".join("-" * w for w in widths), *(line(c) for c in cells)]
    return [text.rstrip() for text in lines]


def verdicts(rows: list[Row], target: float, lengths: tuple[int, ...]) -> list[str]:
    """The two targets: engine over bare per row, no out-of-memory at 8K with the defaults."""
    lines = []
    for row in rows:
        what = f"engine / bare, {row.model}, {row.attention}, {row.dtype}"
        if row.ratio is not None and row.verdict(target) != "OOM":
            lines.append(verdict_word(what, row.ratio, target))
        else:
            lines.append(f"{what}: {row.verdict(target)}: {row.error}")
    defaults = [row for row in rows if row.attention.endswith("(default)")]
    for row in defaults:
        what = f"no out-of-memory at {LONG:,} tokens with the defaults, {row.model}"
        if LONG not in lengths:
            lines.append(f"{what}: not measured ({LONG} is not in --lengths)")
        else:
            lines.append(f"{what}: {'MISSED (out of memory)' if row.engine_oom else 'MET'}")
    return lines
