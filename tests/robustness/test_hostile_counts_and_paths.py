"""Issue 23: counts past their bound, non-finite kwargs, empty or unusable paths, bad labels.

Each of these once crashed, hung, was killed for memory or ran on the wrong input after
minutes of work; each is now one usage error before any test runs, naming the option, what
is wrong and the fix.
"""

from __future__ import annotations

import pytest

# (argument, fragments of the error)
REFUSED_AT_PARSE = [
    ("--niah-positions=99999999999999999999", ["argument --niah-positions:", "1..1,000"]),
    ("--niah-bootstrap=1000000000000", ["argument --niah-bootstrap:", "0..100,000"]),
    ("--niah-shard=1/99999999999", ["argument --niah-shard:", "at most 1,000 jobs"]),
    ("--niah-controls=100000", ["argument --niah-controls:", "1..100"]),
    ('--niah-model-kwargs={"torch_dtype": NaN}', ["--niah-model-kwargs:", "NaN is not a JSON"]),
    ('--niah-model-kwargs={"a": 1e999}', ["--niah-model-kwargs:", "1e999 is too large"]),
    ('--niah-encode-kwargs={"scale": Infinity}', ["--niah-encode-kwargs:", "Infinity is not"]),
    ("--niah-corpus=", ["argument --niah-corpus:", "the value is empty"]),
    ("--niah-needles=", ["argument --niah-needles:", "the value is empty"]),
]


@pytest.mark.parametrize(
    ("arg", "fragments"), REFUSED_AT_PARSE, ids=[a for a, _ in REFUSED_AT_PARSE]
)
def test_refused_while_options_are_parsed(niah_run, arg, fragments):
    result = niah_run.run(arg)
    niah_run.assert_usage_error(result, *fragments)


@pytest.mark.parametrize(
    ("model", "fragments"),
    [
        ("a/b=lexical:tfidf", ["label 'a/b' holds", "LABEL=NAME with one '='"]),
        ("x=y=lexical:tfidf", ["after the label 'x' holds '='", "--niah-model=x=lexical:tfidf"]),
    ],
)
def test_a_label_name_gone_wrong_explains_the_form(niah_run, model, fragments):
    result = niah_run.run(f"--niah-model={model}")
    err = niah_run.assert_usage_error(result, *fragments)
    assert "offline" not in err and "Repo id" not in err


def test_a_symlink_loop_as_the_json_file_is_a_usage_error(niah_run):
    (niah_run.path / "loop").symlink_to(niah_run.path / "loop")
    result = niah_run.run("--niah-json=loop")
    niah_run.assert_usage_error(result, "--niah-json: 'loop' is a symbolic link loop", "Fix:")


def test_a_snapshot_folder_below_a_regular_file_is_refused_before_the_run(niah_run):
    (niah_run.path / "afile").write_text("not a folder")
    result = niah_run.run("--niah-snapshot", "--niah-snapshot-dir=afile/snaps")
    niah_run.assert_usage_error(
        result,
        f"--niah-snapshot-dir: {niah_run.path / 'afile' / 'snaps'} cannot be created: "
        f"{niah_run.path / 'afile'} is not a folder",
    )
