"""The pydantic models of needle sets and expansion sets: the one definition of both formats.

The models validate strictly (no number is taken for a string, no unknown key is ignored).
A few rules span several values and have no JSON Schema form; the models check them after
the per-value checks:

* every group id is used once;
* a one-hop needle shares no content word with its question (see
  :mod:`pytest_niah.inputs.words` for when two words are the same);
* no character name matches a word of a group's question, keywords or answer cues;
* an expansion group repeats no term (compared case-insensitively).

A failed check raises a pydantic custom error whose type and context
:func:`~pytest_niah.inputs.schema_messages.to_error` turns into a message. The JSON
Schemas made from these models are in :mod:`pytest_niah.inputs.schema`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pytest_niah.inputs.words import (
    NAME_PLACEHOLDER,
    content_forms,
    content_words,
    shared_content_words,
    stems_match,
)

__all__ = [
    "INPUT_SCHEMA_VERSION",
    "NAME_PATTERN",
    "SLUG_PATTERN",
    "TEMPLATE_PATTERN",
    "TERM_PATTERN",
    "TEXT_PATTERN",
    "ExpansionSetModel",
    "GroupModel",
    "NeedleOrders",
    "NeedleSetModel",
    "Needles",
]

INPUT_SCHEMA_VERSION = 1


# The JSON Schema patterns (ECMA-262 and Python read them alike). The validators below
# implement the same rules with more specific messages; a test keeps the two in step.
SLUG_PATTERN = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"
TEXT_PATTERN = r"\S"
NAME_PATTERN = r"^[^\s{}](?:[^{}]*[^\s{}])?$"
TEMPLATE_PATTERN = r"^[^{}]*\{name\}[^{}]*$"
TERM_PATTERN = r"^[^{}]*[^\s{}][^{}]*$"

SLUG_RE = re.compile(SLUG_PATTERN)
SLUG_WORDS = "lowercase letters and digits, words joined by single '-' or '_'"


# --------------------------------------------------------------------------- value types


def _fail(kind: str, message: str, **context: Any) -> PydanticCustomError:
    """A custom error; ``schema_messages.to_error`` writes its message from its kind and context."""
    return PydanticCustomError(kind, message, context)


def _check_text(value: str) -> str:
    if not value.strip():
        raise _fail("empty_text", "the string is empty")
    return value


def _check_slug(value: str) -> str:
    if not SLUG_RE.fullmatch(value):
        raise _fail("not_slug", "not a slug")
    return value


def _check_name(value: str) -> str:
    if not value.strip() or value != value.strip() or "{" in value or "}" in value:
        raise _fail("bad_name", "not a plain name")
    return value


def _check_template(value: str) -> str:
    count = value.count(NAME_PLACEHOLDER)
    if count != 1:
        raise _fail("placeholder_count", "wrong placeholder count", count=count)
    rest = value.replace(NAME_PLACEHOLDER, "")
    if "{" in rest or "}" in rest:
        raise _fail("stray_brace", "stray brace")
    return value


def _check_term(value: str) -> str:
    _check_text(value)
    if "{" in value or "}" in value:
        raise _fail("brace_term", "brace in a term")
    return value


def _check_version(value: int) -> int:
    if value != INPUT_SCHEMA_VERSION:
        raise _fail("schema_version", "unsupported schema version")
    return value


def _check_unique_names(names: list[str]) -> list[str]:
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise _fail("duplicate_names", "duplicate names", names=duplicates)
    return names


def _check_unique_terms(terms: list[str]) -> list[str]:
    first_seen: dict[str, int] = {}
    repeats: list[str] = []
    for index, term in enumerate(terms):
        key = term.strip().casefold()
        if key in first_seen:
            repeats.append(f"{term.strip()!r} (items {first_seen[key]} and {index})")
        else:
            first_seen[key] = index
    if repeats:
        raise _fail("duplicate_terms", "duplicate terms", repeats=repeats)
    return terms


def _string(pattern: str, description: str) -> WithJsonSchema:
    return WithJsonSchema({"type": "string", "pattern": pattern, "description": description})


Text = Annotated[
    str, AfterValidator(_check_text), _string(TEXT_PATTERN, "Text with at least one non-space.")
]
Slug = Annotated[
    str,
    AfterValidator(_check_slug),
    _string(SLUG_PATTERN, f"A slug: {SLUG_WORDS}, e.g. fast-food-01, pets_3, q7."),
]
Name = Annotated[
    str,
    AfterValidator(_check_name),
    _string(NAME_PATTERN, "A character name: no braces, no space at either end."),
]
Template = Annotated[
    str,
    AfterValidator(_check_template),
    _string(
        TEMPLATE_PATTERN,
        "One sentence holding the placeholder {name} exactly once and no other brace.",
    ),
]
Term = Annotated[
    str,
    AfterValidator(_check_term),
    _string(TERM_PATTERN, "A plain phrase: at least one non-space, no braces."),
]
Version = Annotated[
    int,
    AfterValidator(_check_version),
    WithJsonSchema(
        {
            "type": "integer",
            "const": INPUT_SCHEMA_VERSION,
            "description": (
                f"The file format's version; this pytest-niah reads {INPUT_SCHEMA_VERSION}."
            ),
        }
    ),
]
SchemaRef = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "description": "The JSON Schema of the file, for editors (ignored on load).",
        }
    ),
]


class StrictModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# --------------------------------------------------------------------------- needle sets


class NeedleOrders(StrictModel):
    """The two word orders of one needle kind."""

    model_config = ConfigDict(title="Needle word orders")

    default: Template = Field(description="The needle in its natural word order.")
    inverted: Template = Field(
        description="The same statement with the answer's key term on the other side of {name}."
    )


class Needles(StrictModel):
    """The needle templates of a group: every kind in every word order."""

    model_config = ConfigDict(title="Needles")

    onehop: NeedleOrders = Field(
        description="Answers the question only through world knowledge: shares no content "
        "word (nor a form or derivation of one) with the question."
    )
    literal: NeedleOrders = Field(description="Answers the question with its own key words.")


class GroupModel(StrictModel):
    """One question and the needles that answer it."""

    model_config = ConfigDict(title="Needle group")

    id: Slug = Field(description="The group's id, unique in the set, e.g. pet-01.")
    category: Slug = Field(description="The group's category, e.g. pet; selects groups.")
    question: Text = Field(description='The question, e.g. "Which character owns a parrot?".')
    keywords: Annotated[list[Text], Field(min_length=1)] = Field(
        description="The question's key words (lowercased on load); book snippets that "
        "mention them are kept out of haystacks."
    )
    answer_cues: list[Text] = Field(
        description="Words that give the one-hop answer away (lowercased on load); also "
        "kept out of haystacks."
    )
    needles: Needles
    expansion_terms: list[Text] = Field(
        default_factory=list, description="Optional extra query terms."
    )

    @model_validator(mode="after")
    def _check_onehop(self) -> GroupModel:
        for order in ("default", "inverted"):
            template: str = getattr(self.needles.onehop, order)
            if shared_content_words(self.question, template):
                raise _fail(
                    "onehop_shares",
                    "the one-hop needle shares a content word with the question",
                    at=("needles", "onehop", order),
                    question=self.question,
                    template=template,
                )
        return self


class NeedleSetModel(StrictModel):
    """A pytest-niah needle set: questions, needles that answer them, character names.

    Rules beyond this schema, checked on load: group ids are unique; a one-hop needle
    shares no content word (nor a form or derivation of one) with its question; no
    character name matches a word of a group's question, keywords or answer cues.
    """

    model_config = ConfigDict(title="pytest-niah needle set")

    schema_ref: SchemaRef = Field(default="", alias="$schema")
    schema_version: Version
    name: Text = Field(description="The set's name.")
    description: str = Field(default="", description="Free text.")
    names: Annotated[list[Name], Field(min_length=1), AfterValidator(_check_unique_names)] = Field(
        default_factory=list,
        description="Character names for the {name} placeholder; each once. Leave the "
        "key out to use the built-in names.",
        json_schema_extra={"uniqueItems": True},
    )
    groups: Annotated[list[GroupModel], Field(min_length=1)] = Field(
        description="The needle groups."
    )

    @model_validator(mode="after")
    def _check_set(self, info: ValidationInfo) -> NeedleSetModel:
        seen: dict[str, int] = {}
        for index, group in enumerate(self.groups):
            if group.id in seen:
                raise _fail(
                    "duplicate_id", "duplicate id", at=("groups", index, "id"), first=seen[group.id]
                )
            seen[group.id] = index
        context = info.context if isinstance(info.context, Mapping) else {}
        if "names" in self.model_fields_set:
            names: Sequence[str] = self.names
            builtin = False
        else:
            if context.get("require_names"):
                raise _fail("names_required", "names are required", at=("names",))
            names = context.get("default_names", ())
            builtin = True
        words = [(group.id, _group_words(group)) for group in self.groups]
        for index, name in enumerate(names):
            name_stems = content_words(name)
            for group_id, group_words in words:
                for what, word, word_stem in group_words:
                    if any(stems_match(word_stem, own) for own in name_stems):
                        raise _fail(
                            "name_collision",
                            "a name matches a word of a group",
                            at=("names",) if builtin else ("names", index),
                            name=name,
                            what=what,
                            word=word,
                            group=group_id,
                            builtin=builtin,
                        )
        return self


def _group_words(group: GroupModel) -> list[tuple[str, str, str]]:
    """``(where, word, stem)`` of the content words of a question, keywords and cues."""
    sources = [("question", group.question)]
    sources += [("keyword", keyword) for keyword in group.keywords]
    sources += [("answer cue", cue) for cue in group.answer_cues]
    found = []
    for what, text in sources:
        for word_stem, word in content_forms(text).items():
            found.append((what, word, word_stem))
    return found


# --------------------------------------------------------------------------- expansion sets


def _expansions_schema(schema: dict[str, Any]) -> None:
    """Spell the group-id keys as propertyNames, so that other keys are refused too."""
    patterns = schema.pop("patternProperties", None)
    if isinstance(patterns, dict) and len(patterns) == 1:
        (terms,) = patterns.values()
        terms["uniqueItems"] = True
        schema["propertyNames"] = {"pattern": SLUG_PATTERN}
        schema["additionalProperties"] = terms


TermList = Annotated[list[Term], Field(min_length=1), AfterValidator(_check_unique_terms)]


class ExpansionSetModel(StrictModel):
    """A pytest-niah expansion set: ordered query-expansion terms per needle group.

    The first N terms of a group are its N-term expansion (arms expand100, expand150,
    expand250), so order matters: most relevant first. Beyond this schema, checked on
    load: a group repeats no term, compared case-insensitively.
    """

    model_config = ConfigDict(title="pytest-niah expansion set")

    schema_ref: SchemaRef = Field(default="", alias="$schema")
    schema_version: Version
    name: Text = Field(description="The set's name.")
    description: str = Field(default="", description="Free text.")
    expansions: Annotated[dict[Slug, TermList], Field(min_length=1)] = Field(
        description="Needle group id -> its terms, most relevant first.",
        json_schema_extra=_expansions_schema,
    )
