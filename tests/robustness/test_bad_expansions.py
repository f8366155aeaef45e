"""Bad expansion sets: one usage error naming the file, the group, the field and the fix.

An expansion set is read only when an ``expandN`` arm runs; it is checked when pytest
configures, against every selected group and arm, before any model is loaded. (Found by
these tests and fixed in inputs/expansions.py: a set without terms for a selected group
raised a bare ``KeyError`` -- an INTERNALERROR.) The parser itself is tested in
tests/inputs; here each problem goes through the plugin.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_niah.errors import ExpansionError
from pytest_niah.inputs.expansions import builtin_expansions, load_expansions

BUILTIN = Path(__file__).resolve().parents[2] / "pytest_niah" / "data" / "expansions.json"


def expansion_file(folder: Path, change) -> Path:
    data = json.loads(BUILTIN.read_text(encoding="utf-8"))
    change(data)
    path = folder / "expansions.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def without_dietary_01(data):
    del data["expansions"]["dietary-01"]


def fifty_terms(data):
    data["expansions"]["dietary-01"] = data["expansions"]["dietary-01"][:50]


def test_a_set_without_the_selected_group_is_a_usage_error(niah_run):
    path = expansion_file(niah_run.path, without_dietary_01)
    result = niah_run.run("--niah-arms=expand100", f"--niah-expansions={path}")
    niah_run.assert_usage_error(
        result,
        f"pytest-niah: Expansion set '{path}', group 'dietary-01', field 'expansions': the set "
        "has no terms for this group (did you mean 'dietary-04'?)",
        "Fix: add the group's terms to the file, or select only groups it has terms for "
        "(dietary-02, ",
        "or leave the expandN arms out of --niah-arms",
    )


def test_a_set_without_an_unselected_group_runs(niah_run):
    """The control: only the selected groups need terms."""
    path = expansion_file(niah_run.path, without_dietary_01)
    result = niah_run.run(
        "--niah-arms=expand100", f"--niah-expansions={path}", "--niah-groups=dietary-02"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    niah_run.no_traceback(result)


def test_too_few_terms_for_the_arm_is_a_usage_error(niah_run):
    path = expansion_file(niah_run.path, fifty_terms)
    result = niah_run.run("--niah-arms=expand100", f"--niah-expansions={path}")
    niah_run.assert_usage_error(
        result,
        f"Expansion set '{path}', group 'dietary-01', field 'expansions.dietary-01'",
        "the group has 50 expansion terms, fewer than the 100 asked for",
        "Fix: add at least 50 more terms to the group, or use an arm with at most 50 terms",
    )


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b'{"schema_version": 1, "name": "x", "expansions": {', "not valid JSON"),
        (b"[" * 50_000 + b"]" * 50_000, "nests arrays or objects more than 32 levels deep"),
        (
            b'{"schema_version": 1, "name": "x", "expansions": {"dietary-01": ["\\udc00"]}}',
            "\\udc00",
        ),
        (b'{"schema_version": 1, "name": "x", "expansions": {"dietary-01": "pork"}}', "dietary-01"),
    ],
    ids=["truncated", "deeply-nested", "lone-surrogate", "terms-not-a-list"],
)
def test_a_broken_file_is_a_usage_error(niah_run, content, fragment):
    path = niah_run.path / "expansions.json"
    path.write_bytes(content)
    result = niah_run.run("--niah-arms=expand100", "--niah-expansions=expansions.json")
    niah_run.assert_usage_error(result, f"Expansion set '{path}'", fragment, "Fix:")


def test_the_set_is_not_read_without_an_expand_arm(niah_run):
    """A broken file named but not used does not stop a run of the unexpanded arms."""
    (niah_run.path / "expansions.json").write_bytes(b"not json")
    result = niah_run.run("--niah-expansions=expansions.json")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()


def test_an_unknown_group_through_the_api_is_both_errors():
    """terms_for() of a missing group is an ExpansionError and, as documented, a KeyError."""
    with pytest.raises(ExpansionError) as info:
        builtin_expansions().terms_for("no-such-group")
    assert isinstance(info.value, KeyError)
    assert info.value.group_id == "no-such-group" and info.value.field == "expansions"
    assert str(info.value).startswith(
        "Expansion set 'builtin', group 'no-such-group', field 'expansions': the set has no "
        "terms for this group."
    )
    with pytest.raises(KeyError):
        load_expansions("builtin").expand("Which one?", "no-such-group", 1)
