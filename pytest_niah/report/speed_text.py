"""The model's speed in words: one terminal line and a markdown table (measurements only).

Speed is shown beside the metrics, never as a verdict: nothing here reaches a gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.speed_record import LengthSpeed, SpeedRecord

CACHED = "cached"
"""Shown for a length the model did not embed (every input came from the cache)."""


def rate_text(entry: LengthSpeed | None) -> str:
    """``12,345`` tokens/s, ``cached``, or ``-`` when not recorded."""
    if entry is None:
        return "-"
    if entry.tokens_per_second is None:
        return CACHED if entry.cached else "-"
    return f"{entry.tokens_per_second:,.0f}"


def latency_text(speed: SpeedRecord) -> str | None:
    """``request latency p50 0.012 s, p95 0.031 s (40 requests)``, for a served model."""
    latency = speed.latency
    if latency is None:
        return None
    return (
        f"request latency p50 {latency.p50_seconds:.3f} s, p95 {latency.p95_seconds:.3f} s "
        f"({latency.requests:,} requests)"
    )


def speed_line(results: NiahResults, *, reused: bool = False) -> str | None:
    """The terminal's speed line, or ``None`` when the results carry no speed record.

    Args:
        results: The run's results.
        reused: The results came from the results cache: the figures are from the run
            that computed them.
    """
    speed = results.speed
    if speed is None or not speed.lengths:
        return None
    cells = ", ".join(f"{entry.length}: {rate_text(entry)}" for entry in speed.lengths)
    line = f"speed (tokens/s of model time, per length): {cells}"
    latency = latency_text(speed)
    if latency is not None:
        line += f"; {latency}"
    if reused:
        line += " (measured by the run that computed these results)"
    return line


NOT_RECORDED = (
    "speed (tokens/s of model time, per length): not measured by this run: its results were "
    "reused from an earlier run that did not record speed, so nothing was embedded (the "
    "test_speed benchmarks timed the model; --niah-no-cache measures the run's own)"
)
"""The terminal's line where ``--niah-speed`` was given but the results carry no speed."""


def speed_test_line(tests: Mapping[int, Mapping[str, Any]]) -> str | None:
    """What test_speed measured per length, beside the run's own tokens/s; ``None``: nothing.

    ``tests`` maps a length to its benchmark's ``extra_info``: tokens/s (the median round),
    the rounds' spread (half the interquartile range, relative), the run's own tokens/s and
    tokens per reference workload in CPU time (the model's speed in units of this machine's,
    which another process's load does not stretch), and its change versus each run
    ``--niah-speed-fail`` compared it with.
    """
    if not tests:
        return None
    cells = []
    for length, info in sorted(tests.items()):
        rate, run = info.get("tokens_per_second"), info.get("run_tokens_per_second")
        text = f"{length}: {rate:,.0f}" if rate else f"{length}: -"
        spread = info.get("spread")
        text += f" ±{spread:.0%}" if spread is not None else ""
        text += f" (run {run:,.0f})" if run else ""
        relative = info.get("relative_speed")
        if relative:  # 3 significant digits: a transformer does ~3 tokens per reference
            text += f", {relative:,.0f}" if relative >= 100 else f", {relative:.3g}"
            text += " per reference"
        for compared in info.get("speed_compared", ()):  # --niah-speed-fail's comparisons
            text += f" ({compared['change']:+.1%} vs {compared['run']})"
        cells.append(text)
    rounds = min(int(info.get("rounds", 0)) for info in tests.values())
    return (
        f"speed test (tokens/s of model time, median of >= {rounds} rounds after a warm-up; "
        f"tokens per reference workload, in CPU time): {'; '.join(cells)}"
    )


def speed_markdown(results: NiahResults, baseline: NiahResults | None = None) -> list[str]:
    """A markdown table of tokens/s per length (the baseline's beside it), or no lines."""
    speed = results.speed
    if speed is None or not speed.lengths:
        return []
    base = baseline.speed if baseline is not None else None
    header = "| haystack length | tokens embedded | model seconds | tokens/s |"
    header += " baseline tokens/s |" if base else ""
    rule = "| ---: | ---: | ---: | ---: |" + (" ---: |" if base else "")
    lines = [header, rule]
    for entry in speed.lengths:
        row = f"| {entry.length} | {entry.tokens:,} | {entry.seconds:.3f} | {rate_text(entry)} |"
        if base is not None:
            row += f" {rate_text(base.at(entry.length))} |"
        lines.append(row)
    latency = latency_text(speed)
    if latency is not None:
        lines += ["", latency[:1].upper() + latency[1:] + "."]
    return lines
