"""Which validation problem a results file's error names first, and how (a small model)."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_niah.results.results_schema import RunDocument
from pytest_niah.results.results_validation import _path, describe


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: Literal[3]
    name: str
    rows: list[int]


def _described(data: dict, kind=_Doc) -> tuple[str, str]:
    with pytest.raises(ValidationError) as raised:
        _Doc.model_validate(data)
    return describe(raised.value, "f.json", kind)


def test_a_json_path_names_keys_with_dots_and_items_with_brackets():
    assert _path(["results", "cases", 3, "auc"]) == "$.results.cases[3].auc"
    assert _path([]) == "$"


def test_another_format_version_is_named_before_every_other_problem():
    problem, fix = _described({"schema_version": 2, "extra": 1})
    assert problem.startswith("f.json: not a valid pytest-niah results file: at $.schema_version")
    assert problem.endswith("(and 3 more problems)")
    assert "--niah-json" in fix


def test_a_missing_key_is_named_before_an_unknown_one():
    problem, fix = _described({"schema_version": 3, "rows": [], "extra": 1})
    assert problem == (
        "f.json: not a valid pytest-niah results file: at $.name, required key missing "
        "(and 1 more problems)"
    )
    assert fix == "the key $.name is required; write the file again with this pytest-niah"


def test_an_unknown_key_alone_is_named_with_its_removal():
    problem, fix = _described({"schema_version": 3, "name": "a", "rows": [], "extra": 1})
    assert problem == "f.json: not a valid pytest-niah results file: at $.extra, unknown key"
    assert fix == "remove $.extra, or write the file again with this pytest-niah"


def test_another_problem_is_pydantics_message_in_lower_case_at_its_path():
    problem, fix = _described({"schema_version": 3, "name": "a", "rows": [1, "x"]}, RunDocument)
    assert problem == (
        "f.json: not a valid pytest-niah saved run: at $.rows[1], "
        "input should be a valid integer, unable to parse string as an integer"
    )
    assert fix == "write the file again with --niah-json, --niah-save or NiahResults.save"


def _error(*lines: tuple[str, tuple]) -> ValidationError:
    """A validation error whose problems come in the order given (pydantic's own order
    differs between its releases)."""
    details = [
        {"type": kind, "loc": loc, "input": None}
        | ({"ctx": {"expected": "3"}} if kind == "literal_error" else {})
        for kind, loc in lines
    ]
    return ValidationError.from_exception_data("_Doc", details)


@pytest.mark.parametrize(
    ("lines", "named"),
    [
        ([("extra_forbidden", ("extra",)), ("missing", ("name",))], "at $.name, required key"),
        ([("missing", ("name",)), ("literal_error", ("schema_version",))], "at $.schema_version"),
        ([("extra_forbidden", ("x",)), ("literal_error", ("schema_version",))], "$.schema_version"),
    ],
)
def test_the_problem_named_first_does_not_depend_on_pydantics_order(lines, named):
    problem, _ = describe(_error(*lines), "f.json", _Doc)
    assert named in problem


def test_a_results_file_of_another_version_is_told_to_be_written_again():
    from pytest_niah.results.results_schema import ResultsDocument

    with pytest.raises(ValidationError) as raised:
        ResultsDocument.model_validate({"schema_version": 999})
    problem, fix = describe(raised.value, "f.json", ResultsDocument)
    assert "at $.schema_version, results schema version 999 is not" in problem
    assert fix == "write the file again with this pytest-niah (--niah-json, --niah-save)"
