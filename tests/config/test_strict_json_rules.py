"""Rules of ``config/strict_json.py`` beside the strict-reading tests (issue 34, item 6)."""

from __future__ import annotations

import json

import pytest

from pytest_niah.config.strict_json import check_value, json_path, strict_loads
from pytest_niah.errors import NiahError
from pytest_niah.inputs.expansions import load_expansions


class _Generic(NiahError):
    pass


class _Repeated(NiahError):
    pass


def _fail(problem: str, hint: str, path: str | None) -> NiahError:
    return _Generic(problem, hint)


def test_a_repeated_key_is_the_caller_s_own_error_when_it_gives_one():
    # Found (mutation seed 1414629215, strict_json.py:124): a reader that builds its own
    # repeated-key error (the expansions file's names the group) gets it, not the generic.
    with pytest.raises(_Repeated) as info:
        strict_loads('{"a": 1, "b": 2, "a": 3}', _fail, duplicate=lambda key: _Repeated(key))
    assert info.value.problem == "a"
    with pytest.raises(_Generic) as generic:
        strict_loads('{"a": 1, "b": 2, "a": 3}', _fail)
    assert (
        'the key "a" appears twice' in generic.value.problem
        and generic.value.hint == "keep the key once."
    )


def test_an_expansions_file_repeating_a_group_says_to_merge_its_term_lists(tmp_path):
    path = tmp_path / "expansions.json"
    path.write_text(
        '{"schema_version": 1, "name": "x", "description": "d", "expansions": '
        '{"dietary-01": ["pork"], "dietary-01": ["halal"]}}',
        encoding="utf-8",
    )
    with pytest.raises(NiahError) as info:
        load_expansions(path)
    assert "dietary-01" in info.value.problem
    assert "merge the two term lists" in info.value.hint


def test_keys_that_are_not_text_are_passed_over_and_text_keys_checked():
    # Found (mutation, strict_json.py:213 the `isinstance(key, str)` check deleted): a YAML
    # needle file may have number keys; they hold no surrogate to refuse. A text key with a
    # lone surrogate is still refused.
    check_value({1: "x", "caf\u00e9": {2: ["y", {3.5: None}]}}, _fail)
    with pytest.raises(_Generic):
        check_value({1: {"bad\ud800": 1}}, _fail)


def test_a_lone_surrogate_in_a_string_inside_a_list_or_a_mapping_is_refused():
    # Found (mutation, strict_json.py:219 and :225, the string clause cut to `not str`):
    # strings that are not ASCII are visited wherever they sit, ASCII ones need not be.
    for value in (["ok", "bad\ud800"], {"k": "bad\ud800"}, {"k": ["ok", {"j": "\udfff"}]}):
        with pytest.raises(_Generic):
            check_value(value, _fail)
    check_value(["caf\u00e9", {"k": "na\u00efve"}], _fail)


def test_a_refused_string_is_located_by_its_path_and_a_bare_one_by_none():
    # Found (mutation, strict_json.py:245 `json_path(loc) or None` -> `json_path(loc)`): a
    # string at the top of the value has no path: None, not "" (a caller tells them apart).
    paths: list[str | None] = []

    def recording(problem: str, hint: str, path: str | None) -> NiahError:
        paths.append(path)
        return _Generic(problem, hint)

    for value in ("bad\ud800", {"k": ["ok", "bad\ud800"]}):
        with pytest.raises(_Generic):
            check_value(value, recording)
    assert paths[0] is None and paths[1]


def test_a_location_names_every_index_and_every_key_that_is_not_plain():
    # Found (mutation, strict_json.py:64 and :68, an append deleted): an error's location
    # keeps list indexes and bracketed keys, so it leads to the value at fault.
    assert json_path(["groups", 3, "needles", "onehop"]) == "groups[3].needles.onehop"
    assert json_path(["expansions", "Location 1", 0]) == 'expansions["Location 1"][0]'
    assert json_path([2, "caf\u00e9"]) == '[2]["caf\\u00e9"]'


def _nested(levels: int, inner: str = "1") -> str:
    return "[" * levels + inner + "]" * levels


def test_parsed_text_is_checked_for_depth_and_lone_surrogates_at_the_32_level_limit():
    # Found (mutation sweep mutA, strict_json.py:141 the check after parsing deleted, :42
    # MAX_DEPTH 32 -> 33, :252 the too-deep error's return lost): 32 levels of arrays read,
    # 33 are refused with the caller's error naming the limit; a lone surrogate escape that
    # json itself reads is refused too.
    assert strict_loads(_nested(32), _fail) == json.loads(_nested(32))
    with pytest.raises(_Generic) as deep:
        strict_loads(_nested(33), _fail)
    assert "more than 32 levels deep" in deep.value.problem
    assert deep.value.hint == (
        "check that the file is the data file you meant, and that brackets are balanced."
    )
    with pytest.raises(_Generic) as value:
        strict_loads(_nested(33), _fail, what="the value")
    assert value.value.problem.startswith("the value nests")
    assert value.value.hint == "check that brackets are balanced."
    with pytest.raises(_Generic, match=r"\\ud800"):
        strict_loads('{"k": ["ok", "bad\\ud800"]}', _fail)


def test_each_refusal_of_a_text_is_the_caller_s_error_saying_what_and_where():
    # Found (mutation sweep mutA, strict_json.py:88 and :126, a raise deleted; :234 the
    # key flag's default): bad UTF-8 and bad syntax are the caller's error naming the byte
    # or the line and column; a lone surrogate in a value is "the string", in a key "a key".
    with pytest.raises(_Generic) as utf8:
        strict_loads(b'{"a": "\xff"}', _fail)
    assert utf8.value.problem == "the file is not valid UTF-8 (bad byte at offset 7)."
    with pytest.raises(_Generic) as syntax:
        strict_loads('{"a": 1,}', _fail, what="the value")
    assert syntax.value.problem.startswith("the value is not valid JSON: ")
    assert syntax.value.problem.endswith(" at line 1, column 9.")
    with pytest.raises(_Generic) as string:
        strict_loads('["\\udc00"]', _fail)
    assert string.value.problem.startswith("the string holds the escape \\udc00 at character 0")
    with pytest.raises(_Generic) as key:
        strict_loads('{"k\\ud800": 1}', _fail)
    assert key.value.problem.startswith("a key of this object holds the escape \\ud800")


def test_numbers_json_reads_leniently_are_refused_and_a_long_one_is_shown_cut():
    # NaN and Infinity, a float that overflows, and an integer of more than 4,300 digits.
    for text, words in (
        ("[NaN]", "NaN is not a JSON value"),
        ("[-Infinity]", "-Infinity is not a JSON value"),
        ("[1e999]", "the number 1e999 is too large"),
        ("[" + "9" * 5000 + "]", "holds a value that cannot be read"),
    ):
        with pytest.raises(_Generic, match=words):
            strict_loads(text, _fail)
    shown = "1" * 29 + "e999"  # 33 characters: the first 30 and "..."
    with pytest.raises(_Generic) as long:
        strict_loads(f"[{shown}]", _fail)
    assert f"the number {shown[:30]}... is too large" in long.value.problem
    exact = "1" * 26 + "e999"  # 30 characters: shown whole
    with pytest.raises(_Generic, match=f"the number {exact} is too large"):
        strict_loads(f"[{exact}]", _fail)
    one_more = "1" * 27 + "e999"  # 31 characters: cut
    with pytest.raises(_Generic, match=f"the number {one_more[:30]}\\.\\.\\. is too large"):
        strict_loads(f"[{one_more}]", _fail)
    assert strict_loads("\ufeff[1.5]", _fail) == [1.5]  # a byte order mark is dropped
    assert strict_loads(b"\xef\xbb\xbf[2]", _fail) == [2]


def test_nesting_too_deep_for_the_parser_itself_is_the_same_refusal():
    # Found (mutation sweep mutA, strict_json.py:133 the RecursionError's raise deleted):
    # json's own recursion limit is met long before the walk; it reads as the depth refusal.
    with pytest.raises(_Generic, match="more than 32 levels deep"):
        strict_loads("[" * 100_000 + "]" * 100_000, _fail)


def test_an_empty_array_or_object_at_the_limit_holds_no_deeper_value_and_reads():
    # Found (mutation sweep mutA, strict_json.py:229 the `item and` clause dropped): the
    # limit is on values: 32 levels may end in an empty array or object (nothing deeper).
    assert strict_loads(_nested(32, "[]"), _fail) == json.loads(_nested(32, "[]"))
    assert strict_loads(_nested(32, "{}"), _fail) == json.loads(_nested(32, "{}"))
    with pytest.raises(_Generic, match="more than 32 levels deep"):
        strict_loads(_nested(32, "[1]"), _fail)
