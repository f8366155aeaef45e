"""Compare a run with a baseline: like with like, or refuse; paired deltas; three-state verdicts.

**Compatibility.** Two runs are compared only when they measured the same thing: the same
seed, corpus, needle and expansion sets, grid (lengths, positions, controls, orders, arms,
scorings, chunk size) and haystack tokenizer (:data:`FIELDS`). Any difference is refused,
listing each differing field with both values, unless the user allows it by name
(``--niah-compare-allow=tokenizer``), e.g. to compare models with different tokenizers.

**Pairing.** A cell is one needle haystack of the design: (needle group, arm, scoring, needle
order, length, position); a position index counts as the same cell only where both runs put
it at the same depth. Each question's negatives are the controls both runs list for it (by
id). Metrics of both runs are computed on exactly these cells and negatives, and the change's
interval comes from a paired bootstrap over needle groups.

**Coverage.** When the two models read different amounts of each haystack (windows of 254
and 126 tokens, say), a length whose haystacks extend past the smaller window, but whose
needles all sit outside the region between the two windows, cannot show the difference: its
comparison is inconclusive, whatever the interval says, and more positions would resolve it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pytest_niah.config.parsers import Allowance
from pytest_niah.errors import CompareError
from pytest_niah.measure.metrics import METRICS, QuestionScores, point_metrics
from pytest_niah.measure.records import CaseResult, NegativeScores
from pytest_niah.measure.stats import Interval, paired_bootstrap_delta
from pytest_niah.measure.tables import NegativeKey, negatives_by_key, question_scores
from pytest_niah.measure.verdicts import Verdict, compare_verdict, mde
from pytest_niah.results.niah_results import NiahResults

_Slice = tuple[str, str, int]  # (arm, scoring, length)
_CellKey = tuple[str, str, str, str, int, int, Fraction]


def _effective_chunk(r: NiahResults) -> Any:
    if all(s == "whole" for s in r.config.scoring):
        return None
    return r.config.chunk_tokens or r.model.max_tokens


# What two compared runs must share, by the name --niah-compare-allow takes.
FIELDS: dict[str, Callable[[NiahResults], Any]] = {
    "seed": lambda r: r.config.seed,
    "corpus": lambda r: r.corpus.get("fingerprint"),
    "needles": lambda r: r.needle_set.get("fingerprint"),
    "expansions": lambda r: r.needle_set.get("expansions"),
    "lengths": lambda r: list(r.config.lengths),
    "positions": lambda r: r.config.positions,
    "controls": lambda r: r.config.controls,
    "orders": lambda r: list(r.config.orders),
    "arms": lambda r: list(r.config.arms),
    "scoring": lambda r: list(r.config.scoring),
    "chunk-tokens": _effective_chunk,
    "tokenizer": lambda r: r.model.tokenizer,
}


@dataclass(frozen=True)
class Difference:
    """One field two runs disagree on."""

    field: str
    current: Any
    baseline: Any

    def describe(self) -> str:
        """``seed: 42 here, 7 in the baseline``."""
        return f"{self.field}: {_short(self.current)} here, {_short(self.baseline)} in the baseline"


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if isinstance(value, str) and len(text) == 64 else text


def differences(current: NiahResults, baseline: NiahResults) -> list[Difference]:
    """Every field of :data:`FIELDS` the two runs disagree on."""
    return [
        Difference(name, get(current), get(baseline))
        for name, get in FIELDS.items()
        if get(current) != get(baseline)
    ]


def check_comparable(
    current: NiahResults, baseline: NiahResults, *, allow: Iterable[str] = (), source: str = ""
) -> list[Difference]:
    """Refuse to compare runs that measured different things; return the allowed differences.

    Raises:
        CompareError: a field differs that ``allow`` does not name; the message lists each
            differing field with both values.
    """
    allowed = set(allow)
    found = differences(current, baseline)
    refused = [d for d in found if d.field not in allowed]
    if refused:
        where = f" ({source})" if source else ""
        raise CompareError(
            f"--niah-compare: the baseline{where} measured something else: "
            + "; ".join(d.describe() for d in refused),
            "compare with a run of the same grid, or accept the difference with "
            f"--niah-compare-allow={','.join(d.field for d in refused)}",
        )
    return [d for d in found if d.field in allowed]


@dataclass(frozen=True)
class Delta:
    """The change of one metric at one length, on the cells both runs measured.

    Attributes:
        baseline: The metric of the baseline run on the paired cells.
        current: The metric of the current run on the same cells.
        delta: ``current - baseline`` (NaN where either is undefined).
        low: Lower bound of the 95% paired-bootstrap interval of ``delta``.
        high: Upper bound.
        se: Standard error of ``delta`` (bootstrap).
        groups: Needle groups paired.
        cells: Paired cases.
        unresolved: Why the grid cannot show a change at this length (coverage), or "".
    """

    arm: str
    scoring: str
    length: int
    metric: str
    baseline: float
    current: float
    delta: float
    low: float
    high: float
    se: float
    groups: int
    cells: int
    unresolved: str = ""

    def interval(self) -> Interval:
        """The change as an :class:`Interval`."""
        return Interval(self.metric, self.delta, self.low, self.high, self.se, self.groups)

    def verdict(self, allowance: Allowance) -> Verdict:
        """The three-state verdict on this change under ``allowance``.

        A metric undefined in the baseline has nothing to fall from: within allowance.
        """
        from dataclasses import replace

        if math.isnan(self.baseline):
            return Verdict(
                kind="comparison",
                metric=self.metric,
                state="within allowance",
                point=self.delta,
                low=self.low,
                high=self.high,
                limit=allowance.allowed(self.baseline),
                mde=mde(self.se),
                groups=self.groups,
                past_limit=False,
                reason="undefined in the baseline: nothing to fall from",
            )
        verdict = compare_verdict(self.interval(), allowance.allowed(self.baseline))
        if self.unresolved and verdict.state == "within allowance":
            return replace(
                verdict,
                state="inconclusive",
                reason=self.unresolved,
                resolve="add needle positions (--niah-positions) so that some sit there",
            )
        return verdict


@dataclass(frozen=True)
class Comparison:
    """Every delta of a run against a baseline.

    Attributes:
        deltas: One per (arm, scoring, length, metric) with paired cells, in the current
            run's order, metrics in :data:`~pytest_niah.measure.metrics.METRICS` order.
        paired: Paired cells per (arm, scoring, length).
        unpaired_current: Cases of the current run that the baseline lacks.
        unpaired_baseline: Cases of the baseline that the current run lacks.
        allowed: The differences the user accepted.
    """

    deltas: tuple[Delta, ...]
    paired: dict[_Slice, int]
    unpaired_current: int
    unpaired_baseline: int
    allowed: tuple[Difference, ...] = ()

    def delta(self, arm: str, length: int, metric: str, scoring: str = "whole") -> Delta | None:
        """The delta of one metric at one length, or ``None`` when not compared."""
        for d in self.deltas:
            if (d.arm, d.scoring, d.length, d.metric) == (arm, scoring, length, metric):
                return d
        return None

    def verdicts(
        self, allowances: Sequence[Allowance], where: _Slice | None = None
    ) -> list[tuple[Delta, Verdict]]:
        """Each gated delta (of one slice, or all) with its verdict."""
        out = []
        for d in self.deltas:
            if where is not None and (d.arm, d.scoring, d.length) != where:
                continue
            for allowance in allowances:
                if allowance.metric == d.metric:
                    out.append((d, d.verdict(allowance)))
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN becomes ``null``."""
        from dataclasses import asdict

        def clean(value: Any) -> Any:
            return None if isinstance(value, float) and math.isnan(value) else value

        return {
            "deltas": [{k: clean(v) for k, v in asdict(d).items()} for d in self.deltas],
            "paired": [
                {"arm": a, "scoring": s, "length": n, "cells": c}
                for (a, s, n), c in self.paired.items()
            ],
            "unpaired_current": self.unpaired_current,
            "unpaired_baseline": self.unpaired_baseline,
            "allowed": [asdict(d) for d in self.allowed],
        }


def compare_results(
    current: NiahResults,
    baseline: NiahResults,
    *,
    n_resamples: int,
    seed: int,
    allow: Iterable[str] = (),
    source: str = "",
) -> Comparison:
    """Compare ``current`` with ``baseline`` on the cells and negatives both measured.

    Raises:
        CompareError: the runs are not comparable (see :func:`check_comparable`), or they
            share no cell at all.
    """
    allowed = check_comparable(current, baseline, allow=allow, source=source)
    cur_cells, base_cells = _cells(current), _cells(baseline)
    slices: dict[_Slice, list[_CellKey]] = defaultdict(list)
    for key, case in cur_cells.items():  # the current run's case order
        if key in base_cells:
            slices[case.arm, case.scoring, case.length].append(key)
    paired = {where: len(keys) for where, keys in slices.items()}
    if not paired:
        raise CompareError(
            f"--niah-compare: the baseline{f' ({source})' if source else ''} shares no cell "
            "with this run (no needle group, arm, order, length and position in common)",
            "compare with a run of the same needle groups and grid",
        )
    cur_negs, base_negs = negatives_by_key(current.negatives), negatives_by_key(baseline.negatives)
    deltas = []
    for where, keys in slices.items():
        cur_cases = [cur_cells[k] for k in keys]
        base_cases = [base_cells[k] for k in keys]
        shared = _shared_negatives(where, cur_cases, cur_negs, base_negs)
        cur_q = question_scores(cur_cases, cur_negs, negative_ids=shared)
        base_q = question_scores(base_cases, base_negs, negative_ids=shared)
        unresolved = _coverage(current, baseline, where, cur_cases, base_cases)
        deltas.extend(_deltas(where, len(keys), cur_q, base_q, n_resamples, seed, unresolved))
    total = sum(paired.values())
    return Comparison(
        deltas=tuple(deltas),
        paired=paired,
        unpaired_current=len(cur_cells) - total,
        unpaired_baseline=len(base_cells) - total,
        allowed=tuple(allowed),
    )


def _cells(results: NiahResults) -> dict[_CellKey, CaseResult]:
    positions = results.config.positions
    return {
        (
            c.group_id,
            c.arm,
            c.scoring,
            c.order,
            c.length,
            # The position index draws the needle's name; the depth, where it sits. Index p
            # of a grid of another size sits elsewhere (or holds another name): another cell.
            c.position,
            Fraction(c.position, positions - 1) if positions > 1 else Fraction(0),
        ): c
        for c in results.cases
    }


def _shared_negatives(
    where: _Slice,
    cases: Sequence[CaseResult],
    current: dict[NegativeKey, NegativeScores],
    baseline: dict[NegativeKey, NegativeScores],
) -> dict[str, frozenset[str]]:
    arm, scoring, length = where
    shared = {}
    for group_id in {c.group_id for c in cases}:
        key = (arm, scoring, group_id, length)
        a, b = current.get(key), baseline.get(key)
        ids_a = set(a.control_ids) if a else set()
        ids_b = set(b.control_ids) if b else set()
        shared[group_id] = frozenset(ids_a & ids_b)
    return shared


def _coverage(
    current: NiahResults,
    baseline: NiahResults,
    where: _Slice,
    cur_cases: Sequence[CaseResult],
    base_cases: Sequence[CaseResult],
) -> str:
    """Why this length cannot show a difference in what the two models read, or ""."""
    _, scoring, length = where
    a, b = current.model.max_tokens, baseline.model.max_tokens
    if a == b or scoring != "whole":
        return ""
    low = min(w for w in (a, b) if w is not None)
    high = length if a is None or b is None else min(max(a, b), length)
    needle = min((c.needle_tokens for c in cur_cases), default=0)
    if low >= min(high, length - needle + 1):
        return ""  # no needle can sit between the two windows at this length
    probed = any(low <= c.needle_offset < high for c in (*cur_cases, *base_cases))
    if probed:
        return ""
    return (
        f"the two models read {a or 'all'} and {b or 'all'} tokens, and no needle of this grid "
        f"sits between token {low} and {high} at this length"
    )


def _deltas(
    where: _Slice,
    cells: int,
    current: list[QuestionScores],
    baseline: list[QuestionScores],
    n_resamples: int,
    seed: int,
    unresolved: str,
) -> list[Delta]:
    cur, base = point_metrics(current), point_metrics(baseline)
    out = []
    for metric in METRICS:
        interval = paired_bootstrap_delta(
            current, baseline, metric=metric, n_resamples=n_resamples, seed=seed
        )
        out.append(
            Delta(
                *where,
                metric=metric,
                baseline=base[metric],
                current=cur[metric],
                delta=cur[metric] - base[metric],
                low=interval.low,
                high=interval.high,
                se=interval.se,
                groups=interval.groups,
                cells=cells,
                unresolved=unresolved,
            )
        )
    return out
