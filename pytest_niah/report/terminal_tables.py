"""Plain-text tables and lines for the terminal summary (at most 120 columns).

The per-length columns are shared with the markdown and HTML reports
(:func:`length_columns`), as the comparison table is
(:mod:`pytest_niah.report.comparison_table`); long explanations (a gate's numbers, what
would resolve an inconclusive verdict) go on their own lines below a table, never into it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from pytest_niah.display import fmt, signed
from pytest_niah.measure.meaningful import AT_CHANCE as AT_CHANCE  # tests, reports
from pytest_niah.measure.meaningful import MOSTLY_LEFT_OUT as MOSTLY_LEFT_OUT
from pytest_niah.measure.meaningful import NOT_MEANINGFUL, normalized_not_meaningful
from pytest_niah.measure.metrics import NORMALIZED_FLOOR
from pytest_niah.measure.records import EffectiveLength, IntervalRow, MetricRow, RetrievalRow
from pytest_niah.measure.resolve_advice import no_interval
from pytest_niah.results.niah_results import NiahResults

Cell = Callable[[MetricRow], str]
WIDTH = 120


def length_columns(results: NiahResults, arm: str, scoring: str) -> list[tuple[str, Cell]]:
    """The per-length columns of one arm and scoring (terminal table and reports share them)."""
    retrieval = {r.length: r for r in results.retrieval if (r.arm, r.scoring) == (arm, scoring)}

    def auc_cell(row: MetricRow) -> str:
        interval = results.interval(arm, row.length, "auc", scoring)
        if interval is None:
            return fmt(row.auc)
        bounds = interval_cell(row.auc, interval.low, interval.high, interval.groups, 2)
        return f"{fmt(row.auc)} {bounds}"

    def retrieved(row: MetricRow, name: str) -> str:
        found: RetrievalRow | None = retrieval.get(row.length)
        return fmt(None if found is None else getattr(found, name))

    past = past_window(results, scoring)
    return [
        ("length", lambda r: f"{r.length}{PAST_WINDOW if r.length in past else ''}"),
        ("norm.sim", lambda r: normalized_cell(r, results.interval(arm, r.length, "auc", scoring))),
        ("ratio", lambda r: fmt(r.comparative_ratio)),
        ("AUC [95% CI]", auc_cell),
        ("separation", lambda r: fmt(r.separation, 4)),
        ("effect", lambda r: fmt(r.effect_size, 2)),
        ("acc@1", lambda r: retrieved(r, "acc_at_1")),
        ("MRR", lambda r: retrieved(r, "mrr")),
        ("found", lambda r: f"{r.found}"),
        ("missed", lambda r: f"{r.missed}"),
        ("truncated", lambda r: f"{r.truncated}"),
    ]


PAST_WINDOW = "*"


def normalized_cell(row: MetricRow, auc: IntervalRow | None = None) -> str:
    """The normalized similarity, or :data:`NOT_MEANINGFUL` (:func:`normalized_not_meaningful`).

    A row with no value at all (every case left out) shows as an undefined value does.
    """
    if math.isfinite(row.normalized) and normalized_not_meaningful(row, auc) is not None:
        return NOT_MEANINGFUL
    return fmt(row.normalized)


def interval_cell(
    point: float, low: float, high: float, groups: int, digits: int, sign: str = ""
) -> str:
    """``[0.61,0.78]`` (``sign="+"``: ``[-0.02, +0.01]``), or why there is none.

    Never ``[nan,nan]``: a missing interval says why, e.g. ``(no CI: 1 needle group)``.
    """
    if math.isnan(low) or math.isnan(high):
        why = "undefined" if math.isnan(point) else no_interval(groups)
        return f"(no CI: {why})"
    if sign:
        return f"[{signed(low, digits)}, {signed(high, digits)}]"
    return f"[{fmt(low, digits)},{fmt(high, digits)}]"


def past_window(results: NiahResults, scoring: str) -> list[int]:
    """Lengths whose whole haystack is longer than the model reads (marked in tables).

    Chunked scoring embeds chunks that fit the window, so nothing is past it there.
    """
    window = results.model.max_tokens
    if window is None or scoring != "whole":
        return []
    return [n for n in results.config.lengths if n > window]


def aligned(header: Sequence[str], body: Iterable[Sequence[str]], *, left: int = 0) -> list[str]:
    """Columns joined by two spaces; the first ``left`` columns left-aligned, the rest right."""
    rows = [list(header), *(list(r) for r in body)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return [
        "  ".join(
            cell.ljust(w) if i < left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


def length_table(
    results: NiahResults,
    arm: str,
    scoring: str = "whole",
    gate: Callable[[MetricRow], str] | None = None,
) -> list[str]:
    """Aligned lines: a header, then one row per length; ``gate`` adds a status column."""
    columns: list[tuple[str, Cell]] = length_columns(results, arm, scoring)
    if gate is not None:
        columns.append(("gate", gate))
    rows = results.rows("length", arm, scoring)
    return aligned([n for n, _ in columns], ([cell(r) for _, cell in columns] for r in rows))


def window_text(results: NiahResults) -> str:
    """How much of a haystack the model reads, as a phrase."""
    window = results.model.max_tokens
    return "reads every token" if window is None else f"reads {window} tokens"


def draws_text(results: NiahResults) -> str:
    """Which haystack draws a run pooled: ``seed 42``, or ``seeds 1, 2, 3 pooled``."""
    seeds = results.config.seeds
    if not seeds:
        return f"seed {results.config.seed}"
    return f"seeds {', '.join(map(str, seeds))} pooled"


def effective_length_text(effective: EffectiveLength | None, window: int | None = None) -> str:
    """One phrase for an effective context length (empty when it was not computed).

    It never exceeds what the model reads: past ``window`` (the model's window, ``None``:
    it reads everything) the haystack's tail is never seen, so retrieval that holds there
    holds on the first ``window`` tokens only, and the phrase says ``at most`` the window.
    """
    if effective is None:
        return ""
    if effective.length is None:
        return "below the shortest length"
    if window is not None and effective.length > window:
        return (
            f"at most {window} tokens (the model's window; AUC holds to "
            f"{effective.length}-token haystacks because it reads only their start)"
        )
    return f"{effective.length} tokens"


def effective_window(results: NiahResults, scoring: str) -> int | None:
    """The window that caps an effective length: the model's, for whole-haystack scoring.

    Chunked scoring embeds chunks that fit the window, so nothing caps it there.
    """
    return results.model.max_tokens if scoring == "whole" else None


def effective_length_of(results: NiahResults, arm: str, scoring: str = "whole") -> str:
    """:func:`effective_length_text` of one arm and scoring, capped by the model's window.

    The one wording of an effective length: the terminal's title, summary.md and
    report.html all show this phrase.
    """
    window = effective_window(results, scoring)
    return effective_length_text(results.effective_length(arm, scoring), window)


def title(label: str, results: NiahResults, arm: str, scoring: str = "whole") -> str:
    """One line naming the model, arm, scoring, the model's window and the effective length.

    The window says how it is known: ``reads 200 tokens (measured)`` where the probe
    measured it (:func:`~pytest_niah.report.measured_window.measured_suffix`).
    """
    from pytest_niah.report.measured_window import measured_suffix

    name = "" if results.model.name == label else f" ({results.model.name})"
    effective = effective_length_of(results, arm, scoring)
    eff = f", effective length {effective}" if effective else ""
    reads = window_text(results) + measured_suffix(results.model)
    pooled = f", {draws_text(results)}" if results.config.seeds else ""
    return f"{label}{name}, arm {arm}, scoring {scoring}: {reads}{eff}{pooled}"


def notes(results: NiahResults, arm: str, scoring: str) -> list[str]:
    """Lines below a table: unread cases, cases left out of normalized similarity, repeats."""
    return [f"  note: {text}" for text in note_texts(results, arm, scoring)]


def note_texts(results: NiahResults, arm: str, scoring: str) -> list[str]:
    """What :func:`notes` says, one text each (summary.md and report.html show them too)."""
    rows = results.rows("length", arm, scoring)
    lines = []
    past = past_window(results, scoring)
    if past:
        lines.append(
            f"{PAST_WINDOW} past the window: at {', '.join(map(str, past))} tokens the "
            f"model reads only the first {results.model.max_tokens} tokens of each haystack"
        )
    unread = sum(r.unread for r in rows)
    if unread:
        total = sum(r.n_cases - r.duplicates - r.invalid for r in rows)
        lines.append(
            f"{unread} of {total} cases are unread (the needle lies past what the model "
            "reads): each counts one half in ratio and AUC"
        )
    excluded = sum(r.norm_excluded for r in rows)
    if excluded:
        lines.append(
            f"normalized similarity leaves out {excluded} cases whose needle alone scores "
            f"below {NORMALIZED_FLOOR:g} against its question"
        )
    hidden: dict[str, list[int]] = {}
    for r in rows:
        if math.isfinite(r.normalized):
            auc = results.interval(arm, r.length, "auc", scoring)
            why = normalized_not_meaningful(r, auc)
            if why is not None:
                hidden.setdefault(why, []).append(r.length)
    for why, lengths in hidden.items():
        lines.append(
            f"norm.sim {NOT_MEANINGFUL} (not meaningful) at {', '.join(map(str, lengths))} "
            f"tokens: {why} (a model at chance reads about 2.0 there)"
        )
    duplicates = sum(r.duplicates for r in rows)
    if duplicates:
        lines.append(f"{duplicates} cases repeat another position's haystack and are not counted")
    return lines
