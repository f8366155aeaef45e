"""A baseline that measured something else is refused (pytest_niah.results.compare)."""

from __future__ import annotations

import dataclasses

import pytest
from niah_synthetic import (
    CORPUS_FINGERPRINT,
    NEEDLES_FINGERPRINT,
    changed,
    model,
    results,
    scored,
    with_cases,
)

from pytest_niah.config.gate_expressions import Allowance
from pytest_niah.config.vocabulary import COMPARED
from pytest_niah.errors import CompareError
from pytest_niah.results.compare import compare_results
from pytest_niah.results.compatibility import FIELDS, NEVER_REFUSED, check_comparable, differences
from pytest_niah.results.niah_results import NiahResults

AUC_002 = Allowance("auc", 0.02, relative=False)


def compare(current, baseline, **kwargs):
    return compare_results(current, baseline, n_resamples=200, seed=0, **kwargs)


# -- compatibility (found: another seed paired silently; corpus, needles never checked) --------


@pytest.fixture(scope="module")
def base() -> NiahResults:
    return results()


@pytest.fixture(scope="module")
def chunked() -> NiahResults:
    """A run with a chunk scoring: its effective chunk size is compared."""
    return results(scoring=("whole", "chunk-max"))


def test_every_field_the_option_names_is_compared():
    assert tuple(FIELDS) == COMPARED


@pytest.mark.parametrize("field", [f for f in COMPARED if f not in NEVER_REFUSED])
def test_a_baseline_that_measured_something_else_is_refused_naming_both_values(
    base, chunked, field
):
    baseline = chunked if field == "chunk-tokens" else base
    current = changed(baseline, field)
    [difference] = differences(current, baseline)
    assert difference.field == field
    with pytest.raises(CompareError) as info:
        compare(current, baseline, source="runs/base.json")
    message = str(info.value)
    assert f"{field}: " in message
    assert f"--niah-compare-allow={field}" in message
    assert "(runs/base.json)" in message
    mine, theirs = FIELDS[field](current), FIELDS[field](baseline)
    for value in (mine, theirs):
        text = str(value)
        assert (text[:12] if isinstance(value, str) and len(text) == 64 else text) in message
    # Allowed by name, the comparison goes on and records what it accepted.
    comparison = compare(current, baseline, allow=(field,))
    assert [d.field for d in comparison.allowed] == [field]
    assert comparison.deltas


def test_another_seed_names_both_seeds(base):
    with pytest.raises(CompareError, match=r"seed: 7 here, 42 in the baseline"):
        compare(changed(base, "seed"), base)


def test_another_corpus_or_needle_set_names_both_fingerprints(base):
    with pytest.raises(CompareError) as info:
        compare(changed(changed(base, "corpus"), "needles"), base)
    message = str(info.value)
    assert f"corpus: {'d1' * 6} here, {CORPUS_FINGERPRINT[:12]} in the baseline" in message
    assert f"needles: {'5f' * 6} here, {NEEDLES_FINGERPRINT[:12]} in the baseline" in message
    assert "--niah-compare-allow=corpus,needles" in message


def test_another_tokenizer_is_compared_naming_both(base):
    comparison = compare(changed(base, "tokenizer"), base)
    [said] = [d.describe() for d in comparison.allowed]
    assert said.startswith("tokenizer: bert-wordpiece here, word-regex-v1 in the baseline")
    assert comparison.deltas


def test_allowing_one_difference_does_not_allow_another(base):
    current = changed(changed(base, "seed"), "positions")
    with pytest.raises(CompareError) as info:
        check_comparable(current, base, allow=("seed",))
    assert "positions" in str(info.value) and "seed:" not in str(info.value)
    assert [d.field for d in check_comparable(current, base, allow=("seed", "positions"))] == [
        "seed",
        "positions",
    ]


def test_another_model_with_the_same_grid_is_comparable(base):
    other = dataclasses.replace(base, model=model("model-b", fingerprint="another"))
    assert differences(other, base) == []


def test_the_chunk_size_counts_only_with_a_chunk_scoring(base, chunked):
    # Whole-haystack scoring reads no chunk size: a different --niah-chunk-tokens is no change.
    assert (
        differences(dataclasses.replace(base, config=base.config.replace(chunk_tokens=64)), base)
        == []
    )
    # With chunks, an unset chunk size is the model's window.
    windowed = dataclasses.replace(chunked, model=model(max_tokens=64))
    explicit = dataclasses.replace(windowed, config=windowed.config.replace(chunk_tokens=64))
    assert differences(explicit, windowed) == []


def test_a_comparison_pairing_no_cell_is_refused_never_passed(base):
    cases, negatives = scored(groups=("pet-05",))
    other = results(cases, negatives)
    only_mine = with_cases(base, [c for c in base.cases if c.group_id != "pet-05"])
    with pytest.raises(CompareError, match="shares no cell"):
        compare(other, only_mine)


def test_the_refusal_of_a_grid_difference_says_what_allowing_it_does(base):
    with pytest.raises(CompareError) as info:
        compare(changed(base, "positions"), base)
    message = str(info.value)
    assert "compare with a run of the same positions, or accept the difference (only the cells" in (
        message
    )
    assert "a length where fewer than half of this run's cells pair cannot pass its gate" in message
    # A field outside the grid pairs every cell: no such caveat.
    with pytest.raises(CompareError) as info:
        compare(changed(base, "seed"), base)
    assert str(info.value).endswith(
        "Fix: compare with a run of the same seed, or accept the difference with "
        "--niah-compare-allow=seed"
    )
