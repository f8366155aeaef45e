"""The file formats of needle sets and expansion sets: pydantic models and JSON Schemas.

The models are the one definition of both formats. They validate strictly (no number is
taken for a string, no unknown key is ignored) and their JSON Schemas are published in
``pytest_niah/data/schemas/`` for editors and other tools (:func:`schema_json`
regenerates them: ``python -m pytest_niah.inputs.schema``). A few rules span several
values and have no JSON Schema form; the models check them after the per-value checks:

* every group id is used once;
* a one-hop needle shares no content word with its question (see
  :mod:`pytest_niah.inputs.words` for when two words are the same);
* no character name matches a word of a group's question, keywords or answer cues;
* an expansion group repeats no term (compared case-insensitively).

:func:`to_error` turns a pydantic :class:`~pydantic.ValidationError` into one
:class:`~pytest_niah.errors.DataFileError` that names the file, the group, the JSON path
and a fix that works.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pytest_niah.errors import DataFileError
from pytest_niah.inputs.jsonfile import json_path, json_type
from pytest_niah.inputs.words import (
    NAME_PLACEHOLDER,
    content_forms,
    content_words,
    matching_words,
    shared_content_words,
    stems_match,
)

__all__ = [
    "NAME_PATTERN",
    "SCHEMA_KINDS",
    "SCHEMA_VERSION",
    "SLUG_PATTERN",
    "TEMPLATE_PATTERN",
    "TERM_PATTERN",
    "TEXT_PATTERN",
    "ExpansionSetModel",
    "GroupModel",
    "NeedleSetModel",
    "SchemaKind",
    "main",
    "schema_dict",
    "schema_json",
    "schema_path",
    "slugify",
    "suggest_category",
    "suggest_id",
    "to_error",
    "write_schemas",
]

SCHEMA_VERSION = 1
SchemaKind = Literal["needle-set", "expansion-set"]
SCHEMA_KINDS: tuple[SchemaKind, ...] = ("needle-set", "expansion-set")

# The JSON Schema patterns (ECMA-262 and Python read them alike). The validators below
# implement the same rules with more specific messages; a test keeps the two in step.
SLUG_PATTERN = r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$"
TEXT_PATTERN = r"\S"
NAME_PATTERN = r"^[^\s{}](?:[^{}]*[^\s{}])?$"
TEMPLATE_PATTERN = r"^[^{}]*\{name\}[^{}]*$"
TERM_PATTERN = r"^[^{}]*[^\s{}][^{}]*$"

_SLUG_RE = re.compile(SLUG_PATTERN)
_SLUG_WORDS = "lowercase letters and digits, words joined by single '-' or '_'"


# --------------------------------------------------------------------------- value types


def _fail(kind: str, message: str, **context: Any) -> PydanticCustomError:
    """A custom error; :func:`to_error` writes its message from ``kind`` and ``context``."""
    return PydanticCustomError(kind, message, context)


def _check_text(value: str) -> str:
    if not value.strip():
        raise _fail("empty_text", "the string is empty")
    return value


def _check_slug(value: str) -> str:
    if not _SLUG_RE.fullmatch(value):
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
    if value != SCHEMA_VERSION:
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
    _string(SLUG_PATTERN, f"A slug: {_SLUG_WORDS}, e.g. fast-food-01, pets_3, q7."),
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
            "const": SCHEMA_VERSION,
            "description": f"The file format's version; this pytest-niah reads {SCHEMA_VERSION}.",
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


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# --------------------------------------------------------------------------- needle sets


class NeedleOrders(_Model):
    """The two word orders of one needle kind."""

    model_config = ConfigDict(title="Needle word orders")

    default: Template = Field(description="The needle in its natural word order.")
    inverted: Template = Field(
        description="The same statement with the answer's key term on the other side of {name}."
    )


class Needles(_Model):
    """The needle templates of a group: every kind in every word order."""

    model_config = ConfigDict(title="Needles")

    onehop: NeedleOrders = Field(
        description="Answers the question only through world knowledge: shares no content "
        "word (nor a form or derivation of one) with the question."
    )
    literal: NeedleOrders = Field(description="Answers the question with its own key words.")


class GroupModel(_Model):
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


class NeedleSetModel(_Model):
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


class ExpansionSetModel(_Model):
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


# --------------------------------------------------------------------------- JSON Schemas

_SCHEMA_MODELS: dict[SchemaKind, type[_Model]] = {
    "needle-set": NeedleSetModel,
    "expansion-set": ExpansionSetModel,
}
_SCHEMA_IDS: dict[SchemaKind, str] = {
    kind: f"urn:pytest-niah:schema:{kind}:{SCHEMA_VERSION}" for kind in SCHEMA_KINDS
}


def schema_dict(kind: SchemaKind) -> dict[str, Any]:
    """Return the JSON Schema (draft 2020-12) of a file format, from its pydantic model."""
    schema = _SCHEMA_MODELS[kind].model_json_schema(mode="validation", by_alias=True)
    _drop_field_titles(schema)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _SCHEMA_IDS[kind],
        **schema,
    }


def _drop_field_titles(schema: dict[str, Any]) -> None:
    """Remove the titles pydantic derives from field names ("Schema Version")."""
    for definition in [schema, *schema.get("$defs", {}).values()]:
        for prop in definition.get("properties", {}).values():
            prop.pop("title", None)


def schema_json(kind: SchemaKind) -> str:
    """Return the text of the published schema file of a format (what is shipped)."""
    return json.dumps(schema_dict(kind), indent=2, ensure_ascii=False) + "\n"


def schema_path(kind: str) -> Path:
    """Return the path of a shipped schema file, e.g. ``.../needle-set.schema.json``."""
    return Path(str(resources.files("pytest_niah") / "data" / "schemas" / f"{kind}.schema.json"))


def write_schema_files(texts: Mapping[str, str], folder: Path | None = None) -> list[Path]:
    """Write schema files (name -> text; into the package by default); return their paths."""
    written = []
    for name, text in texts.items():
        path = schema_path(name) if folder is None else Path(folder) / f"{name}.schema.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def schema_files_main(prog: str, texts: Mapping[str, str], argv: Sequence[str] | None) -> int:
    """Regenerate shipped schema files, write them elsewhere (``--out``), or ``--check`` them."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Regenerate the shipped schemas, write them elsewhere, or check them.",
    )
    parser.add_argument("--out", type=Path, help="write into this folder, not the package")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if a shipped schema is out of date"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = [
            schema_path(name)
            for name, text in texts.items()
            if not schema_path(name).is_file()
            or schema_path(name).read_text(encoding="utf-8") != text
        ]
        for path in stale:
            print(f"out of date: {path}", file=sys.stderr)
        return 1 if stale else 0
    for path in write_schema_files(texts, args.out):
        print(path)
    return 0


def write_schemas(folder: Path | None = None) -> list[Path]:
    """Write both schema files (by default into the package) and return their paths."""
    return write_schema_files({kind: schema_json(kind) for kind in SCHEMA_KINDS}, folder)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pytest_niah.inputs.schema [--check] [--out FOLDER]``."""
    texts: dict[str, str] = {kind: schema_json(kind) for kind in SCHEMA_KINDS}
    return schema_files_main("python -m pytest_niah.inputs.schema", texts, argv)


# --------------------------------------------------------------------------- errors


def slugify(value: str) -> str:
    """Return the slug closest to a text (``"Fast Food"`` -> ``"fast-food"``), or ``""``."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9_-]+", "-", ascii_text.lower())
    slug = re.sub(r"[-_]{2,}", lambda match: match.group()[0], slug).strip("-_")
    return slug if _SLUG_RE.fullmatch(slug) else ""


@dataclass(frozen=True)
class _Format:
    """What :func:`to_error` needs to know about one file format."""

    model: type[_Model]
    schema: str  # the published schema file's name, for fixes
    examples: Mapping[str, str]
    root_example: str


_NEEDLE_EXAMPLES = {
    "$schema": '"needle-set.schema.json"',
    "schema_version": str(SCHEMA_VERSION),
    "name": '"my-set"',
    "description": '"What the set is for."',
    "names": '["Yuki", "Amara"]',
    "names[]": '"Yuki"',
    "groups": '[{"id": "pet-01", "category": "pet", "question": ..., ...}]',
    "groups[]": '{"id": "pet-01", "category": "pet", "question": ..., ...}',
    "id": '"pet-01"',
    "category": '"pet"',
    "question": '"Which character owns a parrot?"',
    "keywords": '["parrot"]',
    "keywords[]": '"parrot"',
    "answer_cues": '["macaw"]',
    "answer_cues[]": '"macaw"',
    "expansion_terms": '["bird", "feathers"]',
    "expansion_terms[]": '"bird"',
    "needles": '{"onehop": {"default": ..., "inverted": ...}, "literal": {...}}',
    "onehop": '{"default": "...{name}...", "inverted": "...{name}..."}',
    "literal": '{"default": "{name} owns a parrot.", "inverted": "A parrot is owned by {name}."}',
    "default": '"{name} owns a parrot."',
    "inverted": '"A parrot is owned by {name}."',
}
_EXPANSION_EXAMPLES = {
    "$schema": '"expansion-set.schema.json"',
    "schema_version": str(SCHEMA_VERSION),
    "name": '"my-expansions"',
    "description": '"What the terms are for."',
    "expansions": '{"pet-01": ["bird", "feathers"]}',
    "expansions{}": '["bird", "feathers"]',
    "expansions{}[]": '"bird"',
}
_FORMATS: dict[str, _Format] = {
    "needle-set": _Format(
        NeedleSetModel,
        "needle-set.schema.json",
        _NEEDLE_EXAMPLES,
        '{"schema_version": 1, "name": ..., "groups": [...]}',
    ),
    "needle-group": _Format(
        GroupModel,
        "needle-set.schema.json",
        _NEEDLE_EXAMPLES,
        '{"id": "pet-01", "category": "pet", "question": ..., ...}',
    ),
    "expansion-set": _Format(
        ExpansionSetModel,
        "expansion-set.schema.json",
        _EXPANSION_EXAMPLES,
        '{"schema_version": 1, "name": ..., "expansions": {...}}',
    ),
}
_FIELD_NAMES = frozenset(key for spec in _FORMATS.values() for key in spec.examples)


def to_error(
    exc: ValidationError,
    data: object,
    *,
    source: str,
    error: type[DataFileError],
    kind: Literal["needle-set", "needle-group", "expansion-set"],
) -> DataFileError:
    """Turn a validation error into one error: file, group, JSON path, problem and fix.

    The first problem is reported (a version mismatch before anything else, and an
    unknown key that looks like a missing one as a rename); the message says how many
    more the file has.

    Args:
        exc: The error from validating ``data``.
        data: The validated input, to name groups and suggest ids.
        source: The file (or ``"builtin"``, ``"<dict>"``).
        error: The error class to build.
        kind: The format of ``data``.
    """
    spec = _FORMATS[kind]
    problems = [_Located(dict(details)) for details in exc.errors(include_url=False)]
    first, rename = _pick(problems)
    problem, fix = _describe(first, data, spec, rename, kind)
    others = len(problems) - (2 if rename else 1)
    if others > 0:
        problem = f"{problem.rstrip('.')} ({others} more {_plural(others, 'problem')} in the file)"
    return error.at(
        source, problem, fix, group=_group_label(first, data, kind), field=first.field(kind)
    )


class _Located:
    """One pydantic error, with the location of rule errors resolved."""

    def __init__(self, details: dict[str, Any]) -> None:
        self.type: str = details["type"]
        self.input: Any = details.get("input")
        self.ctx: dict[str, Any] = dict(details.get("ctx") or {})
        loc: tuple[str | int, ...] = tuple(details["loc"])
        self.key_error = bool(loc) and loc[-1] == "[key]"
        if self.key_error:
            loc = loc[:-1]
        self.loc = loc + tuple(self.ctx.get("at", ()))

    def field(self, kind: str) -> str | None:
        """The JSON path to name, or None for the whole file or the whole group."""
        if self.key_error:
            return json_path(self.loc[:-1])
        if kind == "needle-set" and len(self.loc) == 2 and self.loc[0] == "groups":
            return None
        return json_path(self.loc) or None

    @property
    def key(self) -> str | int | None:
        return self.loc[-1] if self.loc else None


def _pick(problems: list[_Located]) -> tuple[_Located, str | None]:
    """The problem to report, and the key it renames when it is a typo of a missing key.

    A version mismatch comes first: the rest of a file in another version means little.
    A missing key with an unknown key beside it that looks like it is reported as that
    unknown key, to rename.
    """
    first = next((p for p in problems if p.loc == ("schema_version",)), problems[0])
    if first.type not in ("missing", "extra_forbidden"):
        return first, None
    wanted = "extra_forbidden" if first.type == "missing" else "missing"
    for other in problems:
        if other.type != wanted or other.loc[:-1] != first.loc[:-1]:
            continue
        extra, missing = (other, first) if wanted == "extra_forbidden" else (first, other)
        if difflib.get_close_matches(str(extra.key), [str(missing.key)], n=1):
            return extra, str(missing.key)
    return first, None


def _plural(count: int, word: str) -> str:
    return word if count == 1 else f"{word}s"


def _group_label(problem: _Located, data: object, kind: str) -> str | None:
    """The group to name: its id when that is a usable id, else its position."""
    if "group" in problem.ctx and problem.ctx["group"] is not None:
        return str(problem.ctx["group"])
    loc = problem.loc
    if kind == "expansion-set":
        if len(loc) >= 2 and loc[0] == "expansions":
            key = str(loc[1])
            return key if key.isprintable() else json.dumps(key)
        return None
    if kind == "needle-group":
        return _usable_id(data) or "<unknown id>"
    if len(loc) >= 2 and loc[0] == "groups" and isinstance(loc[1], int):
        return _usable_id(_raw_group(data, loc[1])) or f"groups[{loc[1]}]"
    return None


def _usable_id(group: object) -> str | None:
    if isinstance(group, Mapping):
        group_id = group.get("id")
        if isinstance(group_id, str) and _SLUG_RE.fullmatch(group_id):
            return group_id
    return None


def _raw_groups(data: object) -> list[Any]:
    groups = data.get("groups") if isinstance(data, Mapping) else None
    return groups if isinstance(groups, list) else []


def _raw_group(data: object, index: int) -> object:
    groups = _raw_groups(data)
    return groups[index] if 0 <= index < len(groups) else None


def _quote(value: object, limit: int = 60) -> str:
    """A value as the message shows it: a Python-quoted string, or compact JSON."""
    if isinstance(value, str):
        text = value if len(value) <= limit else value[: limit - 1] + "…"
        return repr(text)
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (ValueError, RecursionError):
        text = json_type(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _example(loc: tuple[str | int, ...], spec: _Format) -> str:
    """An example value for a location, from the format's examples (``...`` if none)."""
    for index in range(len(loc) - 1, -1, -1):
        step = loc[index]
        if isinstance(step, str) and step in _FIELD_NAMES and step in spec.examples:
            suffix = "".join("[]" if isinstance(s, int) else "{}" for s in loc[index + 1 :])
            return spec.examples.get(step + suffix, "...")
    return spec.root_example if not loc else "..."


def _model_at(spec: _Format, loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model class that validates the object at ``loc``, if it is one."""
    current: Any = spec.model
    for step in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            fields = {info.alias or name: info for name, info in current.model_fields.items()}
            if not isinstance(step, str) or step not in fields:
                return None
            current = fields[step].annotation
            continue
        origin = get_origin(current)
        if origin is list and isinstance(step, int):
            current = get_args(current)[0]
        elif origin is dict and isinstance(step, str):
            current = get_args(current)[1]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _keys_at(data: object, loc: tuple[str | int, ...]) -> set[str]:
    """The keys of the object at ``loc`` in the raw data (none if it is not an object)."""
    for step in loc:
        if isinstance(data, Mapping) and isinstance(step, str):
            data = data.get(step)
        elif isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
        else:
            return set()
    return {str(key) for key in data} if isinstance(data, Mapping) else set()


def _allowed_keys(spec: _Format, parent: tuple[str | int, ...]) -> list[str]:
    model = _model_at(spec, parent)
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


@dataclass(frozen=True)
class _Case:
    """One problem to describe, with what its description needs."""

    problem: _Located
    spec: _Format
    kind: str
    rename: str | None
    data: object

    @property
    def loc(self) -> tuple[str | int, ...]:
        return self.problem.loc

    @property
    def example(self) -> str:
        return _example(self.problem.loc, self.spec)

    @property
    def top_level(self) -> bool:
        return len(self.problem.loc) == 1 and self.kind != "needle-group"


def _describe(
    problem: _Located, data: object, spec: _Format, rename: str | None, kind: str
) -> tuple[str, str]:
    """The problem sentence and the fix of one error."""
    case = _Case(problem, spec, kind, rename, data)
    text, fix = _DESCRIBERS.get(problem.type, _describe_other)(case)
    return text, _suggest(problem, data, spec) or fix


def _describe_missing(case: _Case) -> tuple[str, str]:
    in_needles = "needles" in case.loc[:-1]
    where = "entry" if in_needles else "top-level key" if case.top_level else "key"
    return f"the required {where} is missing.", f'add "{case.problem.key}": {case.example}.'


def _describe_extra(case: _Case) -> tuple[str, str]:
    allowed = _allowed_keys(case.spec, case.loc[:-1])
    key = str(case.problem.key)
    hint = [case.rename] if case.rename else difflib.get_close_matches(key, allowed, n=1)
    if not hint:
        fix = "remove it"
    elif hint[0] in _keys_at(case.data, case.loc[:-1]):
        fix = f"remove it ('{hint[0]}' is there already)"
    else:
        fix = f"rename it to '{hint[0]}' if that was meant"
    top = "top-level " if case.top_level else ""
    return (
        f"unknown {top}key (keys are checked to catch typos).",
        f"{fix}; the allowed keys are: {', '.join(allowed)}.",
    )


_LIST_NOUNS = {"groups": "groups", "names": "names"}


def _describe_type(case: _Case) -> tuple[str, str]:
    got = json_type(case.problem.input)
    kind = case.problem.type
    if case.loc == ("schema_version",):
        value = case.problem.input
        shown = f" {_quote(value)}" if isinstance(value, (str, int, float)) else ""
        return (
            f"expected the number {SCHEMA_VERSION}, got {got}{shown}.",
            f'set "schema_version": {SCHEMA_VERSION} (a JSON number, not in quotes).',
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


def _describe_too_short(case: _Case) -> tuple[str, str]:
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


def _describe_empty(case: _Case) -> tuple[str, str]:
    got = "an empty string" if case.problem.input == "" else "a string of spaces only"
    return f"expected a non-empty string, got {got}.", f"write a text value, e.g. {case.example}."


def _describe_slug(case: _Case) -> tuple[str, str]:
    value = str(case.problem.input)
    if case.problem.key_error:
        what = "group id"
    else:
        what = {"id": "id", "category": "category"}.get(str(case.problem.key), "value")
    return (
        f"the {what} {_quote(value)} is not a slug ({_SLUG_WORDS}).",
        f"use a slug such as '{slugify(value) or 'pet-01'}'.",
    )


def _describe_version(case: _Case) -> tuple[str, str]:
    return (
        f"unsupported schema version {_quote(case.problem.input)}; this pytest-niah reads "
        f"version {SCHEMA_VERSION}.",
        f'set "schema_version": {SCHEMA_VERSION} and check the file against the published '
        f"schema ({case.spec.schema}).",
    )


def _describe_template(case: _Case) -> tuple[str, str]:
    template = _quote(case.problem.input, limit=120)
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


def _describe_value(case: _Case) -> tuple[str, str]:
    problem = case.problem
    if problem.type == "bad_name":
        return (
            f"bad name {_quote(problem.input)}.",
            "use a plain name without braces or edge spaces.",
        )
    if problem.type == "brace_term":
        return (
            f"the term {_quote(problem.input)} contains a brace.",
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


def _describe_onehop(case: _Case) -> tuple[str, str]:
    question, template = case.problem.ctx["question"], case.problem.ctx["template"]
    shared = sorted(shared_content_words(question, template))
    forms = [
        f"'{in_needle}' for '{in_question}'"
        for in_question, in_needle in matching_words(question, template)
        if in_question != in_needle
    ]
    how = f"stemmed; the needle has {', '.join(forms)}" if forms else "stemmed"
    return (
        f"the one-hop needle shares the content word(s) {', '.join(shared)} ({how}) with the "
        f"question {_quote(question, limit=120)}.",
        "reword the needle so it answers the question only through world knowledge (no word, "
        "or word form, of the question); a needle that repeats the question's words belongs "
        "in needles.literal.",
    )


def _describe_rule(case: _Case) -> tuple[str, str]:
    problem = case.problem
    if problem.type == "duplicate_id":
        return (
            f"the id is used by more than one group (first at groups[{problem.ctx['first']}]).",
            "give every group its own id.",
        )
    if problem.type == "names_required":
        return "the built-in set must list its names.", "add a names array."
    ctx = problem.ctx
    name = _quote(ctx["name"])
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


def _describe_other(case: _Case) -> tuple[str, str]:
    return (
        f"the value {_quote(case.problem.input)} is not valid ({case.problem.type}).",
        f"check the value against the published schema ({case.spec.schema}).",
    )


_DESCRIBERS: dict[str, Callable[[_Case], tuple[str, str]]] = {
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


# --------------------------------------------------------------------------- suggestions


def _suggest(problem: _Located, data: object, spec: _Format) -> str | None:
    """A fix with a value that works, for any problem of a group's id or category."""
    loc = problem.loc
    if spec.model is GroupModel:
        groups, index, rest = [data], 0, loc
    elif spec.model is NeedleSetModel and len(loc) >= 3 and loc[0] == "groups":
        groups, index, rest = _raw_groups(data), loc[1], loc[2:]
    else:
        return None
    if rest not in (("id",), ("category",)) or not isinstance(index, int):
        return None
    value = suggest_id(groups, index) if rest == ("id",) else suggest_category(groups, index)
    if problem.type == "missing":
        return f'add "{rest[0]}": "{value}".'
    if problem.type == "duplicate_id":
        return f"give every group its own id, e.g. rename this one to '{value}'."
    return f"use a slug such as '{value}'."


def suggest_id(groups: Sequence[object], index: int) -> str:
    """An id for ``groups[index]`` that is a slug and unused by the other groups."""
    group = groups[index] if 0 <= index < len(groups) else None
    raw = group if isinstance(group, Mapping) else {}
    value = raw.get("id")
    base = slugify(value) if isinstance(value, str) else ""
    if not base:
        category = raw.get("category")
        prefix = (slugify(category) if isinstance(category, str) else "") or "group"
        base = f"{prefix}-{index + 1:02d}"
    taken = {
        other.get("id")
        for position, other in enumerate(groups)
        if position != index and isinstance(other, Mapping)
    }
    candidate = base
    while candidate in taken:
        candidate = _bump(candidate)
    return candidate


def _bump(slug: str) -> str:
    """The next slug: raise a trailing number (keeping its width), else append ``-2``."""
    match = re.search(r"[0-9]+$", slug)
    if match is None:
        return f"{slug}-2"
    number = match.group()
    return slug[: match.start()] + str(int(number) + 1).zfill(len(number))


def suggest_category(groups: Sequence[object], index: int) -> str:
    """A category slug for ``groups[index]``: its own, cleaned, else from its id."""
    group = groups[index] if 0 <= index < len(groups) else None
    raw = group if isinstance(group, Mapping) else {}
    category = raw.get("category")
    if isinstance(category, str) and slugify(category):
        return slugify(category)
    group_id = raw.get("id")
    from_id = slugify(group_id) if isinstance(group_id, str) else ""
    from_id = re.sub(r"[-_]?[0-9]+$", "", from_id)
    return from_id or "general"


if __name__ == "__main__":
    raise SystemExit(main())
