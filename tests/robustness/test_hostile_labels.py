"""Hostile model labels: refused up front with the label and the fix, or files named safely.

A label names files (the shared results file, ``--niah-json`` per model, run-store and
snapshot folders); every such name goes through the one-to-one, bounded
:func:`~pytest_niah.naming.label_file_name`, and a label that is too long, holds odd
characters or no letter or digit is a usage error before anything runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.errors import ConfigError
from pytest_niah.naming import MAX_LABEL_LENGTH, label_file_name
from pytest_niah.plugin.outputs import json_target
from pytest_niah.plugin.session import NiahSession
from pytest_niah.results.shared_files import results_file

LONG = "L" * 240
NAME_MAX = 255


def test_a_very_long_label_is_a_usage_error(niah_run):
    result = niah_run.run(f"--niah-model={LONG}=lexical:tfidf", model=None)
    err = niah_run.assert_usage_error(
        result,
        "--niah-model: the label 'LLLL",
        f"is 240 characters long (at most {MAX_LABEL_LENGTH})",
        "Fix: label the model with 1 to 100 letters, digits",
    )
    assert LONG not in err, "the message should not repeat a 240-character label whole"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (".=lexical:tfidf", "the label '.' of 'lexical:tfidf' has no letter or digit"),
        ("..=lexical:tfidf", "the label '..' of 'lexical:tfidf' has no letter or digit"),
        ("-=lexical:tfidf", "the label '-' of 'lexical:tfidf' has no letter or digit"),
        ("_-.=lexical:tfidf", "the label '_-.' of 'lexical:tfidf' has no letter or digit"),
        ("a b=lexical:tfidf", "the label 'a b' of 'lexical:tfidf' holds ' '"),
        ("a:b=lexical:tfidf", "the label 'a:b' of 'lexical:tfidf' holds ':'"),
        ("=lexical:tfidf", "the label before '=' is empty"),
    ],
)
def test_an_odd_label_is_a_usage_error_naming_it(niah_run, value, problem):
    result = niah_run.run(f"--niah-model={value}", "--collect-only", model=None)
    err = niah_run.assert_usage_error(result, problem, "Fix: label the model with 1 to 100")
    # Refused as a label, never sent to the hub as a model name.
    assert "Could not resolve" not in err and "Repo id" not in err, err


def test_the_fix_suggests_a_usable_label(niah_run):
    result = niah_run.run("--niah-model=a b=lexical:tfidf", "--collect-only", model=None)
    niah_run.assert_usage_error(result, "e.g. --niah-model=a-b=lexical:tfidf")


def test_odd_labels_are_all_reported_at_once(niah_run):
    result = niah_run.run(
        "--niah-model=.=lexical:tfidf", "--niah-model=a b=lexical:tfidf", model=None
    )
    niah_run.assert_usage_error(result, "2 problems", "'.'", "'a b'")


def test_a_label_at_the_length_limit_runs_and_names_its_files_safely(niah_run):
    label = "l" * MAX_LABEL_LENGTH  # plain (lowercase): its files are named after it as it is
    result = niah_run.run(
        f"--niah-model={label}=lexical:tfidf",
        "--niah-model=b=lexical:tfidf",
        "--niah-json=out.json",
        model=None,
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    niah_run.no_traceback(result)
    assert (niah_run.path / f"out.{label}.json").is_file()
    assert (niah_run.path / "out.b.json").is_file()


@pytest.mark.parametrize("value", ["a=", "a=  "])
def test_a_label_without_a_model_is_refused(value):
    with pytest.raises(ConfigError, match="no model after the label 'a'"):
        ModelSpec.parse(value)


def test_a_label_made_from_a_model_name_is_checked_too():
    with pytest.raises(ConfigError, match=r"the label '\.' made from the model name") as caught:
        ModelSpec.parse(".")
    assert "--niah-model=candidate=." in str(caught.value)


def test_an_existing_path_holding_an_equals_sign_is_a_model(tmp_path, monkeypatch):
    (tmp_path / "a b=c").mkdir()
    monkeypatch.chdir(tmp_path)
    assert ModelSpec.parse("a b=c") == ModelSpec(label="a-b-c", name="a b=c")


@pytest.mark.parametrize(
    "label", [LONG, "x" * 101, "模" * 200, ".", "..", "a/../../b", "L" * 90 + "-0123456789"]
)
def test_label_folder_is_short_and_stays_inside(label):
    folder = label_file_name(label)
    assert 0 < len(folder.encode()) <= 100
    assert "/" not in folder and folder not in (".", "..")


def test_label_folder_keeps_plain_labels_and_tells_long_ones_apart():
    assert label_file_name("l" * 100) == "l" * 100
    assert label_file_name("l" * 101) != label_file_name("l" * 102)
    assert label_file_name("l" * 101) != "l" * 101


def results_file_of(label: str, tmp_path: Path) -> Path:
    """The shared results file of a session built through the Python API (labels unchecked)."""
    session = NiahSession.create(
        [ModelSpec(label=label, name="lexical:tfidf")], NiahConfig(model="lexical:tfidf")
    )
    return results_file(tmp_path, label, session.configs[label])


def test_the_shared_results_file_of_a_long_label_has_a_short_name(tmp_path):
    path = results_file_of(LONG, tmp_path)
    assert len(path.name.encode()) < 100
    assert path.parent == tmp_path
    path.write_text("{}", encoding="utf-8")  # the file system takes the name
    path.with_suffix(".run.json").write_text("{}", encoding="utf-8")


def test_shared_results_files_of_two_labels_differ(tmp_path):
    one = results_file_of("L" * 101, tmp_path)
    two = results_file_of("L" * 102, tmp_path)
    assert one != two


def test_the_json_file_per_model_of_a_long_label_has_a_short_name(tmp_path):
    target = json_target(str(tmp_path / "out.json"), LONG, several=True)
    assert len(target.name.encode()) < NAME_MAX - 40
    assert target.parent == tmp_path
    assert json_target(str(tmp_path / "out.json"), LONG, several=False) == tmp_path / "out.json"
    assert json_target("out.json", "b", several=True) == Path("out.b.json")
