"""One describer per pydantic error type: the problem sentence and the fix of one error.

:func:`~pytest_niah.inputs.schema_messages.to_error` picks the problem to report and calls
:func:`describe`; a fix that needs an id or a category is suggested there instead.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from pytest_niah.inputs.jsonfile import json_type
from pytest_niah.inputs.schema_problems import (
    ProblemCase,
    allowed_keys,
    keys_at,
    quote_value,
)
from pytest_niah.inputs.schema_values import INPUT_SCHEMA_VERSION, SLUG_WORDS
from pytest_niah.inputs.suggest import slugify
from pytest_niah.inputs.words import (
    NAME_PLACEHOLDER,
    hidden_characters,
    matching_words,
    shared_content_words,
)


def _describe_missing(case: ProblemCase) -> tuple[str, str]:
    in_needles = "needles" in case.loc[:-1]
    where = "entry" if in_needles else "top-level key" if case.top_level else "key"
    return f"the required {where} is missing.", f'add "{case.problem.key}": {case.example}.'


def _describe_extra(case: ProblemCase) -> tuple[str, str]:
    allowed = allowed_keys(case.spec, case.loc[:-1])
    key = str(case.problem.key)
    hint = [case.rename] if case.rename else difflib.get_close_matches(key, allowed, n=1)
    if not hint:
        fix = "remove it"
    elif hint[0] in keys_at(case.data, case.loc[:-1]):
        fix = f"remove it ('{hint[0]}' is there already)"
    else:
        fix = f"rename it to '{hint[0]}' if that was meant"
    top = "top-level " if case.top_level else ""
    return (
        f"unknown {top}key (keys are checked to catch typos).",
        f"{fix}; the allowed keys are: {', '.join(allowed)}.",
    )


_LIST_NOUNS = {"groups": "groups", "names": "names"}


def _describe_type(case: ProblemCase) -> tuple[str, str]:
    got = json_type(case.problem.input)
    kind = case.problem.type
    if case.loc == ("schema_version",):
        value = case.problem.input
        shown = f" {quote_value(value)}" if isinstance(value, (str, int, float)) else ""
        return (
            f"expected the number {INPUT_SCHEMA_VERSION}, got {got}{shown}.",
            f'set "schema_version": {INPUT_SCHEMA_VERSION} (a JSON number, not in quotes).',
        )
    if kind == "string_type":
        return f"expected a string, got {got}.", f"write it as a JSON string, e.g. {case.example}."
    if kind == "list_type":
        noun = "terms" if case.loc[:1] == ("expansions",) else "strings"
        noun = _LIST_NOUNS.get(str(case.problem.key), noun)
        return (
            f"expected an array of {noun}, got {got}.",
            f"make it a JSON array, e.g. {case.example}.",
        )
    if kind == "int_type":
        return f"expected a whole number, got {got}.", f"write a number, e.g. {case.example}."
    if not case.loc:
        return (
            f"expected a JSON object, got {got}.",
            f"make the file one JSON object: {case.example}.",
        )
    return f"expected a JSON object, got {got}.", f"make it a JSON object, e.g. {case.example}."


def _describe_too_short(case: ProblemCase) -> tuple[str, str]:
    if case.loc == ("groups",):
        return "the set has no groups.", f"add at least one needle group, e.g. {case.example}."
    if case.loc == ("expansions",):
        return (
            "the set has no groups.",
            f"add at least one group id with its terms, e.g. {case.example}.",
        )
    if case.loc == ("names",):
        return (
            "expected a non-empty array of names, got an empty array.",
            "list character first names, or leave out the names key to use the built-in names.",
        )
    if case.loc[:1] == ("expansions",):
        return (
            "the term list is empty.",
            f"add the group's terms, most relevant first, e.g. {case.example}.",
        )
    return "the list is empty.", f"add at least one lowercase word, e.g. {case.example}."


def _describe_empty(case: ProblemCase) -> tuple[str, str]:
    got = "an empty string" if case.problem.input == "" else "a string of spaces only"
    return f"expected a non-empty string, got {got}.", f"write a text value, e.g. {case.example}."


def _describe_slug(case: ProblemCase) -> tuple[str, str]:
    value = str(case.problem.input)
    if case.problem.key_error:
        what = "group id"
    else:
        what = {"id": "id", "category": "category"}.get(str(case.problem.key), "value")
    return (
        f"the {what} {quote_value(value)} is not a slug ({SLUG_WORDS}).",
        f"use a slug such as '{slugify(value) or 'pet-01'}'.",
    )


def _describe_version(case: ProblemCase) -> tuple[str, str]:
    return (
        f"unsupported schema version {quote_value(case.problem.input)}; this pytest-niah reads "
        f"version {INPUT_SCHEMA_VERSION}.",
        f'set "schema_version": {INPUT_SCHEMA_VERSION} and check the file against the published '
        f"schema ({case.spec.schema}).",
    )


def _describe_template(case: ProblemCase) -> tuple[str, str]:
    template = quote_value(case.problem.input, limit=120)
    if case.problem.type == "placeholder_count":
        return (
            f"the needle must contain the placeholder {NAME_PLACEHOLDER} exactly once, found it "
            f"{case.problem.ctx['count']} times in {template}.",
            f"write {NAME_PLACEHOLDER} (lowercase, in braces) once where the character's name "
            "goes.",
        )
    return (
        f"the needle has a stray brace besides {NAME_PLACEHOLDER}: {template}.",
        f"remove the brace or fix the misspelled placeholder; only {NAME_PLACEHOLDER} is allowed.",
    )


def _describe_value(case: ProblemCase) -> tuple[str, str]:
    problem = case.problem
    if problem.type == "bad_name":
        return (
            f"bad name {quote_value(problem.input)}.",
            "use a plain name without braces or edge spaces.",
        )
    if problem.type == "brace_term":
        return (
            f"the term {quote_value(problem.input)} contains a brace.",
            "write plain words; expansion terms take no placeholders.",
        )
    if problem.type == "duplicate_names":
        return (
            f"duplicate names: {', '.join(problem.ctx['names'])}.",
            "list each name once (duplicates would skew the seeded name draw).",
        )
    return (
        f"duplicate terms (compared case-insensitively): {', '.join(problem.ctx['repeats'])}.",
        "keep each term once; a repeat would count twice in the first-N expansions.",
    )


def _describe_onehop(case: ProblemCase) -> tuple[str, str]:
    question, template = case.problem.ctx["question"], case.problem.ctx["template"]
    shared = sorted(shared_content_words(question, template))
    forms = [
        f"'{in_needle}' for '{in_question}'"
        for in_question, in_needle in matching_words(question, template)
        if in_question != in_needle
    ]
    how = f"stemmed; the needle has {', '.join(forms)}" if forms else "stemmed"
    hidden = hidden_characters(template)
    if hidden:
        how += f"; read without the hidden character(s) {', '.join(hidden)}, as a tokenizer does"
    return (
        f"the one-hop needle shares the content word(s) {', '.join(shared)} ({how}) with the "
        f"question {quote_value(question, limit=120)}.",
        "reword the needle so it answers the question only through world knowledge (no word, "
        "or word form, of the question); a needle that repeats the question's words belongs "
        "in needles.literal.",
    )


def _describe_rule(case: ProblemCase) -> tuple[str, str]:
    problem = case.problem
    if problem.type == "duplicate_id":
        return (
            f"the id is used by more than one group (first at groups[{problem.ctx['first']}]).",
            "give every group its own id.",
        )
    if problem.type == "names_required":
        return "the built-in set must list its names.", "add a names array."
    ctx = problem.ctx
    name = quote_value(ctx["name"])
    clash = (
        f"matches the {ctx['what']} word '{ctx['word']}' of this group, so a needle with that "
        "name would give the answer away"
    )
    if ctx["builtin"]:
        return (
            f"the built-in name {name} (used because the set has no names) {clash}.",
            f'add a "names" array of your own that leaves out {name}.',
        )
    return (
        f"the character name {name} {clash}.",
        f"remove {name} from names, or replace it with a name that is no word of any group.",
    )


def _describe_other(case: ProblemCase) -> tuple[str, str]:
    return (
        f"the value {quote_value(case.problem.input)} is not valid ({case.problem.type}).",
        f"check the value against the published schema ({case.spec.schema}).",
    )


DESCRIBERS: dict[str, Callable[[ProblemCase], tuple[str, str]]] = {
    "missing": _describe_missing,
    "extra_forbidden": _describe_extra,
    "string_type": _describe_type,
    "int_type": _describe_type,
    "list_type": _describe_type,
    "dict_type": _describe_type,
    "model_type": _describe_type,
    "model_attributes_type": _describe_type,
    "too_short": _describe_too_short,
    "empty_text": _describe_empty,
    "not_slug": _describe_slug,
    "schema_version": _describe_version,
    "placeholder_count": _describe_template,
    "stray_brace": _describe_template,
    "bad_name": _describe_value,
    "brace_term": _describe_value,
    "duplicate_names": _describe_value,
    "duplicate_terms": _describe_value,
    "onehop_shares": _describe_onehop,
    "duplicate_id": _describe_rule,
    "names_required": _describe_rule,
    "name_collision": _describe_rule,
}


def describe(case: ProblemCase) -> tuple[str, str]:
    """The problem sentence and the fix of one error, by its pydantic error type."""
    return DESCRIBERS.get(case.problem.type, _describe_other)(case)
