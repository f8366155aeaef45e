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

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    model_validator,
)

from pytest_niah.inputs.schema_values import (
    INPUT_SCHEMA_VERSION,
    NAME_PATTERN,
    SLUG_PATTERN,
    TEMPLATE_PATTERN,
    TERM_PATTERN,
    TEXT_PATTERN,
    Name,
    SchemaRef,
    Slug,
    StrictModel,
    Template,
    Term,
    Text,
    Version,
    schema_error,
)
from pytest_niah.inputs.words import (
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


def _check_unique_names(names: list[str]) -> list[str]:
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise schema_error("duplicate_names", "duplicate names", names=duplicates)
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
        raise schema_error("duplicate_terms", "duplicate terms", repeats=repeats)
    return terms


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
                raise schema_error(
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
                raise schema_error(
                    "duplicate_id", "duplicate id", at=("groups", index, "id"), first=seen[group.id]
                )
            seen[group.id] = index
        context = info.context if isinstance(info.context, Mapping) else {}
        if "names" in self.model_fields_set:
            names: Sequence[str] = self.names
            builtin = False
        else:
            if context.get("require_names"):
                raise schema_error("names_required", "names are required", at=("names",))
            names = context.get("default_names", ())
            builtin = True
        words = [(group.id, _group_words(group)) for group in self.groups]
        for index, name in enumerate(names):
            name_stems = content_words(name)
            for group_id, group_words in words:
                for what, word, word_stem in group_words:
                    if any(stems_match(word_stem, own) for own in name_stems):
                        raise schema_error(
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
