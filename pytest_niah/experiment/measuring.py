"""Measuring a run: where every haystack's vectors are (its layout), then the study's metrics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.vector_table import VectorTable
from pytest_niah.experiment.planning import Planning
from pytest_niah.experiment.run_inputs import Inputs, needle_kind
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.plan import Plan
from pytest_niah.inputs.needles import NeedleGroup
from pytest_niah.measure.metric_tables import negatives_by_key, question_scores, summarize
from pytest_niah.measure.records import EffectiveLength, IntervalRow, MetricRow
from pytest_niah.measure.scoring import ArmQuestions, Rows, RunScoring, score_slice
from pytest_niah.measure.similarity import Scored
from pytest_niah.measure.stats import bootstrap_intervals, effective_length
from pytest_niah.results.niah_results import NiahResults, package_versions
from pytest_niah.results.results_schema import ModelInfo, WindowProbe


@dataclass(frozen=True)
class Layout:
    """Everything measuring a run needs besides its vectors (what a shard part carries).

    Attributes:
        plan: The haystacks and which inputs score each.
        questions: (arm, group id) -> the question text embedded for it.
        model: The model's identity, window and tokenizer.
        corpus: The corpus's name, fingerprint and books.
        needle_set: The needle set's name, source, fingerprint, groups, expansions.
        audit: What the leak audit saw while building the haystacks.
    """

    plan: Plan
    questions: dict[tuple[str, str], str]
    model: ModelInfo
    corpus: dict[str, Any]
    needle_set: dict[str, Any]
    audit: AuditReport

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "plan": self.plan.to_dict(),
            "questions": [[arm, group, text] for (arm, group), text in self.questions.items()],
            "model": self.model.model_dump(mode="json"),
            "corpus": self.corpus,
            "needle_set": self.needle_set,
            "audit": self.audit.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Layout:
        """Inverse of :meth:`to_dict`."""
        return cls(
            plan=Plan.from_dict(data["plan"]),
            questions={(arm, group): text for arm, group, text in data["questions"]},
            model=ModelInfo.model_validate(data["model"]),
            corpus=dict(data["corpus"]),
            needle_set=dict(data["needle_set"]),
            audit=AuditReport.from_dict(data["audit"]),
        )


def layout_of(planning: Planning, inputs: Inputs, embedder: Embedder) -> Layout:
    """The layout of a fully planned run (read after the model loaded: its final identity)."""
    identity = embedder.identity
    measured = planning.measured
    probe = None
    if measured is not None:
        probe = WindowProbe(declared=measured.declared, probed=measured.probed, note=measured.note)
    return Layout(
        plan=planning.plan,
        questions=planning.questions,
        model=ModelInfo(
            name=embedder.name,
            fingerprint=identity.digest,
            max_tokens=planning.window,
            identity=dict(identity.parts),
            tokenizer=planning.tokenizer.identity,
            measured_window=measured.window if measured is not None else None,
            window_probe=probe,
        ),
        corpus={
            "name": inputs.corpus.name,
            "fingerprint": inputs.corpus.fingerprint(),
            "books": [b.name for b in inputs.corpus.books],
        },
        needle_set={
            "name": inputs.needle_set.name,
            "source": inputs.needle_set.source,
            "fingerprint": inputs.needle_set.fingerprint(),
            "groups": len(inputs.selected.groups),
            "expansions": inputs.expansions.fingerprint() if inputs.expansions else None,
        },
        audit=planning.builder.audit(),
    )


def measure(
    config: NiahConfig, groups: Sequence[NeedleGroup], layout: Layout, vectors: VectorTable
) -> NiahResults:
    """Scores, tables and intervals of a planned and embedded run: its results."""
    plan, questions, window = layout.plan, layout.questions, layout.model.max_tokens
    scored = Scored.of(vectors.matrix, vectors.index, vectors.multi)
    run = RunScoring(scored, plan, groups, config.orders, window, config.draws)
    arms = [
        ArmQuestions(
            arm, needle_kind(arm), {g.id: plan.queries[questions[arm, g.id]] for g in groups}
        )
        for arm in config.arms
    ]
    collected = Rows.joined(
        score_slice(run, arm, scoring, length)
        for arm in arms
        for scoring in config.scoring
        for length in config.lengths
    )
    tables = summarize(collected.cases, collected.negatives)
    intervals = _intervals(config, collected) if config.bootstrap else ()
    return NiahResults(
        config=config,
        model=layout.model.model_copy(update={"name": config.model}),
        corpus=layout.corpus,
        needle_set=layout.needle_set,
        versions=package_versions(),
        audit=layout.audit,
        cases=tuple(collected.cases),
        negatives=tuple(collected.negatives),
        tables=tables,
        intervals=intervals,
        retrieval=tuple(collected.retrieval),
        effective_lengths=_effective_lengths(config, tables, intervals),
        placement=_placement_summary(plan),
    )


def _intervals(config: NiahConfig, collected: Rows) -> tuple[IntervalRow, ...]:
    negatives = negatives_by_key(collected.negatives)
    slices: dict[tuple[str, str, int], list[Any]] = {}
    for case in collected.cases:
        slices.setdefault((case.arm, case.scoring, case.length), []).append(case)
    rows: list[IntervalRow] = []
    for (arm, scoring, length), cases in slices.items():
        found = bootstrap_intervals(
            question_scores(cases, negatives), n_resamples=config.bootstrap, seed=config.seed
        )
        rows.extend(
            IntervalRow(arm, scoring, length, m, i.point, i.low, i.high, i.se, i.groups)
            for m, i in found.items()
        )
    return tuple(rows)


def _effective_lengths(
    config: NiahConfig, tables: Sequence[MetricRow], intervals: Sequence[IntervalRow]
) -> tuple[EffectiveLength, ...]:
    low = {(r.arm, r.scoring, r.length): r.low for r in intervals if r.metric == "auc"}
    out = []
    for arm in config.arms:
        for scoring in config.scoring:
            rows = sorted(
                (r for r in tables if (r.by, r.arm, r.scoring) == ("length", arm, scoring)),
                key=lambda r: r.length,
            )
            if not rows:
                continue
            # Without bootstrap intervals the point AUC stands in for the lower bound.
            lows = [low.get((arm, scoring, r.length), r.auc) for r in rows]
            best = effective_length([r.length for r in rows], [r.auc for r in rows], lows)
            out.append(EffectiveLength(arm, scoring, best, rows[0].auc))
    return tuple(out)


def _placement_summary(plan: Plan) -> dict[str, Any]:
    """Per length: needle sets placed between sentences, between words, and shared offsets."""
    summary: dict[str, dict[str, int]] = {}
    for _, length, _, between in plan.placements:
        entry = summary.setdefault(str(length), {"sentences": 0, "words": 0, "duplicates": 0})
        entry[between] += 1
    for planned in plan.haystacks:
        if planned.haystack.duplicate_position is not None:
            summary[str(planned.haystack.length)]["duplicates"] += 1
    return summary
