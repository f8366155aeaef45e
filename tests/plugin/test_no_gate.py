"""No silent pass: a run that gates nothing says so, with the gates it would support.

Issue 32.5 / 31.5: the suggestion covers AUC and comparative ratio, and where a model is at
chance (an interval reaching 0.5) it suggests no threshold, which would pass a random model.
"""

from __future__ import annotations

import re

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import run_experiment
from pytest_niah.plugin.terminal_summary import gate_suggestion

HEAD = (
    "pytest-niah: nothing was gated (no threshold, no baseline allowance): this run "
    "checked nothing. "
)
LINE = re.compile(
    re.escape(HEAD) + r"Its own 95% intervals support (--niah-min-auc=\S+) (--niah-min-ratio=\S+) "
    r"\(per length"
)
THRESHOLDS = re.compile(r"(\d+)=(0\.\d\d|1\.00)")


def _ungated(outlines: list[str]) -> list[str]:
    return [line for line in outlines if line.startswith(HEAD)]


def test_a_run_without_gates_ends_with_one_line_and_the_flags_that_would_gate_it(niah):
    result = niah.run("--niah-arms=literal", "-q")
    assert result.ret == 0
    found = [m for line in result.outlines if (m := LINE.match(line))]
    assert len(found) == 1, result.stdout.str()
    auc, ratio = found[0].group(1), found[0].group(2)
    for flag in (auc, ratio):
        values = THRESHOLDS.findall(flag)
        assert [n for n, _ in values] == ["128", "256"], flag
        assert all(float(v) > 0.5 for _, v in values), flag
    # The suggested thresholds are what these results support: the same grid passes them.
    gated = niah.run("--niah-arms=literal", auc, ratio, "-q")
    n_cases, n_gates = niah.n_cases // 2, niah.n_gates // 2
    gated.assert_outcomes(passed=n_cases + n_gates)
    assert "nothing was gated" not in gated.stdout.str()


def test_an_arm_at_chance_gets_no_threshold_below_half_but_says_so(niah):
    # TF-IDF misses every one-hop needle: that arm is at chance at both lengths.
    result = niah.run("-q")
    [line] = _ungated(result.outlines)
    assert "At chance: no useful gate at 128 (onehop), 256 (onehop)" in line, line
    assert "passes a random model too" in line
    assert "--niah-min-auc" not in line and "--niah-min-ratio" not in line, line


def test_a_gated_run_has_no_such_line(niah):
    result = niah.run("--niah-min-auc=0.1")
    assert "nothing was gated" not in result.stdout.str()


def _run(shared_corpus_dir, model: str, embedder: object = None):  # type: ignore[no-untyped-def]
    config = NiahConfig(
        model=model,
        corpus=str(shared_corpus_dir),
        lengths=(128, 256),
        positions=3,
        arms=("literal",),
        bootstrap=50,
        groups=("dietary-01", "location-02", "medical-03", "vehicle-04"),
    )
    return run_experiment(config, embedder=embedder)  # type: ignore[arg-type]


def test_a_model_at_chance_is_told_no_gate_is_useful_and_which_model(
    shared_corpus_dir, hashing_embedder
):
    # A 2-dimensional hashing model can not tell needles apart; TF-IDF finds literal ones.
    chance = _run(shared_corpus_dir, "hashing", hashing_embedder(None, dim=2))
    reading = _run(shared_corpus_dir, "lexical:tfidf")
    assert all(r.low <= 0.5 for r in chance.intervals if r.metric == "auc")
    alone = gate_suggestion({"random": chance})
    assert alone.startswith("At chance: no useful gate at 128 (literal), 256 (literal)")
    assert "--niah-min" not in alone
    both = gate_suggestion({"random": chance, "reads": reading})
    assert "At chance: no useful gate at 128 (random: literal), 256 (random: literal)" in both
    assert "reads:" not in both and "--niah-min" not in both
    good = gate_suggestion({"reads": reading})
    assert good.startswith("Its own 95% intervals support --niah-min-auc=128=")
    assert " --niah-min-ratio=128=" in good and "At chance" not in good
