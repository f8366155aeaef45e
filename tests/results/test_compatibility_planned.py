"""A run's plan is checked against a baseline by the same rules as its finished results.

Found (issue 22, 4): a baseline that measured something else was refused only after all the
embedding. The plugin now applies :func:`check_comparable` to the run's plan
(:func:`pytest_niah.plugin.baseline_check.planned`) first; these tests hold the plan to what
the results will record.
"""

from __future__ import annotations

import dataclasses

import pytest
from niah_synthetic import model, results

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.loader import load_embedder
from pytest_niah.errors import CompareError
from pytest_niah.experiment import load_inputs, run_experiment
from pytest_niah.plugin.baseline_check import planned
from pytest_niah.results.compatibility import (
    FIELDS,
    NOT_KNOWN,
    Measured,
    check_comparable,
    differences,
)


@pytest.fixture(scope="module")
def tiny(shared_corpus_dir) -> NiahConfig:
    return NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128,),
        positions=2,
        arms=("literal",),
        groups=("dietary-01", "location-01"),
        bootstrap=0,
        scoring=("whole", "chunk-max"),
    )


def test_a_plan_reads_every_field_as_its_results_will_record_it(tiny):
    finished = run_experiment(tiny, use_cache=False, progress=False)
    embedder = load_embedder(tiny)
    plan = planned(
        tiny,
        load_inputs(tiny),
        tokenizer=embedder.tokenizer.identity,
        window=embedder.windows.document,
    )
    assert {name: get(plan) for name, get in FIELDS.items()} == {
        name: get(finished) for name, get in FIELDS.items()
    }
    assert differences(plan, finished) == []
    # Another seed in the config is refused before anything runs, naming only the seed.
    other = planned(tiny.replace(seed=7), load_inputs(tiny))
    with pytest.raises(CompareError) as info:
        check_comparable(other, finished, source="base.json")
    assert str(info.value).endswith(
        "Fix: compare with a run of the same seed, or accept the difference with "
        "--niah-compare-allow=seed"
    )


def test_a_value_not_known_before_the_model_loads_is_not_compared_yet():
    base = results(scoring=("whole", "chunk-max"))
    other = dataclasses.replace(base, model=model(tokenizer="bert-wordpiece", max_tokens=64))
    planned = dataclasses.replace(Measured.of(other), tokenizer=NOT_KNOWN, window=NOT_KNOWN)
    assert differences(planned, base) == []
    known = [d.field for d in differences(Measured.of(other), base)]
    assert known == ["chunk-tokens", "tokenizer"]


def test_only_the_tokenizer_differing_is_compared_and_said_never_refused():
    # Found (#42.5): another tokenizer was refused unless allowed by name; an upgrade across
    # model families brings one, and each run's lengths are in its own model's tokens.
    base = results()
    other = dataclasses.replace(base, model=model(tokenizer="bert-wordpiece"))
    allowed = check_comparable(other, base)
    assert [d.field for d in allowed] == ["tokenizer"]
    assert (
        allowed[0]
        .describe()
        .endswith(
            "in the baseline (the tokenizers differ: each run's lengths are in its own model's "
            "tokens)"
        )
    )
    # Allowing it by name, as before, changes nothing.
    assert check_comparable(other, base, allow=["tokenizer"]) == allowed
    # Any other difference beside it is still refused, naming that one alone.
    seeded = dataclasses.replace(other, config=dataclasses.replace(other.config, seed=7))
    with pytest.raises(CompareError, match=r"measured something else: seed: 7 here"):
        check_comparable(seeded, base)
