"""Synthetic results for the results tests: cases, negatives and whole runs, built by hand.

A run here is a small grid (needle groups x lengths x positions, one order, one arm) whose
scores come from a seeded generator; every question is scored against the controls of all
groups of the set, as :mod:`pytest_niah.measure.scoring` scores them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from pytest_niah.config.niah import NiahConfig
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.grid import case_id, control_id
from pytest_niah.measure.metric_tables import summarize
from pytest_niah.measure.metrics import normalized_similarity
from pytest_niah.measure.records import CaseResult, NegativeScores
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.results_schema import ModelInfo

GROUPS = ("dietary-01", "location-02", "medical-03", "vehicle-04", "pet-05", "travel-06")
LENGTHS = (1024, 4096)
POSITIONS = 5
NEEDLE_TOKENS = 16
CORPUS_FINGERPRINT = "c0" * 32
NEEDLES_FINGERPRINT = "4e" * 32


def model(name: str = "model-a", max_tokens: int | None = None, **changes: object) -> ModelInfo:
    """A model's identity; ``changes`` may set ``fingerprint``, ``identity``, ``tokenizer``."""
    fields: dict[str, object] = {
        "name": name,
        "fingerprint": f"fp-{name}",
        "max_tokens": max_tokens,
        "identity": {"source": {"kind": "test", "name": name}},
        "tokenizer": "word-regex-v1",
    }
    return ModelInfo.model_validate(fields | changes)


def config(**changes: object) -> NiahConfig:
    base: dict[str, object] = {
        "model": "model-a",
        "groups": GROUPS,
        "lengths": LENGTHS,
        "positions": POSITIONS,
        "orders": ("default",),
        "arms": ("literal",),
        "bootstrap": 0,
    }
    return NiahConfig(**(base | changes))  # type: ignore[arg-type]


def default_offset(length: int, position: int, positions: int) -> int:
    """The needle's token offset: evenly spaced over the filler."""
    filler = length - NEEDLE_TOKENS
    return position * filler // (positions - 1) if positions > 1 else 0


def scored(
    *,
    seed: int = 0,
    groups: Sequence[str] = GROUPS,
    lengths: Sequence[int] = LENGTHS,
    positions: int = POSITIONS,
    arm: str = "literal",
    order: str = "default",
    gain: float = 0.3,
    offset: Callable[[int, int, int], int] = default_offset,
    cos_qn: float = 0.5,
    negative_groups: Sequence[str] = GROUPS,
) -> tuple[list[CaseResult], list[NegativeScores]]:
    """Cases and negatives of a grid; needle haystacks outscore controls by about ``gain``.

    Every group in ``negative_groups`` contributes one control per length: each question's
    negatives are its scores against all of them, whichever ``groups`` are measured.
    """
    cases: list[CaseResult] = []
    negatives: list[NegativeScores] = []
    for length in lengths:
        ids = tuple(control_id(g, length, 0) for g in negative_groups)
        for group in groups:
            # A question's scores: its own stream, the same whatever else is measured.
            own_rng = np.random.default_rng([seed, length, GROUPS.index(group)])
            controls = own_rng.uniform(0.05, 0.35, len(ids))
            negatives.append(
                NegativeScores(arm, "whole", group, length, ids, tuple(float(s) for s in controls))
            )
            own = float(controls[list(negative_groups).index(group)])
            for p in range(positions):
                cos_qh = float(own + gain + own_rng.normal(0.0, 0.1))
                cases.append(
                    make_case(
                        group,
                        cos_qh,
                        control=own,
                        arm=arm,
                        order=order,
                        length=length,
                        position=p,
                        positions=positions,
                        needle_offset=offset(length, p, positions),
                        cos_qn=cos_qn,
                    )
                )
    return cases, negatives


def make_case(
    group: str,
    cos_qh: float,
    *,
    control: float,
    arm: str = "literal",
    order: str = "default",
    length: int = 1024,
    position: int = 0,
    positions: int = POSITIONS,
    needle_offset: int | None = None,
    cos_qn: float = 0.5,
    window: int | None = None,
    unread: bool = False,
) -> CaseResult:
    """One scored needle haystack, as :mod:`pytest_niah.measure.scoring` would record it."""
    offset = default_offset(length, position, positions) if needle_offset is None else needle_offset
    filler = length - NEEDLE_TOKENS
    return CaseResult(
        id=case_id(group, arm, order, length, position),
        group_id=group,
        category=group.rsplit("-", 1)[0],
        arm=arm,
        scoring="whole",
        order=order,
        length=length,
        position=position,
        relative_position=offset / filler,
        name="Katarina",
        needle_offset=offset,
        needle_tokens=NEEDLE_TOKENS,
        truncated=window is not None and offset >= window,
        cos_qh=cos_qh,
        cos_qn=cos_qn,
        normalized=float(normalized_similarity(cos_qh, cos_qn)),
        control_score=control,
        found=cos_qh > control,
        control_id=control_id(group, length, 0),
        unread=unread,
    )


def results(
    cases: Iterable[CaseResult] | None = None,
    negatives: Iterable[NegativeScores] | None = None,
    *,
    model_info: ModelInfo | None = None,
    corpus: dict[str, object] | None = None,
    needle_set: dict[str, object] | None = None,
    **config_changes: object,
) -> NiahResults:
    """A whole run of ``cases`` (default: :func:`scored`), its tables computed as a run's."""
    if cases is None or negatives is None:
        cases, negatives = scored()
    cases, negatives = tuple(cases), tuple(negatives)
    return NiahResults(
        config=config(**config_changes),
        model=model_info or model(),
        corpus=corpus or {"name": "gutenberg", "fingerprint": CORPUS_FINGERPRINT},
        needle_set=needle_set
        or {"name": "builtin", "fingerprint": NEEDLES_FINGERPRINT, "expansions": None},
        versions={"pytest-niah": "0.0.test"},
        audit=AuditReport(10, 1, 0, (("dog", 2),)),
        cases=cases,
        negatives=negatives,
        tables=summarize(cases, negatives),
    )


def with_cases(run: NiahResults, cases: Iterable[CaseResult]) -> NiahResults:
    """``run`` with other cases (same negatives), its tables recomputed."""
    cases = tuple(cases)
    return dataclasses.replace(run, cases=cases, tables=summarize(cases, run.negatives))


def at(data: dict[str, Any], edit: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """A deep copy of a results document with ``edit`` applied (the original is left alone)."""
    data = copy.deepcopy(data)
    edit(data)
    return data


def changed(run: NiahResults, field: str) -> NiahResults:
    """``run`` (a :func:`results`) as if measured with another value of one compared field."""
    config = run.config
    if field in ("seed", "lengths", "positions", "controls", "orders", "arms", "scoring"):
        other = {
            "seed": 7,
            "lengths": (1024,),
            "positions": 3,
            "controls": 2,
            "orders": ("default", "inverted"),
            "arms": ("literal", "onehop"),
            "scoring": ("whole", "chunk-max"),
        }[field]
        return dataclasses.replace(run, config=config.replace(**{field.replace("-", "_"): other}))
    if field == "chunk-tokens":
        return dataclasses.replace(run, config=config.replace(chunk_tokens=64))
    if field == "corpus":
        return dataclasses.replace(run, corpus={**run.corpus, "fingerprint": "d1" * 32})
    if field == "needles":
        return dataclasses.replace(run, needle_set={**run.needle_set, "fingerprint": "5f" * 32})
    if field == "expansions":
        return dataclasses.replace(run, needle_set={**run.needle_set, "expansions": "e" * 64})
    if field == "tokenizer":
        return dataclasses.replace(run, model=model(tokenizer="bert-wordpiece"))
    raise AssertionError(field)


def shifted(run: NiahResults, length: int, by: float) -> NiahResults:
    """``run`` with every case of ``length`` scored ``by`` higher (lower when negative)."""
    return with_cases(
        run,
        [
            make_case(
                c.group_id,
                c.cos_qh + by,
                control=c.control_score,
                length=c.length,
                position=c.position,
            )
            if c.length == length
            else c
            for c in run.cases
        ],
    )
