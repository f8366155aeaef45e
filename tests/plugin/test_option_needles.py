"""--niah-needles: a needle-set JSON file instead of the built-in set."""

from __future__ import annotations

import shutil

import pytest


def test_custom_set_replaces_the_builtin_one(niah):
    path = niah.needle_fixtures / "valid_custom.json"
    result = niah.run("--collect-only", "-q", f"--niah-needles={path}", omit=["groups"])
    groups = {i.rsplit("-", 4)[0] for i in niah.ids(result) if not i.startswith("gate-")}
    assert groups == {"pet-01", "pet-02"}


def test_relative_path_and_group_selection(niah):
    target = niah.pytester.mkdir("sets") / "pets.json"
    shutil.copy(niah.needle_fixtures / "valid_custom.json", target)
    result = niah.run(
        "--niah-needles=sets/pets.json",
        "--niah-groups=pet-02",
        "--niah-arms=literal",
        "--niah-lengths=128",
        "--niah-json=r.json",
    )
    result.assert_outcomes(passed=2 * 3 + 1)
    results = niah.load("r.json")
    assert results.needle_set["name"] == "pets"
    assert results.needle_set["source"] == str(target)
    assert {c.group_id for c in results.cases} == {"pet-02"}


def test_builtin_is_the_default(niah):
    result = niah.run("--niah-arms=literal", "--niah-lengths=128", "--niah-json=r.json")
    result.assert_outcomes(passed=2 * 2 * 3 + 1)
    assert niah.load("r.json").needle_set["source"] == "builtin"


@pytest.mark.parametrize(
    ("name", "fix"),
    [
        ("bad_duplicate_id.json", "give every group its own id"),
        ("bad_not_json.json", "Fix:"),
        ("bad_onehop_shares_word.json", "Fix:"),
    ],
)
def test_invalid_set_is_a_usage_error_naming_the_file(niah, name, fix):
    path = niah.needle_fixtures / name
    result = niah.run("--collect-only", f"--niah-needles={path}", omit=["groups"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"pytest-niah: Needle set '{path}'" in err
    assert fix in err


def test_missing_file_is_a_usage_error(niah):
    result = niah.run("--collect-only", "--niah-needles=missing.json", omit=["groups"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*missing.json*does not exist*Fix:*'builtin'*"])
