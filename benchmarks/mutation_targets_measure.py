"""``mutation_targets.TARGETS`` for ``measure/``: each module and the fast tests that own it.

The gates and their verdicts, chance, the scores and the metrics.
"""

from __future__ import annotations

MEASURE: dict[str, list[str]] = {
    "measure/gating.py": [
        "tests/measure/test_gating.py",  # each gating rule on its own
        "tests/measure/test_gates.py",
        "tests/measure/test_gate_records.py",
        "tests/plugin/test_gate_cell.py",
    ],
    "measure/comparison_verdicts.py": [
        "tests/measure/test_gating.py",  # delta, unpaired and slice verdicts
        "tests/measure/test_gates.py",
        "tests/measure/test_gate_records.py",
        "tests/results/test_compare_verdicts.py",
    ],
    "measure/gate_reasons.py": [
        "tests/measure/test_gating.py",
        "tests/report/test_summary_headline.py",
    ],
    "measure/chance.py": [
        "tests/measure/test_chance_rules.py",  # the edges: wholly below, 0.505, exactly 0.5
        "tests/measure/test_stats.py",
        "tests/measure/test_gating.py",
    ],
    "measure/resolve_advice.py": [
        "tests/measure/test_resolve_advice.py",
        "tests/measure/test_verdicts_rules.py",
        "tests/measure/test_verdicts.py",
    ],
    "measure/verdicts.py": [
        "tests/measure/test_verdicts_rules.py",  # the states' edges
        "tests/measure/test_verdicts.py",
        "tests/measure/test_gates.py",
        "tests/measure/test_gating.py",
        "tests/measure/test_resolve_advice.py",
    ],
    "measure/verdict_text.py": [
        "tests/measure/test_verdicts_rules.py",  # a verdict's line: why, and the fix
        "tests/measure/test_verdicts.py",
        "tests/measure/test_gating.py",
    ],
    "measure/scoring.py": [
        "tests/measure/test_scoring_rules.py",
        "tests/measure/test_truncation.py",
        "tests/measure/test_retrieval.py",
        "tests/measure/test_tables.py",
        "tests/measure/test_metrics.py",
        "tests/measure/test_maxsim_rules.py",  # maxsim
    ],
    "measure/slice_scores.py": [
        "tests/measure/test_scoring_rules.py",
        "tests/measure/test_truncation.py",
        "tests/measure/test_retrieval.py",
        "tests/measure/test_maxsim_rules.py",  # maxsim's needle-alone scores
    ],
    "measure/similarity.py": [
        "tests/measure/test_scoring_rules.py",
        "tests/measure/test_maxsim_rules.py",
        "tests/measure/test_truncation.py",
    ],
    "measure/metrics.py": [
        "tests/measure/test_metrics_rules.py",  # float dust on large scores
        "tests/measure/test_metrics.py",
        "tests/measure/test_position_effects.py",
        "tests/measure/test_question_metrics.py",
    ],
    "measure/stats.py": [
        "tests/measure/test_stats_rules.py",  # the metric checked first
        "tests/measure/test_stats.py",
        "tests/measure/test_stats_edges.py",
    ],
    "measure/meaningful.py": [
        "tests/measure/test_meaningful_rules.py",  # most cases left out
        "tests/measure/test_chance_rules.py",
        "tests/report/test_comparison_not_meaningful.py",
        "tests/results/test_compare_rules.py",
    ],
}
