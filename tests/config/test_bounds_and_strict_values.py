"""Issue 23: every count option is bounded, JSON options are read strictly, paths are usable.

Each value here once ran into a crash, a hang, an out-of-memory kill or a wrong default
(a 21 GB plan for ``--niah-positions=99999999999999999999``, an INTERNALERROR after every
embedding for ``NaN`` in ``--niah-model-kwargs``, the current folder read as the corpus for
``--niah-corpus=''``); now each is refused while the options are parsed.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from pytest_niah.config import bounded_numbers as num
from pytest_niah.config import parsers as p
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.option_docs import markdown_table
from pytest_niah.config.options import BY_NAME, OPTIONS
from pytest_niah.errors import ConfigError

# (option, a value past its bound, the bound as the error states it)
PAST_THE_BOUND = [
    ("positions", "99999999999999999999", "1..1,000"),
    ("positions", "1001", "1..1,000"),
    ("controls", "100000", "1..100"),
    ("bootstrap", str(10**12), "0..100,000"),
    ("seed", str(2**64), "0..9,223,372,036,854,775,807"),
    ("batch-size", "100001", "1..100,000"),
    ("remote-concurrency", "1000000", "1..100,000"),
    ("token-budget", str(10**12), "0..100,000,000"),
    ("chunk-tokens", "2000000", "8..1,000,000"),
    ("max-seq-length", "2000000", "1..1,000,000"),
    ("snapshot-digits", "18", "0..17"),
]


@pytest.mark.parametrize(("name", "value", "bounds"), PAST_THE_BOUND)
def test_a_count_past_its_bound_is_refused_and_the_bound_is_stated(name, value, bounds):
    option = BY_NAME[name]
    with pytest.raises(ConfigError) as info:
        option.parse_text(value)
    message = str(info.value)
    assert message.startswith(f"--niah-{name}: ") and "is too large" in message
    assert f"give a number in {bounds}" in message
    assert f"Allowed: {bounds}." in option.help_text()
    assert f"Allowed: {bounds}." in markdown_table()


@pytest.mark.parametrize(("name", "value", "bounds"), PAST_THE_BOUND)
def test_the_bound_itself_is_accepted(name, value, bounds):
    largest = int(bounds.split("..")[1].replace(",", ""))
    assert BY_NAME[name].parse_text(str(largest)) == largest


def test_every_whole_number_option_has_a_bound_in_its_help():
    counted = [o for o in OPTIONS if isinstance(o.parse, num.WholeNumber)]
    assert {o.name for o in counted} >= {name for name, _, _ in PAST_THE_BOUND}
    for option in counted:
        assert "Allowed: " in option.help_text()


def test_a_number_of_thousands_of_digits_is_shown_cut():
    with pytest.raises(ConfigError) as info:
        BY_NAME["positions"].parse_text("9" * 4000)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("1/99999999999", "99,999,999,999 jobs are too many (the most is 1,000)"),
        ("1/1001", "1,001 jobs are too many"),
        ("1/" + "9" * 5000, "is not K/N"),
    ],
)
def test_a_shard_count_past_its_bound_is_refused(value, problem):
    with pytest.raises(ConfigError) as info:
        num.parse_shard(value)
    assert problem in str(info.value) and len(str(info.value)) < 300
    assert num.parse_shard("1000/1000") == (1000, 1000)
    assert "N at most 1,000" in BY_NAME["shard"].help_text()


@pytest.mark.parametrize("value", ["1e300", "86401"])
def test_a_remote_timeout_longer_than_a_day_is_refused(value):
    with pytest.raises(ConfigError, match="is too long"):
        num.parse_seconds(value)
    assert num.parse_seconds("86400") == 86400.0


# -- --niah-model-kwargs / --niah-encode-kwargs --------------------------------------------


@pytest.mark.parametrize("option", ["model-kwargs", "encode-kwargs"])
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"torch_dtype": NaN}', "NaN is not a JSON value"),
        ('{"a": {"b": [Infinity]}}', "Infinity is not a JSON value"),
        ('{"a": -Infinity}', "-Infinity is not a JSON value"),
        ('{"truncate_dim": 1e999}', "the number 1e999 is too large"),
        ('{"a": -1e400}', "the number -1e400 is too large"),
        ('{"task": "a", "task": "b"}', 'the key "task" appears twice'),
    ],
)
def test_non_finite_numbers_and_repeated_keys_in_kwargs_are_refused(option, text, problem):
    with pytest.raises(ConfigError) as info:
        BY_NAME[option].parse_text(text)
    message = str(info.value)
    assert message.startswith(f"--niah-{option}: ") and problem in message
    assert "Fix: " in message


def test_non_finite_numbers_in_kwargs_from_python_are_refused():
    with pytest.raises(ConfigError, match="model_kwargs: nan is not a JSON number"):
        NiahConfig(model="m", model_kwargs={"a": [math.nan]})
    with pytest.raises(ConfigError, match="encode_kwargs: inf is not a JSON number"):
        NiahConfig(model="m", encode_kwargs={"scale": math.inf})


def test_finite_kwargs_still_parse():
    assert p.parse_json_object('{"a": 1e300, "b": [-0.5, 2], "c": {"d": null}}') == {
        "a": 1e300,
        "b": [-0.5, 2],
        "c": {"d": None},
    }


# -- empty inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["corpus", "needles", "expansions"])
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_input_path_is_refused(name, value):
    with pytest.raises(ConfigError) as info:
        BY_NAME[name].parse_text(value)
    assert str(info.value).startswith(f"--niah-{name}: the value is empty")
    assert "it would name the folder pytest runs in" in str(info.value)


def test_an_empty_corpus_from_the_python_api_is_refused():
    with pytest.raises(ConfigError, match="corpus: the value is empty"):
        NiahConfig(model="m", corpus="")


# -- LABEL=NAME --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fragments"),
    [
        ("a/b=lexical:tfidf", ["label 'a/b' holds characters", "--niah-model=a-b=lexical:tfidf"]),
        (
            "org/model=packaged-minilm",
            ["label 'org/model' holds", "--niah-model=org-model=packaged-minilm"],
        ),
        ("x=y=lexical:tfidf", ["the model 'y=lexical:tfidf' after the label 'x' holds '='"]),
        ("x=y=lexical:tfidf", ["--niah-model=x=lexical:tfidf"]),
        ("/no/such/run=3/model", ["holds '=' and is no existing path"]),
    ],
)
def test_a_label_with_a_slash_or_a_second_equals_sign_explains_label_name(value, fragments):
    with pytest.raises(ConfigError) as info:
        ModelSpec.parse(value)
    message = str(info.value)
    assert "LABEL=NAME with one '='" in message
    assert "offline" not in message and "cache" not in message
    for fragment in fragments:
        assert fragment in message


def test_an_existing_path_or_served_model_may_hold_equals_signs(tmp_path):
    folder = tmp_path / "run=3" / "model"
    folder.mkdir(parents=True)
    assert ModelSpec.parse(str(folder)).name == str(folder)
    assert ModelSpec.parse(f"mine={folder}") == ModelSpec("mine", str(folder))
    served = "openai+http://127.0.0.1:1/v1?api-version=2#m"
    assert ModelSpec.parse(served).name == served


# -- paths that can never be used ----------------------------------------------------------------


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    link = tmp_path / "loop"
    link.symlink_to(link)
    return link


@pytest.mark.parametrize("name", ["json", "report", "snapshot-dir", "storage", "shard-dir"])
def test_a_symlink_loop_is_refused_for_every_output(tmp_path, loop, name):
    for value in ("loop", "loop/inside"):
        with pytest.raises(ConfigError) as info:
            BY_NAME[name].absolute(value, tmp_path)
        message = str(info.value)
        assert message.startswith(f"--niah-{name}: '{value}' is a symbolic link loop")
        assert "Fix: remove or correct the link" in message


def test_a_symlink_loop_as_an_input_is_refused_too(tmp_path, loop):
    with pytest.raises(ConfigError, match="--niah-needles: 'loop' is a symbolic link loop"):
        BY_NAME["needles"].absolute("loop", tmp_path)


@pytest.mark.parametrize("name", ["snapshot-dir", "report", "json", "storage"])
def test_an_output_below_a_regular_file_is_left_to_the_output_checks(tmp_path, name):
    # absolute() keeps it, so the plugin reports it with every other problem of the run.
    from pytest_niah.output_paths import output_problem

    (tmp_path / "afile").write_text("x")
    kept = BY_NAME[name].absolute("afile/snaps", tmp_path)
    assert kept == str(tmp_path / "afile" / "snaps")
    assert "is not a folder" in output_problem(kept, folder=True)


def test_usable_paths_resolve_as_before(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    option = BY_NAME["report"]
    assert option.absolute("link/new/deeper", tmp_path) == str(tmp_path / "real/new/deeper")
    assert option.absolute("~", tmp_path) == str(Path(os.path.expanduser("~")).resolve())
