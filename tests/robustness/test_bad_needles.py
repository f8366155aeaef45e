"""Bad needle sets: one usage error naming the file, the group, the field and the fix.

Needle sets are validated when pytest configures, before any model is loaded, so every
problem of the file itself is a usage error. A needle too long for a haystack can only be
found with the model's tokenizer: that one stops the session once, before any test (exit
code 4), with one message naming the group, the lengths and the fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah import NiahConfig, load_needle_set, run_experiment
from pytest_niah.embed.lexical import LexicalEmbedder
from pytest_niah.errors import HaystackError, NeedleSetError

REPO = Path(__file__).resolve().parents[2]
NEEDLES = REPO / "fixtures" / "robustness" / "needles"

# file -> fragments the message must hold (besides the file's path and "Fix:").
BAD_FILES = {
    "bad_trailing_comma.json": ["not valid JSON", "line 54, column 3", "trailing comma"],
    "bad_truncated.json": ["not valid JSON", "line "],
    "bad_keywords_not_a_list.json": [
        "group 'pet-02'",
        "field 'groups[1].keywords'",
        "expected an array of strings, got string",
    ],
    "bad_missing_needles.json": ["group 'pet-02'", "field 'groups[1].needles'", 'add "needles"'],
    "bad_top_level_typo.json": ["field 'descripton'", "rename it to 'description'"],
    "bad_schema_version_2.json": ["field 'schema_version'", "unsupported schema version 2"],
    "bad_no_placeholder.json": [
        "group 'pet-01'",
        "field 'groups[0].needles.onehop.default'",
        "{name} exactly once",
    ],
    "bad_duplicate_ids.json": [
        "group 'pet-01'",
        "field 'groups[1].id'",
        "used by more than one group (first at groups[0])",
        "own id, e.g. rename this one to 'pet-02'",
    ],
    "bad_onehop_shares_word.json": [
        "group 'pet-01'",
        "field 'groups[0].needles.onehop.default'",
        "shares the content word(s) dog",
        "reword the needle",
    ],
    "bad_onehop_shares_stem.json": [
        "group 'pet-02'",
        "field 'groups[1].needles.onehop.inverted'",
        "shares the content word(s) keep (stemmed; the needle has 'keeping' for 'keeps')",
        "needles.literal",
    ],
}


@pytest.fixture
def all_groups(niah_run):
    """``niah_run`` without the tiny grid's ``--niah-groups``: a custom needle set runs all
    of its groups (the option's default). An empty ``--niah-groups=`` is refused."""
    del niah_run.grid["groups"]
    return niah_run


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_file_is_a_usage_error(all_groups, name):
    niah_run = all_groups
    path = NEEDLES / name
    result = niah_run.run(f"--niah-needles={path}")
    err = niah_run.assert_usage_error(
        result, "pytest-niah: Needle set", str(path), "Fix:", *BAD_FILES[name]
    )
    message = err[err.index("pytest-niah:") :].strip()
    assert "\n" not in message, "one paragraph"


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_file_through_the_api(name):
    path = NEEDLES / name
    with pytest.raises(NeedleSetError) as info:
        load_needle_set(path)
    message = str(info.value)
    for fragment in [str(path), "Fix:", *BAD_FILES[name]]:
        assert fragment in message
    assert info.value.source == str(path)


def test_bad_file_through_run_experiment(tmp_path):
    path = NEEDLES / "bad_duplicate_ids.json"
    config = NiahConfig(model="lexical:tfidf", needles=str(path))
    with pytest.raises(NeedleSetError, match="used by more than one group"):
        run_experiment(config)


def test_bad_file_from_the_ini_file(all_groups):
    """A relative path in the ini file is read relative to it, and named in the error."""
    niah_run = all_groups
    (niah_run.path / "needles").mkdir()
    (niah_run.path / "needles" / "mine.json").write_bytes(
        (NEEDLES / "bad_onehop_shares_word.json").read_bytes()
    )
    niah_run.pytester.makeini("[pytest]\nniah_needles = needles/mine.json\n")
    result = niah_run.run()
    niah_run.assert_usage_error(
        result, str(niah_run.path / "needles" / "mine.json"), "group 'pet-01'", "Fix:"
    )


def test_valid_set_runs(all_groups):
    """The control: the set every bad file breaks runs cleanly."""
    result = all_groups.run(f"--niah-needles={NEEDLES / 'valid_pets.json'}")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=1, xfailed=8)


@pytest.mark.parametrize(
    ("content", "fragments"),
    [
        (b"", ["not valid JSON", "line 1, column 1"]),
        (b"\xff\xfe{}", ["not valid UTF-8", "offset 0", "save the file with UTF-8"]),
        (b"[]", ["expected a JSON object, got array"]),
        (b'{"schema_version": 1, "name": "x", "groups": []}', ["field 'groups'", "no groups"]),
        (
            b'{"schema_version": 1, "name": "x", "groups": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
            ["nests arrays or objects more than 32 levels deep", "brackets are balanced"],
        ),
        (
            (NEEDLES / "valid_pets.json").read_bytes().replace(b"{name}", b"{name} \\ud800", 1),
            ["the escape \\ud800", "a lone UTF-16 surrogate", "Fix: remove the escape"],
        ),
    ],
    ids=["empty", "utf16", "array", "no-groups", "deeply-nested", "lone-surrogate"],
)
def test_bad_content_is_a_usage_error(all_groups, content, fragments):
    niah_run = all_groups
    path = niah_run.path / "needles.json"
    path.write_bytes(content)
    result = niah_run.run("--niah-needles=needles.json")
    niah_run.assert_usage_error(result, str(path), "Fix:", *fragments)


def test_missing_file_and_folder_are_usage_errors(niah_run):
    result = niah_run.run("--niah-needles=nowhere.json")
    niah_run.assert_usage_error(result, str(niah_run.path / "nowhere.json"), "does not exist")
    (niah_run.path / "a-folder").mkdir()
    result = niah_run.run("--niah-needles=a-folder")
    niah_run.assert_usage_error(result, str(niah_run.path / "a-folder"), "cannot be read")


def test_unknown_group_selector_is_a_usage_error(niah_run):
    result = niah_run.run("--niah-groups=dietry-01")
    niah_run.assert_usage_error(
        result, "'dietry-01'", "did you mean 'dietary-01'", "Fix: use categories"
    )


# --------------------------------------------------------------------------- too-long needles


def test_needle_longer_than_the_shortest_haystack(niah_run):
    """The built-in profession-04 needle is 16 words and punctuation marks long."""
    result = niah_run.run("--niah-lengths=16,128", "--niah-groups=profession-04")
    niah_run.assert_stopped(
        result,
        "lexical-tfidf",
        "needle group 'profession-04'",
        "does not fit a haystack of 16 tokens",
        "drop length 16 from --niah-lengths",
    )


def test_needle_longer_than_the_shortest_haystack_in_model_tokens(niah_run):
    """Lengths count the model's own tokens: MiniLM splits the needle into 19 pieces."""
    result = niah_run.run(
        "--niah-lengths=16", "--niah-groups=profession-01", model="packaged-minilm"
    )
    niah_run.assert_stopped(
        result,
        "packaged-minilm",
        "needle group 'profession-01'",
        "a needle of 19 tokens does not fit a haystack of 16 tokens",
        "shorten the needle or drop length 16 from --niah-lengths",
    )


def test_a_long_needle_of_a_group_not_selected_does_not_stop_the_run(niah_run):
    """At 16 tokens profession-04 and location-04 (16 words) do not fit, language-01 (11)
    does: a run of language-01 alone builds the others' controls, never their needles."""
    result = niah_run.run("--niah-lengths=16", "--niah-groups=language-01")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("xfailed", 0) == 5, outcomes
    niah_run.no_traceback(result)


def test_custom_needle_longer_than_the_haystack(all_groups):
    niah_run = all_groups
    result = niah_run.run(f"--niah-needles={NEEDLES / 'long_needle.json'}", "--niah-lengths=128")
    niah_run.assert_stopped(
        result,
        "lexical-tfidf",
        "needle group 'pet-02'",
        "does not fit a haystack of 128 tokens",
        "shorten the needle",
    )


def test_custom_needle_longer_than_the_haystack_through_the_api():
    config = NiahConfig(
        model="lexical:tfidf",
        needles=str(NEEDLES / "long_needle.json"),
        lengths=(128,),
        positions=2,
    )
    with pytest.raises(HaystackError) as info:
        run_experiment(config, embedder=LexicalEmbedder())
    message = str(info.value)
    assert "needle group 'pet-02'" in message
    assert "does not fit a haystack of 128 tokens" in message
    assert "--niah-lengths" in message
