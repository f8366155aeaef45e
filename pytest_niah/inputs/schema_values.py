"""The values of needle and expansion sets: the string kinds, the version, the strict model.

Each kind is a JSON Schema pattern (ECMA-262 and Python read them alike) and a validator
that checks the same rule with a more specific message; a test keeps the two in step. A
failed check raises :func:`schema_error`, whose kind and context
:func:`~pytest_niah.inputs.schema_messages.to_error` turns into a message.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, WithJsonSchema
from pydantic_core import PydanticCustomError

from pytest_niah.inputs.words import NAME_PLACEHOLDER

INPUT_SCHEMA_VERSION = 1


SLUG_PATTERN = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"
TEXT_PATTERN = r"\S"
NAME_PATTERN = r"^[^\s{}](?:[^{}]*[^\s{}])?$"
TEMPLATE_PATTERN = r"^[^{}]*\{name\}[^{}]*$"
TERM_PATTERN = r"^[^{}]*[^\s{}][^{}]*$"

SLUG_RE = re.compile(SLUG_PATTERN)
SLUG_WORDS = "lowercase letters and digits, words joined by single '-' or '_'"


def schema_error(kind: str, message: str, **context: Any) -> PydanticCustomError:
    """A custom error; ``schema_messages.to_error`` writes its message from its kind and context."""
    return PydanticCustomError(kind, message, context)


def _check_text(value: str) -> str:
    if not value.strip():
        raise schema_error("empty_text", "the string is empty")
    return value


def _check_slug(value: str) -> str:
    if not SLUG_RE.fullmatch(value):
        raise schema_error("not_slug", "not a slug")
    return value


def _check_name(value: str) -> str:
    if not value.strip() or value != value.strip() or "{" in value or "}" in value:
        raise schema_error("bad_name", "not a plain name")
    return value


def _check_template(value: str) -> str:
    count = value.count(NAME_PLACEHOLDER)
    if count != 1:
        raise schema_error("placeholder_count", "wrong placeholder count", count=count)
    rest = value.replace(NAME_PLACEHOLDER, "")
    if "{" in rest or "}" in rest:
        raise schema_error("stray_brace", "stray brace")
    return value


def _check_term(value: str) -> str:
    _check_text(value)
    if "{" in value or "}" in value:
        raise schema_error("brace_term", "brace in a term")
    return value


def _check_version(value: int) -> int:
    if value != INPUT_SCHEMA_VERSION:
        raise schema_error("schema_version", "unsupported schema version")
    return value


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
    """Strict: no number is taken for a string, no unknown key is ignored, no field changes."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
