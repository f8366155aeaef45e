"""Reading data files: whatever the bytes, a load gives a set or one error naming the file."""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.errors import DataFileError, ExpansionError, NeedleSetError
from pytest_niah.inputs.expansions import ExpansionSet, load_expansions
from pytest_niah.inputs.jsonfile import MAX_DEPTH, json_path
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, load_needle_set

REPO = Path(__file__).resolve().parents[2]
VALID_NEEDLES = json.loads((REPO / "fixtures" / "needles" / "valid_custom.json").read_text())
VALID_EXPANSIONS = json.loads((REPO / "fixtures" / "expansions" / "good_small.json").read_text())

LOADERS: dict[str, tuple[Callable[[Path], Any], type[DataFileError], dict[str, Any]]] = {
    "needles": (load_needle_set, NeedleSetError, VALID_NEEDLES),
    "expansions": (load_expansions, ExpansionError, VALID_EXPANSIONS),
}


def write(tmp_path: Path, content: bytes | str, name: str = "data.json") -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        content = content.encode("utf-8", "surrogatepass")
    path.write_bytes(content)
    return path


# --- deep nesting ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(LOADERS))
@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,  # the C decoder would raise RecursionError
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2),  # parses, but deeper than any file needs
    ],
    ids=["open-100k", "closed-100k", "objects-5k", "just-too-deep"],
)
def test_deep_nesting_is_an_error_naming_the_file(tmp_path, kind, text):
    load, error, _ = LOADERS[kind]
    path = write(tmp_path, text)
    with pytest.raises(error) as info:
        load(path)
    assert type(info.value) is error
    message = str(info.value)
    assert str(path) in message
    assert "Fix:" in message
    assert "deep" in message or "not valid JSON" in message


def test_nesting_inside_a_value_is_named_too(tmp_path):
    data = copy.deepcopy(VALID_NEEDLES)
    value: Any = "x"
    for _ in range(MAX_DEPTH + 5):
        value = [value]
    data["description"] = value
    path = write(tmp_path, json.dumps(data))
    with pytest.raises(NeedleSetError, match="more than 32 levels deep") as info:
        load_needle_set(path)
    assert str(path) in str(info.value)


# --- lone surrogates ---------------------------------------------------------------------


def test_lone_surrogate_in_a_needle_is_refused_naming_the_field(tmp_path):
    text = json.dumps(VALID_NEEDLES).replace("walks a dachshund", "walks a \\ud800 dachshund", 1)
    path = write(tmp_path, text)
    with pytest.raises(NeedleSetError) as info:
        load_needle_set(path)
    message = str(info.value)
    assert str(path) in message
    assert "\\ud800" in message and "surrogate" in message
    assert info.value.field == "groups[0].needles.onehop.default"
    assert "field 'groups[0].needles.onehop.default'" in message
    message.encode("utf-8")  # the message itself can be printed


def test_lone_surrogate_in_an_expansion_term_and_in_a_key(tmp_path):
    text = json.dumps(VALID_EXPANSIONS).replace('"Cusco"', '"Cus\\udc00co"')
    with pytest.raises(ExpansionError) as info:
        load_expansions(write(tmp_path, text))
    assert info.value.field == "expansions.location-01[2]"
    assert "\\udc00" in str(info.value)
    text = json.dumps(VALID_EXPANSIONS).replace('"location-01"', '"loc\\ud800"')
    with pytest.raises(ExpansionError, match="a key of this object") as info:
        load_expansions(write(tmp_path, text, "key.json"))
    assert info.value.field == "expansions"
    str(info.value).encode("utf-8")


def test_surrogate_pair_is_a_character_and_loads(tmp_path):
    data = copy.deepcopy(VALID_NEEDLES)
    data["description"] = "A set with an emoji: \U0001f600."
    path = write(tmp_path, json.dumps(data))  # json writes it as \ud83d\ude00, a valid pair
    assert "\\ud83d\\ude00" in path.read_text()
    assert load_needle_set(path).description == data["description"]


def test_lone_surrogate_in_a_mapping_is_refused_too():
    data = copy.deepcopy(VALID_NEEDLES)
    data["names"][1] = "Ai\udfffko"
    with pytest.raises(NeedleSetError) as info:
        NeedleSet.from_dict(data)
    assert info.value.field == "names[1]"
    group = copy.deepcopy(VALID_NEEDLES["groups"][0])
    group["question"] = "Which character owns a dog\ud800?"
    with pytest.raises(NeedleSetError, match="surrogate"):
        NeedleGroup.from_dict(group)
    with pytest.raises(ExpansionError, match="surrogate"):
        ExpansionSet.from_dict({**VALID_EXPANSIONS, "name": "\ud801"})


# --- other JSON that Python reads and other tools do not ---------------------------------


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ('{"schema_version": NaN}', "NaN is not a JSON value"),
        ('{"schema_version": -Infinity}', "-Infinity is not a JSON value"),
        ('{"schema_version": ' + "1" * 5000 + "}", "cannot be read"),
        ('{"name": "a", "name": "b"}', "appears twice"),
    ],
    ids=["nan", "infinity", "long-int", "duplicate-key"],
)
@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_lenient_python_json_is_refused(tmp_path, kind, text, phrase):
    load, error, _ = LOADERS[kind]
    path = write(tmp_path, text)
    with pytest.raises(error, match=phrase) as info:
        load(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_bom_is_allowed(tmp_path, kind):
    load, _, valid = LOADERS[kind]
    path = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(valid).encode())
    assert load(path).name == valid["name"]


def test_json_path_writes_indexes_and_odd_keys():
    assert json_path(["groups", 3, "needles", "onehop", "default"]) == (
        "groups[3].needles.onehop.default"
    )
    assert json_path(["expansions", "Location 1"]) == 'expansions["Location 1"]'
    assert json_path(["a\nb", 0]) == '["a\\nb"][0]'
    assert json_path([]) == ""


# --- whatever the input: a set, or exactly the format's error naming the file ----------------

ODD_CHARACTERS = st.sampled_from(["\ud800", "\udfff", "{", "}", " ", "\n", "é", "-"])
TEXT = st.one_of(
    st.text(st.one_of(st.characters(), ODD_CHARACTERS), max_size=12),
    st.sampled_from(["{name}", "{name} owns a dog.", "pet-01", "Which character owns a dog?"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(TEXT, children, max_size=4)
    ),
    max_leaves=12,
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += paths_of(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += paths_of(child, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any]) -> Any:
    """A valid file with one to three values replaced, keys dropped or keys added."""
    data: Any = copy.deepcopy(valid)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths_of(data)))
        if not path:
            return draw(JSON_VALUES)
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "drop", "add", "text"]))
        if action == "drop":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(TEXT)] = draw(JSON_VALUES)
        elif action == "text":
            parent[path[-1]] = draw(TEXT)
        else:
            parent[path[-1]] = draw(JSON_VALUES)
    return data


def contents(valid: dict[str, Any]) -> st.SearchStrategy[bytes]:
    as_json = st.one_of(JSON_VALUES, mutated(valid)).map(
        lambda value: json.dumps(value).encode("ascii")
    )
    return st.one_of(st.binary(max_size=200), as_json, as_json.map(lambda raw: raw[:-3]))


def check_load(kind: str, content: bytes) -> None:
    load, error, _ = LOADERS[kind]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.json"
        path.write_bytes(content)
        try:
            loaded = load(path)
        except DataFileError as exc:
            assert type(exc) is error, repr(exc)
            message = str(exc)
            assert str(path) in message
            assert "\n" not in message
            message.encode("utf-8")
            return
        # What loads can be used: fingerprinted, written back and loaded again.
        assert len(loaded.fingerprint()) == 64
        again = path.with_name("again.json")
        again.write_text(json.dumps(loaded.to_dict()), encoding="utf-8")
        assert load(again) == loaded


@given(contents(VALID_NEEDLES))
def test_any_bytes_give_a_needle_set_or_a_needle_set_error(content):
    check_load("needles", content)


@given(contents(VALID_EXPANSIONS))
def test_any_bytes_give_an_expansion_set_or_an_expansion_error(content):
    check_load("expansions", content)
