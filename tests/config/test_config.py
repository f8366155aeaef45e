"""Config parsers and the frozen NiahConfig (pytest_niah.config.niah)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_niah.config.niah import (
    ARMS,
    DEFAULT_LENGTHS,
    MAX_LENGTH,
    ORDERS,
    ConfigError,
    ModelSpec,
    NiahConfig,
    Thresholds,
    default_label,
    parse_choices,
    parse_json_object,
    parse_lengths,
    parse_thresholds,
)

DET = settings(derandomize=True, database=None, deadline=None, max_examples=60)

# -- parse_lengths --------------------------------------------------------------------------


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


@DET
@given(st.lists(st.integers(16, MAX_LENGTH), min_size=1, max_size=20))
def test_parse_lengths_property(lengths):
    text = ",".join(map(str, lengths))
    assert parse_lengths(text) == tuple(sorted(set(lengths)))
    assert parse_lengths(lengths) == tuple(sorted(set(lengths)))


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("128,abc", "'abc' is not a whole number"),
        ("128.5", "'128.5' is not a whole number"),
        ("", "empty"),
        (" , ", "empty"),
        ([], "empty"),
    ],
)
def test_parse_lengths_errors_say_what_is_wrong_and_give_an_example(value, what):
    with pytest.raises(ConfigError) as info:
        parse_lengths(value)
    message = str(info.value)
    assert message.startswith("haystack lengths:")
    assert what in message
    assert "e.g. '128,256,512'" in message


@pytest.mark.parametrize(("value", "bad"), [("8", "8"), ("128,15", "15"), ("1000001", "1000001")])
def test_parse_lengths_out_of_range_names_value_and_range(value, bad):
    with pytest.raises(ConfigError, match=rf"{bad} is out of range.*16\.\.{MAX_LENGTH}"):
        parse_lengths(value)


def test_parse_lengths_out_of_range_message_gives_an_example():
    with pytest.raises(ConfigError, match=r"e\.g\."):
        parse_lengths("8")


def test_parse_lengths_rejects_non_integral_numbers():
    with pytest.raises(ConfigError):
        parse_lengths([128.5])


# -- parse_thresholds -----------------------------------------------------------------------


def test_parse_thresholds_single_value():
    t = parse_thresholds("0.6", what="--niah-min-auc")
    assert t == Thresholds(default=0.6)
    assert t.at(128) == 0.6
    assert t.at(8192) == 0.6
    assert bool(t)


def test_parse_thresholds_per_length():
    t = parse_thresholds("1024=0.6,128=0.7", what="--niah-min-auc")
    assert t == Thresholds(default=None, per_length=((128, 0.7), (1024, 0.6)))
    assert t.at(128) == 0.7
    assert t.at(1024) == 0.6
    assert t.at(512) is None


def test_parse_thresholds_mixed_default_and_override():
    t = parse_thresholds("0.55, 128=0.7", what="--niah-min-auc")
    assert t.default == 0.55
    assert t.at(128) == 0.7
    assert t.at(256) == 0.55


@pytest.mark.parametrize("value", [None, ""])
def test_parse_thresholds_nothing_is_ungated(value):
    t = parse_thresholds(value, what="x")
    assert t == Thresholds()
    assert not t
    assert t.at(128) is None
    assert t.describe() == "none"


def test_parse_thresholds_from_numbers_and_mappings():
    assert parse_thresholds(0.5, what="x") == Thresholds(default=0.5)
    assert parse_thresholds(1, what="x") == Thresholds(default=1.0)
    assert parse_thresholds({1024: 0.6, "128": 0.7}, what="x") == Thresholds(
        per_length=((128, 0.7), (1024, 0.6))
    )
    t = Thresholds(default=0.1)
    assert parse_thresholds(t, what="x") is t


@pytest.mark.parametrize("value", ["1.5", "-0.1", "128=1.01", "0.5,256=-1", "nan", "inf", 2.0])
def test_parse_thresholds_out_of_range(value):
    with pytest.raises(
        ConfigError, match=r"--niah-min-ratio: .*out of range; give a value in 0\.\.1"
    ):
        parse_thresholds(value, what="--niah-min-ratio")


def test_parse_thresholds_malformed_value():
    with pytest.raises(ConfigError, match=r"--niah-min-auc: 'x' is not a number"):
        parse_thresholds("128=x", what="--niah-min-auc")


@pytest.mark.parametrize("value", ["x=0.5", "=0.5", "1e3=0.5"])
def test_parse_thresholds_malformed_length(value):
    with pytest.raises(ConfigError) as info:
        parse_thresholds(value, what="--niah-min-auc")
    message = str(info.value)
    assert repr(value) in message
    assert "no whole-number length before '='" in message
    assert "128=0.7" in message  # the example


thresholds = st.builds(
    Thresholds,
    default=st.one_of(st.none(), st.integers(0, 1000).map(lambda i: i / 1000)),
    per_length=st.dictionaries(
        st.integers(16, MAX_LENGTH), st.integers(0, 1000).map(lambda i: i / 1000), max_size=5
    ).map(lambda d: tuple(sorted(d.items()))),
)


@DET
@given(thresholds)
def test_thresholds_describe_round_trips_through_parse(t):
    if not t:
        return  # see test_empty_thresholds_describe_round_trips
    again = parse_thresholds(t.describe(), what="x")
    assert again == t
    for length in [16, 128, 1024, *dict(t.per_length)]:
        assert again.at(length) == t.at(length)
        expected = dict(t.per_length).get(length, t.default)
        assert t.at(length) == expected


def test_empty_thresholds_describe_round_trips():
    assert parse_thresholds(Thresholds().describe(), what="x") == Thresholds()


def test_thresholds_describe_keeps_every_digit():
    t = Thresholds(default=0.1234567, per_length=((128, 0.7654321),))
    assert parse_thresholds(t.describe(), what="x") == t


# -- parse_json_object / parse_choices ------------------------------------------------------


def test_parse_json_object_valid():
    assert parse_json_object('{"task": "text-matching", "n": 2}', what="w") == {
        "task": "text-matching",
        "n": 2,
    }
    assert parse_json_object("", what="w") == {}
    assert parse_json_object(None, what="w") == {}
    assert parse_json_object({"a": 1}, what="w") == {"a": 1}


@pytest.mark.parametrize("value", ["[1, 2]", '"text"', "3", "null"])
def test_parse_json_object_not_an_object(value):
    with pytest.raises(ConfigError, match=r"--niah-model-kwargs: .* is JSON but not an object"):
        parse_json_object(value, what="--niah-model-kwargs")


def test_parse_json_object_invalid_json_names_the_column():
    with pytest.raises(ConfigError) as info:
        parse_json_object('{"task": text}', what="--niah-encode-kwargs")
    message = str(info.value)
    assert message.startswith("--niah-encode-kwargs: ")
    assert "not valid JSON" in message
    assert "column 10" in message
    assert '{"task": "text-matching"}' in message  # the example


def test_parse_choices_keeps_order_and_drops_duplicates():
    assert parse_choices("literal, onehop,literal", what="arms", choices=ARMS) == (
        "literal",
        "onehop",
    )
    assert parse_choices(["inverted"], what="orders", choices=ORDERS) == ("inverted",)


def test_parse_choices_unknown_and_empty():
    with pytest.raises(ConfigError, match=r"arms: unknown value 'twohop'; choose from onehop, lit"):
        parse_choices("onehop,twohop", what="arms", choices=ARMS)
    with pytest.raises(ConfigError, match=r"arms: the list is empty; choose from onehop"):
        parse_choices(" , ", what="arms", choices=ARMS)


# -- ModelSpec ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "label", "name"),
    [
        ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", None),
        ("org/name", "name", None),
        ("packaged-minilm", "packaged-minilm", None),
        ("lexical:tfidf", "lexical-tfidf", None),
        (
            "mini=sentence-transformers/all-MiniLM-L6-v2",
            "mini",
            "sentence-transformers/all-MiniLM-L6-v2",
        ),
        ("v3=/data/models/jina", "v3", "/data/models/jina"),
        ("/data/jina-v3/model", "jina-v3-model", None),
        ("/data/jina-v3/model/", "jina-v3-model", None),
        ("runs/exp1/snapshot", "exp1-snapshot", None),
        ("  org/name  ", "name", "org/name"),
    ],
)
def test_model_spec_parse(value, label, name):
    spec = ModelSpec.parse(value)
    assert spec.label == label
    assert spec.name == (name or value.strip())


@pytest.mark.parametrize("value", ["", "   "])
def test_model_spec_parse_empty_is_an_error(value):
    with pytest.raises(ConfigError, match="--niah-model: empty model name"):
        ModelSpec.parse(value)


def test_default_label_windows_path_ending_in_model():
    assert default_label(r"C:\models\jina\model") == "jina-model"


# -- NiahConfig -----------------------------------------------------------------------------


def test_niah_config_defaults_and_normalization():
    config = NiahConfig(model="m", lengths="512,128", arms="literal,onehop", seed="7")
    assert config.lengths == (128, 512)
    assert config.arms == ("literal", "onehop")
    assert config.seed == 7
    assert NiahConfig(model="m").lengths == DEFAULT_LENGTHS
    assert NiahConfig(model="m").orders == ORDERS


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("model", "", "model"),
        ("lengths", "abc", "haystack lengths"),
        ("lengths", (8,), "haystack lengths"),
        ("positions", 0, "needle positions"),
        ("positions", "x", "needle positions"),
        ("controls", 0, "controls per question"),
        ("arms", ("twohop",), "arms"),
        ("arms", (), "arms"),
        ("orders", ("sideways",), "needle orders"),
        ("seed", -1, "seed"),
        ("device", "tpu", "device"),
        ("dtype", "int8", "dtype"),
        ("batch_size", 0, "batch size"),
        ("model_kwargs", "[1]", "model kwargs"),
        ("encode_kwargs", "{bad", "encode kwargs"),
        ("max_seq_length", 0, "max seq length"),
    ],
)
def test_niah_config_rejects_each_bad_field(field, value, what):
    kwargs = {"model": "m", field: value}
    with pytest.raises(ConfigError, match=rf"^{what}"):
        NiahConfig(**kwargs)


def test_niah_config_replace_validates_again():
    config = NiahConfig(model="m")
    assert config.replace(positions=3).positions == 3
    with pytest.raises(ConfigError):
        config.replace(positions=0)


def test_niah_config_groups_accepts_a_comma_string_like_other_lists():
    assert NiahConfig(model="m", groups="dietary,location-01").groups == ("dietary", "location-01")


configs = st.builds(
    NiahConfig,
    model=st.sampled_from(["packaged-minilm", "lexical:tfidf", "org/model"]),
    lengths=st.lists(st.integers(16, MAX_LENGTH), min_size=1, max_size=8),
    positions=st.integers(1, 100),
    seed=st.integers(0, 2**63),
    arms=st.permutations(ARMS).flatmap(lambda p: st.integers(1, len(p)).map(lambda n: p[:n])),
    orders=st.permutations(ORDERS).flatmap(lambda p: st.integers(1, len(p)).map(lambda n: p[:n])),
    groups=st.lists(st.sampled_from(["dietary", "location-01", "medical"]), max_size=3).map(tuple),
    max_seq_length=st.one_of(st.none(), st.integers(1, 8192)),
    encode_kwargs=st.dictionaries(st.sampled_from(["task", "x"]), st.text(max_size=5), max_size=2),
)


@DET
@given(configs)
def test_niah_config_to_dict_from_dict_round_trip(config):
    data = config.to_dict()
    assert json.loads(json.dumps(data)) == data  # JSON-ready
    again = NiahConfig.from_dict(data)
    assert again == config
    assert again.fingerprint() == config.fingerprint()
    assert NiahConfig.from_dict(json.loads(json.dumps(data))) == config


def test_niah_config_from_dict_unknown_key_is_an_error():
    data = NiahConfig(model="m").to_dict()
    data["lenghts"] = [128]
    with pytest.raises(ConfigError, match=r"unknown keys \['lenghts'\]"):
        NiahConfig.from_dict(data)


def test_niah_config_fingerprint_is_stable():
    a = NiahConfig(model="m", lengths=(128, 256))
    b = NiahConfig(model="m", lengths="256,128")
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() == a.fingerprint()
    assert len(a.fingerprint()) == 16
    assert int(a.fingerprint(), 16) >= 0


CHANGES = {
    "model": "other",
    "corpus": "/books",
    "needles": "set.json",
    "groups": ("dietary",),
    "lengths": (128,),
    "positions": 3,
    "controls": 2,
    "arms": ("literal",),
    "scoring": ("chunk-max",),
    "chunk_tokens": 64,
    "expansions": "terms.json",
    "bootstrap": 200,
    "orders": ("inverted",),
    "seed": 43,
    "device": "cpu",
    "dtype": "float16",
    "batch_size": 8,
    "token_budget": 0,
    "trust_remote_code": True,
    "model_kwargs": {"a": 1},
    "encode_kwargs": {"task": "text-matching"},
    "query_prompt": "query: ",
    "doc_prompt": "passage: ",
    "max_seq_length": 512,
}


def test_changes_cover_every_field():
    assert set(CHANGES) == {f.name for f in dataclasses.fields(NiahConfig)}


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_niah_config_fingerprint_changes_with_any_field(field):
    base = NiahConfig(model="m")
    changed = base.replace(**{field: CHANGES[field]})
    assert changed != base
    assert changed.fingerprint() != base.fingerprint()
