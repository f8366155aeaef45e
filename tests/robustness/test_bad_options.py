"""Bad option values: one usage error naming the option (or ini key) and the fix.

Values are checked while pytest parses its command line and ini file, so a bad value stops
the run before collection, whether pytest-niah is active or not.
"""

from __future__ import annotations

import re

import pytest

from pytest_niah import ConfigError, NiahConfig
from pytest_niah.config.gate_expressions import parse_thresholds

# (argument, option named in the error, fix in the error)
BAD_VALUES = [
    ("--niah-lengths=-5", "--niah-lengths", "each length must be 16..1,000,000 tokens"),
    ("--niah-lengths=8", "--niah-lengths", "each length must be 16..1,000,000 tokens"),
    ("--niah-lengths=2000000", "--niah-lengths", "each length must be 16..1,000,000 tokens"),
    ("--niah-lengths=1e3", "--niah-lengths", "'1e3' is not a whole number of tokens"),
    ("--niah-lengths=128.5", "--niah-lengths", "'128.5' is not a whole number of tokens"),
    ("--niah-lengths=128;256", "--niah-lengths", "give e.g. '128,256,512'"),
    ("--niah-lengths=,,", "--niah-lengths", "the list is empty"),
    ("--niah-positions=-1", "--niah-positions", "give a number of at least 1"),
    ("--niah-positions=1.5", "--niah-positions", "'1.5' is not a whole number"),
    ("--niah-positions=", "--niah-positions", "'' is not a whole number"),
    ("--niah-positions=ten", "--niah-positions", "'ten' is not a whole number"),
    ("--niah-arms=bogus", "--niah-arms", "unknown value 'bogus'. Fix: choose from onehop, literal"),
    ("--niah-arms=ONEHOP", "--niah-arms", "unknown value 'ONEHOP'"),
    ("--niah-arms=onehop,expand50", "--niah-arms", "unknown value 'expand50'"),
    ("--niah-arms=", "--niah-arms", "the list is empty. Fix: choose from onehop"),
    ("--niah-scoring=max", "--niah-scoring", "choose from whole, chunk-max, chunk-mean"),
    ("--niah-orders=reverse", "--niah-orders", "choose from default, inverted"),
    ("--niah-min-auc=nan", "--niah-min-auc", "give a value in 0..1"),
    ("--niah-min-auc=inf", "--niah-min-auc", "give a value in 0..1"),
    ("--niah-min-auc=-0.1", "--niah-min-auc", "give a value in 0..1"),
    ("--niah-min-auc=abc", "--niah-min-auc", "'abc' is not a number"),
    ("--niah-min-auc==0.5", "--niah-min-auc", "no whole-number length before '='"),
    ("--niah-min-auc=128=", "--niah-min-auc", "'' is not a number"),
    ("--niah-min-auc=128=1.2", "--niah-min-auc", "1.2 is out of range"),
    ("--niah-min-ratio=2", "--niah-min-ratio", "2 is out of range. Fix: give a value in 0..1"),
    ("--niah-min-ratio=x=0.5", "--niah-min-ratio", "write e.g. '128=0.7'"),
    ("--niah-inconclusive=upper", "--niah-inconclusive", "choose from auto, fail, warn, pass"),
    ("--niah-seed=-1", "--niah-seed", "give a number of at least 0"),
    ("--niah-bootstrap=-1", "--niah-bootstrap", "give a number of at least 0"),
    ("--niah-controls=0", "--niah-controls", "give a number of at least 1"),
    ("--niah-batch-size=0", "--niah-batch-size", "give a number of at least 1"),
    ("--niah-token-budget=-1", "--niah-token-budget", "give a number of at least 0"),
    ("--niah-max-seq-length=0", "--niah-max-seq-length", "give a number of at least 1"),
    ("--niah-chunk-tokens=abc", "--niah-chunk-tokens", "'abc' is not a whole number"),
    ("--niah-compare-allow=bogus", "--niah-compare-allow", "unknown value 'bogus'"),
    ("--niah-device=gpu", "--niah-device", "use auto, cpu, mps, cuda, cuda:N"),
    ("--niah-dtype=int8", "--niah-dtype", "choose from auto, float32, float16, bfloat16"),
    ("--niah-model-kwargs={nope", "--niah-model-kwargs", "is not valid JSON"),
    ("--niah-encode-kwargs=[]", "--niah-encode-kwargs", "JSON but not an object"),
]


@pytest.mark.parametrize(("arg", "option", "fix"), BAD_VALUES, ids=[v[0] for v in BAD_VALUES])
def test_bad_value_is_a_usage_error(niah_run, arg, option, fix):
    result = niah_run.run(arg)
    niah_run.assert_usage_error(result, f"argument {option}:", fix)


@pytest.mark.parametrize(
    ("arg", "option", "fix"), BAD_VALUES[::6], ids=[v[0] for v in BAD_VALUES[::6]]
)
def test_bad_value_in_a_fresh_interpreter(niah_run, arg, option, fix):
    result = niah_run.run(arg, subprocess=True)
    niah_run.assert_usage_error(result, f"argument {option}:", fix)


@pytest.mark.parametrize(
    ("key", "value", "fix"),
    [
        ("niah_lengths", "128,abc", "'abc' is not a whole number of tokens"),
        ("niah_positions", "0", "give a number of at least 1"),
        ("niah_arms", "onehop,bogus", "unknown value 'bogus'"),
        ("niah_min_auc", "128=2", "2 is out of range. Fix: give a value in 0..1"),
        ("niah_min_ratio", "lots", "'lots' is not a number"),
    ],
)
def test_bad_ini_value_names_the_ini_key(niah_run, key, value, fix):
    niah_run.pytester.makeini(f"[pytest]\n{key} = {value}\n")
    niah_run.grid = {k: v for k, v in niah_run.grid.items() if f"niah_{k}" != key}
    result = niah_run.run()
    niah_run.assert_usage_error(result, f"pytest-niah: ini option {key}:", fix)


def test_command_line_wins_over_a_bad_ini_value(niah_run):
    niah_run.pytester.makeini("[pytest]\nniah_arms = bogus\n")
    result = niah_run.run("--niah-arms=onehop", "--collect-only")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()


def test_bad_value_stops_an_inactive_run_too(niah_run):
    result = niah_run.run("--niah-positions=0", model=None, grid=False)
    niah_run.assert_usage_error(result, "argument --niah-positions:", "at least 1")


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("lengths", (8,), "each length must be 16..1,000,000 tokens"),
        ("lengths", (), "the list is empty"),
        ("lengths", (128.5,), "is not a whole number of tokens"),
        ("positions", 0, "positions: 0 is too small"),
        ("arms", ("bogus",), "arms: unknown value 'bogus'"),
        ("scoring", ("best",), "scoring: unknown value 'best'"),
        ("orders", (), "orders: the list is empty"),
        ("chunk_tokens", 4, "chunk_tokens: 4 is too small"),
        ("model", "", "model: empty"),
    ],
)
def test_bad_value_through_the_api(field, value, fragment):
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        NiahConfig(**{"model": "lexical:tfidf", field: value})


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("1.5", "1.5 is out of range"),
        ("128=x", "'x' is not a number"),
        ("nan", "out of range"),
        ("0.5,0.6", "two default thresholds (0.5 and 0.6)"),
        ("128=0.7,128=0.8", "length 128 is given two thresholds (0.7 and 0.8)"),
    ],
)
def test_bad_threshold_through_the_api(value, fragment):
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        parse_thresholds(value)


# --------------------------------------------------------------------------- silent mistakes


def test_threshold_for_a_length_not_run_is_a_usage_error(niah_run):
    result = niah_run.run("--niah-min-auc=512=0.7", "--niah-lengths=128")
    niah_run.assert_usage_error(result, "--niah-min-auc", "512")


def test_two_default_thresholds_are_a_usage_error(niah_run):
    result = niah_run.run("--niah-min-auc=0.5,0.6")
    niah_run.assert_usage_error(result, "argument --niah-min-auc:", "0.5", "0.6")


def test_one_length_twice_is_a_usage_error(niah_run):
    result = niah_run.run("--niah-min-auc=128=0.7,128=0.8")
    niah_run.assert_usage_error(result, "argument --niah-min-auc:", "128")


def test_too_small_chunk_is_named_by_its_option(niah_run):
    result = niah_run.run("--niah-chunk-tokens=4", "--niah-scoring=chunk-max")
    niah_run.assert_usage_error(result, "--niah-chunk-tokens", "at least 8")
