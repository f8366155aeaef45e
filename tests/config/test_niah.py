"""The frozen experiment config and model specs (pytest_niah.config.niah)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.config.bounded_numbers import MAX_LENGTH
from pytest_niah.config.niah import TRANSPORT, ModelSpec, NiahConfig, default_label
from pytest_niah.config.options import BY_NAME, OPTIONS
from pytest_niah.config.vocabulary import ARMS, ORDERS
from pytest_niah.errors import ConfigError

# -- ModelSpec ------------------------------------------------------------------------------------


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
    with pytest.raises(ConfigError, match="--niah-model: the model name is empty"):
        ModelSpec.parse(value)


def test_default_label_windows_path_ending_in_model():
    assert default_label(r"C:\models\jina\model") == "jina-model"


# -- defaults come from the option table ----------------------------------------------------------


def test_every_experiment_option_is_a_config_field_and_back():
    fields = {f.name for f in dataclasses.fields(NiahConfig)} - {"model"}
    assert fields == {o.field for o in OPTIONS if o.experiment}


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.experiment], ids=lambda o: o.name)
def test_config_defaults_are_the_option_defaults(option):
    value = getattr(NiahConfig(model="m"), option.field)
    assert value == option.default
    # A mutable default is a copy: changing one config's dict cannot leak into another.
    if isinstance(value, dict):
        assert value is not option.default


def test_config_normalizes_like_the_command_line():
    config = NiahConfig(model="m", lengths="512,128", arms="literal,onehop", seed="7")
    assert config.lengths == BY_NAME["lengths"].parse("128,512")
    assert config.arms == ("literal", "onehop")
    assert config.seed == 7
    assert NiahConfig(model="m", groups="dietary,location-01").groups == ("dietary", "location-01")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("lengths", "abc"),
        ("lengths", (8,)),
        ("positions", 0),
        ("positions", "x"),
        ("controls", 0),
        ("arms", ("twohop",)),
        ("arms", ()),
        ("orders", ("sideways",)),
        ("seed", -1),
        ("device", "tpu"),
        ("dtype", "int8"),
        ("batch_size", 0),
        ("model_kwargs", "[1]"),
        ("encode_kwargs", "{bad"),
        ("max_seq_length", 0),
        ("chunk_tokens", 4),
        ("trust_remote_code", "maybe"),
        ("api_key_env", "sk-not-a-name"),
        ("remote_concurrency", 0),
        ("remote_timeout", "soon"),
        ("remote_timeout", 0),
    ],
)
def test_config_rejects_each_bad_field_by_name(field, value):
    with pytest.raises(ConfigError) as info:
        NiahConfig(model="m", **{field: value})
    assert info.value.problem.startswith(f"{field}: ")
    assert info.value.hint


@pytest.mark.parametrize("model", ["", "   "])
def test_config_needs_a_model(model):
    with pytest.raises(ConfigError, match=r"^model: empty"):
        NiahConfig(model=model)


def test_trust_remote_code_only_through_its_own_option():
    with pytest.raises(ConfigError, match="trust_remote_code cannot be set there"):
        NiahConfig(model="m", model_kwargs={"trust_remote_code": True})
    allowed = NiahConfig(
        model="m", model_kwargs={"trust_remote_code": True}, trust_remote_code=True
    )
    assert allowed.trust_remote_code


def test_replace_validates_again():
    config = NiahConfig(model="m")
    assert config.replace(positions=3).positions == 3
    with pytest.raises(ConfigError):
        config.replace(positions=0)


# -- round trip and fingerprint -------------------------------------------------------------------

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


@given(configs)
def test_to_dict_from_dict_round_trip(config):
    data = config.to_dict()
    again = NiahConfig.from_dict(json.loads(json.dumps(data)))
    assert again == config
    assert again.fingerprint() == config.fingerprint()


def test_from_dict_unknown_key_is_an_error():
    data = NiahConfig(model="m").to_dict()
    data["lenghts"] = [128]
    with pytest.raises(ConfigError, match=r"unknown keys \['lenghts'\]"):
        NiahConfig.from_dict(data)


def test_equal_configs_written_differently_share_a_fingerprint():
    a = NiahConfig(model="m", lengths=(128, 256), arms=("onehop",))
    b = NiahConfig(model="m", lengths="256,128,256", arms="onehop")
    assert a == b and a.fingerprint() == b.fingerprint() and hash(a) == hash(b)


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
    "seeds": (1, 2),
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
    "tokenizer": "BAAI/bge-m3",
    "api_key_env": "MY_API_KEY",
    "remote_concurrency": 8,
    "remote_timeout": 5.0,
}


def test_changes_cover_every_field():
    assert set(CHANGES) == {f.name for f in dataclasses.fields(NiahConfig)}


@pytest.mark.parametrize("field", sorted(set(CHANGES) - TRANSPORT))
def test_fingerprint_changes_with_any_field(field):
    base = NiahConfig(model="m")
    changed = base.replace(**{field: CHANGES[field]})
    assert changed != base
    assert changed.fingerprint() != base.fingerprint()


@pytest.mark.parametrize("field", sorted(TRANSPORT))
def test_fingerprint_keeps_through_a_transport_field(field):
    # How a served model is reached changes no result: the same run with another timeout
    # shares its fingerprint (and so its results), though the configs differ.
    base = NiahConfig(model="m")
    changed = base.replace(**{field: CHANGES[field]})
    assert changed != base
    assert changed.to_dict() != base.to_dict()
    assert changed.fingerprint() == base.fingerprint()


def test_fingerprint_is_the_same_in_every_process():
    code = (
        "from pytest_niah.config.niah import NiahConfig;"
        "config = NiahConfig(model='m', groups=('b', 'a'), encode_kwargs={'z': 1, 'a': 2});"
        "print(config.fingerprint())"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("0", "1", "12345")
    }
    assert len(seen) == 1
