"""The calibration's sentences, generated from a ``bench_gates.py`` JSON as its table is.

Counts per gate (a variant, seed and length) and per run (a variant and seed, gated at every
length): the lengths of one run share its model and haystack draw, so its gates are not
independent trials, and the per-run count is the one whose interval means what it says.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from gates_report import changed, clopper_pearson, failed

METRIC_NAMES = {"auc": "AUC", "comparative_ratio": "ratio"}


def interval(hits: int, trials: int) -> str:
    """``0 of 9 (95% interval 0-34%)``."""
    low, high = clopper_pearson(hits, trials)
    return f"{hits} of {trials} (95% interval {100 * low:.0f}-{100 * high:.0f}%)"


def runs(gates: Sequence[dict[str, Any]]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The gates of each run: a variant and seed, gated at every length."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for gate in gates:
        grouped.setdefault((gate["variant"], gate["seed"]), []).append(gate)
    return grouped


def states(gates: Sequence[dict[str, Any]], metric: str) -> str:
    """How one metric's verdicts went: ``6 within allowance, 6 inconclusive (warned)``."""
    counted = Counter(tuple(g["verdicts"][metric]) for g in gates if metric in g["verdicts"])
    parts = []
    for (state, outcome), count in sorted(counted.items(), key=lambda item: -item[1]):
        parts.append(f"{count} {state}" + (f" ({outcome}ed)" if state == "inconclusive" else ""))
    return ", ".join(parts).replace("(passed)", "(passed by auto)")


def allowance_of(text: str, metric: str) -> str:
    """``0.02`` of ``auc:0.02,ratio:5%`` for ``auc``."""
    for part in text.split(","):
        name, _, value = part.partition(":")
        if name.strip() == metric:
            return value.strip()
    return "none"


def false_alarm_sentences(payload: dict[str, Any]) -> list[str]:
    """The no-ops: failed gates and runs, each with its interval, and how far each moved."""
    gates = [g for g in payload["gates"] if g["kind"] == "no-op" and changed(g)]
    if not gates:
        return ["No no-op moved a score: there is no false-alarm count."]
    grouped = runs(gates)
    names = list(dict.fromkeys(g["variant"] for g in gates))
    lengths = len({g["length"] for g in gates})
    seeds = len({g["seed"] for g in gates})
    failed_runs = sum(any(failed(g) for g in run) for run in grouped.values())
    moved = {name: max(g["max_change"] for g in gates if g["variant"] == name) for name in names}
    largest = max(moved.values())
    auc = allowance_of(payload["settings"]["allowance"], "auc")
    ratio = allowance_of(payload["settings"]["allowance"], "ratio")
    return [
        f"No-op gates that moved a score and failed: "
        f"{interval(sum(failed(g) for g in gates), len(gates))}. Those {len(gates)} gates are "
        f"{len(grouped)} runs ({len(names)} no-ops that moved a score, {', '.join(names)}, "
        f"{seeds} seed(s) each), each gated at {lengths} lengths that share the run's model "
        f"and haystack draw, so they are not independent trials: per run, "
        f"{interval(failed_runs, len(grouped))} failed.",
        "The largest change of a cosine score each no-op made: "
        + ", ".join(f"{name} {value:.1e}" for name, value in moved.items())
        + f"; the gate allows an AUC drop of {auc}"
        + (f" ({float(auc) / largest:,.0f} times the largest)" if _number(auc) else "")
        + f" and a ratio drop of {ratio}.",
    ]


def regression_sentences(payload: dict[str, Any]) -> list[str]:
    """Each planted regression: failed gates and runs, and how its verdicts went if missed."""
    gates = [g for g in payload["gates"] if g["kind"] == "regression"]
    lines = []
    for name in dict.fromkeys(g["variant"] for g in gates):
        own = [g for g in gates if g["variant"] == name]
        grouped = runs(own).values()
        caught = sum(failed(g) for g in own)
        text = (
            f"{name}: {caught} of {len(own)} gates failed "
            f"({sum(any(failed(g) for g in run) for run in grouped)} of {len(grouped)} runs)"
        )
        alone = sum(failed(g, "auc") for g in own)
        if alone != caught:
            text += f", {alone} of {len(own)} on AUC alone"
        if caught < len(own):
            verdicts = "; ".join(
                f"{METRIC_NAMES.get(metric, metric)}: {states(own, metric)}"
                for metric in ("auc", "comparative_ratio")
            )
            largest = max(g["max_change"] for g in own)
            text += f"; verdicts {verdicts}; cosine scores moved by up to {largest:.1e}"
        lines.append(f"- {text}.")
    return lines


def sentences(payload: dict[str, Any]) -> list[str]:
    """The calibration in words, every number from ``payload``."""
    settings = payload["settings"]
    head = (
        f"With `--niah-compare-fail={settings['allowance']}` and `--niah-inconclusive=auto`, "
        f"on lengths {settings['lengths']}, {settings['positions']} positions, groups "
        f"{settings['groups'] or 'all'}, orders {settings['orders']} and seeds "
        f"{settings['seeds']}:"
    )
    return [
        head,
        "",
        *false_alarm_sentences(payload),
        "",
        "Planted regressions (a gate fails on a regressed verdict, or an inconclusive one "
        "that `auto` fails):",
        "",
        *regression_sentences(payload),
    ]


def _number(text: str) -> bool:
    try:
        return float(text) > 0
    except ValueError:
        return False
