"""Value parsers of options and config fields (pytest_niah.config.parsers)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.config.bounded_numbers import (
    MAX_LENGTH,
    int_parser,
    optional_int_parser,
    parse_lengths,
)
from pytest_niah.config.gate_expressions import (
    Allowance,
    Thresholds,
    parse_allowances,
    parse_thresholds,
)
from pytest_niah.config.parsers import (
    choices_parser,
    named,
    parse_bool,
    parse_devices,
    parse_env_name,
    parse_json_object,
)
from pytest_niah.config.vocabulary import ARMS, METRIC_ALIASES, ORDERS
from pytest_niah.errors import ConfigError

# -- lengths ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("128,512,2048", (128, 512, 2048)),
        ("2048, 128 ,512", (128, 512, 2048)),
        ("512,128,512,128", (128, 512)),
        ("16", (16,)),
        (str(MAX_LENGTH), (MAX_LENGTH,)),
        ([4096, 128, 4096], (128, 4096)),
        (("256", "128"), (128, 256)),
    ],
)
def test_parse_lengths_sorted_unique(value, expected):
    assert parse_lengths(value) == expected


@given(st.lists(st.integers(16, MAX_LENGTH), min_size=1, max_size=20))
def test_parse_lengths_property(lengths):
    text = ",".join(map(str, lengths))
    assert parse_lengths(text) == tuple(sorted(set(lengths)))
    assert parse_lengths(lengths) == tuple(sorted(set(lengths)))


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("128,abc", "'abc' is not a whole number"),
        ("", "the list is empty"),
        (" , ", "the list is empty"),
        ([128.5], "128.5 is not a whole number"),
        ([True], "True is not a whole number"),
        ("8", "8 is out of range"),
        (str(MAX_LENGTH + 1), f"{MAX_LENGTH + 1} is out of range"),
    ],
)
def test_parse_lengths_errors_name_the_value_and_give_an_example(value, problem):
    with pytest.raises(ConfigError) as info:
        parse_lengths(value)
    assert info.value.problem.startswith(problem)
    assert "128,256,512" in info.value.hint


# -- numbers, booleans, choices -------------------------------------------------------------------


def test_int_parser_minimum_and_message():
    parse = int_parser(3)
    assert parse("3") == 3
    assert parse(7) == 7
    with pytest.raises(ConfigError, match=r"2 is too small\. Fix: give a number of at least 3"):
        parse("2")
    with pytest.raises(ConfigError, match=r"'x' is not a whole number"):
        parse("x")
    with pytest.raises(ConfigError, match=r"True is not a whole number"):
        parse(True)


@pytest.mark.parametrize("value", [None, "", "none", " None "])
def test_optional_int_parser_unset(value):
    assert optional_int_parser(8)(value) is None


def test_optional_int_parser_checks_set_values():
    assert optional_int_parser(8)("64") == 64
    with pytest.raises(ConfigError, match="too small"):
        optional_int_parser(8)("4")


@pytest.mark.parametrize(
    ("text", "value"), [("yes", True), ("ON", True), ("0", False), ("", False)]
)
def test_parse_bool(text, value):
    assert parse_bool(text) is value


def test_parse_bool_refuses_other_words():
    with pytest.raises(ConfigError, match=r"'maybe' is not a boolean\. Fix: use true or false"):
        parse_bool("maybe")


def test_choices_parser_keeps_order_and_drops_duplicates():
    assert choices_parser(ARMS)("literal, onehop,literal") == ("literal", "onehop")
    assert choices_parser(ORDERS)(["inverted"]) == ("inverted",)


def test_choices_parser_unknown_and_empty():
    with pytest.raises(ConfigError, match=r"unknown value 'twohop'\. Fix: choose from onehop, lit"):
        choices_parser(ARMS)("onehop,twohop")
    with pytest.raises(ConfigError, match=r"the list is empty\. Fix: choose from onehop"):
        choices_parser(ARMS)(" , ")


@pytest.mark.parametrize("value", ["cuda:0,cuda:1", "cpu", "auto", "mps", "cuda"])
def test_parse_devices_accepts_torch_devices(value):
    assert ",".join(parse_devices(value)) == value


@pytest.mark.parametrize("value", ["tpu", "", "auto,cpu", "cuda:x", "cuda:0,,gpu"])
def test_parse_devices_refuses_the_rest(value):
    with pytest.raises(ConfigError, match="is not valid"):
        parse_devices(value)


def test_named_prefixes_the_problem_and_keeps_the_hint():
    with pytest.raises(ConfigError) as info:
        named("--niah-positions", int_parser(1), "0")
    assert info.value.problem == "--niah-positions: 0 is too small"
    assert info.value.hint == "give a number of at least 1"


# -- thresholds -----------------------------------------------------------------------------------


def test_parse_thresholds_default_per_length_and_mixed():
    assert parse_thresholds("0.6") == Thresholds(default=0.6)
    t = parse_thresholds("1024=0.6,128=0.7")
    assert t.per_length == ((128, 0.7), (1024, 0.6))
    assert (t.at(128), t.at(256)) == (0.7, None)
    mixed = parse_thresholds("0.55, 128=0.7")
    assert (mixed.at(128), mixed.at(4096)) == (0.7, 0.55)


@pytest.mark.parametrize("value", [None, "", "none", "  NONE "])
def test_parse_thresholds_nothing_is_ungated(value):
    assert not parse_thresholds(value)


def test_parse_thresholds_from_numbers_and_mappings():
    assert parse_thresholds(0.5) == Thresholds(default=0.5)
    assert parse_thresholds({1024: 0.6, "128": 0.7}) == Thresholds(
        per_length=((128, 0.7), (1024, 0.6))
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("1.5", "1.5 is out of range"),
        ("nan", "nan is out of range"),
        ("128=x", "'x' is not a number"),
        ("x=0.5", "'x=0.5' has no whole-number length before '='"),
        ("0.5,0.6", "two default thresholds"),
        ("128=0.5,128=0.6", "length 128 is given two thresholds"),
    ],
)
def test_parse_thresholds_refuses(value, problem):
    with pytest.raises(ConfigError) as info:
        parse_thresholds(value)
    assert info.value.problem.startswith(problem)
    assert info.value.hint


thresholds = st.builds(
    Thresholds,
    default=st.one_of(st.none(), st.integers(0, 1000).map(lambda i: i / 1000)),
    per_length=st.dictionaries(
        st.integers(16, MAX_LENGTH), st.integers(0, 1000).map(lambda i: i / 1000), max_size=5
    ).map(lambda d: tuple(sorted(d.items()))),
)


@given(thresholds)
def test_thresholds_describe_round_trips_through_parse(t):
    assert parse_thresholds(t.describe()) == t


# -- JSON objects ---------------------------------------------------------------------------------


def test_parse_json_object_valid():
    assert parse_json_object('{"task": "text-matching", "n": 2}') == {
        "task": "text-matching",
        "n": 2,
    }
    assert parse_json_object("") == {}
    assert parse_json_object(None) == {}
    assert parse_json_object({"a": 1}) == {"a": 1}
    # Found (mutation seed 1704312573, parsers.py:195): a finite float at any depth of a
    # mapping is kept; only NaN and infinity are refused.
    nested = {"a": 0.5, "b": [1.25, {"c": -2.0}]}
    assert parse_json_object(nested) == nested


@pytest.mark.parametrize("value", ["[1, 2]", '"text"', "3", "null"])
def test_parse_json_object_not_an_object(value):
    with pytest.raises(ConfigError, match=r"is JSON but not an object\. Fix: wrap it in"):
        parse_json_object(value)


def test_parse_json_object_invalid_json_names_the_column_and_gives_an_example():
    with pytest.raises(ConfigError) as info:
        parse_json_object('{"task": text}')
    assert "not valid JSON" in info.value.problem and "column 10" in info.value.problem
    assert '{"task": "text-matching"}' in info.value.hint


def test_parse_json_object_deep_nesting_is_a_config_error():
    with pytest.raises(ConfigError, match="more than 32 levels deep"):
        parse_json_object("[" * 100_000)


# -- allowances (--niah-compare-fail) -----------------------------------------------------------


def test_parse_allowances_absolute_relative_and_aliases():
    assert parse_allowances("auc:0.02, RATIO:5%, d:0.1") == (
        Allowance("auc", 0.02, False),
        Allowance("comparative_ratio", 5.0, True),
        Allowance("effect_size", 0.1, False),
    )


@pytest.mark.parametrize("alias", sorted(METRIC_ALIASES))
def test_every_alias_parses(alias):
    (allowance,) = parse_allowances(f"{alias}:0.1")
    assert allowance.metric == METRIC_ALIASES[alias]


def test_allowance_amounts():
    absolute, relative = parse_allowances("auc:0.02,ratio:5%")
    assert absolute.allowed(0.8) == 0.02
    assert relative.allowed(0.8) == pytest.approx(0.04)
    assert relative.allowed(-0.8) == pytest.approx(0.04)


@given(
    st.sampled_from(sorted(METRIC_ALIASES)),
    st.integers(0, 10_000).map(lambda i: i / 100),
    st.booleans(),
)
def test_allowance_expression_round_trips(alias, amount, relative):
    (allowance,) = parse_allowances(f"{alias}:{amount}{'%' if relative else ''}")
    assert parse_allowances(allowance.expression()) == (allowance,)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "holds no expression"),
        (" , ", "holds no expression"),
        ("auc", "has no ':'"),
        ("auc=0.02", "has no ':'"),
        ("recall:0.1", "unknown metric 'recall'"),
        ("auc:", "'' is not a number"),
        ("auc:abc", "'abc' is not a number"),
        ("auc:-0.02", "finite number >= 0"),
        ("ratio:-5%", "finite number >= 0"),
        ("auc:nan", "finite number >= 0"),
        ("auc:inf", "finite number >= 0"),
        ("ratio:150%", "cannot exceed 100%"),
    ],
)
def test_bad_allowances_say_what_is_wrong(text, problem):
    with pytest.raises(ConfigError) as info:
        parse_allowances(text)
    assert problem in info.value.problem
    assert info.value.hint


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "_key", "k1"])
def test_an_environment_variable_name_is_read_as_given(name):
    assert parse_env_name(f" {name} ") == name


@pytest.mark.parametrize("value", ["sk-proj-abc123", "1KEY", "MY KEY"])
def test_anything_else_is_refused_without_repeating_it(value):
    # Found (mutation sweep, parsers.py:128 the `not` dropped): names and keys swapped.
    with pytest.raises(ConfigError) as info:
        parse_env_name(value)
    assert value not in f"{info.value.problem} {info.value.hint}"
