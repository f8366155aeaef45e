"""Needle sets: the questions and needle sentences of the experiment.

A *needle group* is one "Which character ...?" question plus four needle templates
that answer it: a one-hop and a literal needle, each in a default and an inverted
word order. A template holds the placeholder ``{name}`` exactly once; it is filled
with a character name drawn (seeded) from the set's name list.

One-hop needles must share no content word with their question (that is the point
of the benchmark), so loading a set checks it with :func:`shared_content_words`.

The built-in set ships as ``pytest_niah/data/needles.json``; custom sets use the
same JSON schema (``schema_version`` 1) and are loaded with :func:`load_needle_set`.
Every problem in a set raises :class:`NeedleSetError` naming the file, the group,
the field and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, NoReturn

from pytest_niah.errors import NeedleSetError
from pytest_niah.inputs.jsonfile import json_type, parse_json, read_json
from pytest_niah.inputs.words import NAME_PLACEHOLDER, content_words, shared_content_words

__all__ = [
    "NAME_PLACEHOLDER",
    "NEEDLE_KINDS",
    "NEEDLE_ORDERS",
    "SCHEMA_VERSION",
    "NeedleGroup",
    "NeedleSet",
    "NeedleSetError",
    "builtin_needle_set",
    "content_words",
    "load_needle_set",
    "shared_content_words",
]

NEEDLE_KINDS = ("onehop", "literal")
NEEDLE_ORDERS = ("default", "inverted")
SCHEMA_VERSION = 1

BUILTIN = "builtin"
GROUP_ID_RE = re.compile(r"[a-z]+-[0-9]{2}")

_TOP_REQUIRED = ("schema_version", "name", "groups")
_TOP_OPTIONAL = ("description", "names")
_GROUP_REQUIRED = ("id", "category", "question", "keywords", "answer_cues", "needles")
_GROUP_OPTIONAL = ("expansion_terms",)


_error = NeedleSetError.at
_json_type = json_type


@dataclass(frozen=True)
class _Context:
    """Where validation is looking: the source file and, inside a group, its label."""

    source: str
    group: str | None = None

    def fail(self, field: str | None, problem: str, fix: str) -> NoReturn:
        raise _error(self.source, problem, fix, group=self.group, field=field)

    def mapping(self, value: object, field: str | None) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(
                field,
                f"expected a JSON object, got {_json_type(value)}.",
                "make it a JSON object: {...}.",
            )
        return value

    def text(self, value: object, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            got = "an empty string" if isinstance(value, str) else _json_type(value)
            self.fail(field, f"expected a non-empty string, got {got}.", "write a text value.")
        return value

    def words(
        self, value: object, field: str, *, allow_empty: bool, lowercase: bool = True
    ) -> tuple[str, ...]:
        """Validate a list of words; return them stripped, deduplicated, maybe lowercased."""
        if not isinstance(value, list):
            self.fail(
                field,
                f"expected an array of strings, got {_json_type(value)}.",
                'make it a JSON array of strings, e.g. ["word"].',
            )
        if not value and not allow_empty:
            self.fail(field, "the list is empty.", "add at least one lowercase word.")
        items = [self.text(item, f"{field}[{i}]") for i, item in enumerate(value)]
        cleaned = (item.strip().lower() if lowercase else item.strip() for item in items)
        return tuple(dict.fromkeys(cleaned))

    def keys(
        self, data: Mapping[str, Any], required: Sequence[str], optional: Sequence[str]
    ) -> None:
        """Reject missing required keys and unknown (usually misspelled) keys."""
        prefix = "" if self.group is not None else "top-level "
        for key in required:
            if key not in data:
                self.fail(key, f"the required {prefix}key is missing.", f'add "{key}".')
        allowed = (*required, *optional)
        for key in data:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), allowed, n=1)
                fix = f"rename it to '{hint[0]}' if that was meant" if hint else "remove it"
                self.fail(
                    str(key),
                    f"unknown {prefix}key (keys are checked to catch typos).",
                    f"{fix}; the allowed keys are: {', '.join(allowed)}.",
                )


@dataclass(frozen=True)
class NeedleGroup:
    """One question and its four needle templates.

    Attributes:
        id: ``category-NN``, e.g. ``location-01``.
        category: Lowercase category id, e.g. ``dietary``.
        question: The "Which character ...?" question.
        keywords: The question's distinctive key words (lowercase), for the leak audit.
        answer_cues: Words that give the one-hop answer away (lowercase), also audited.
        needles: ``(kind, order, template)`` for every kind and order, in the order of
            :data:`NEEDLE_KINDS` x :data:`NEEDLE_ORDERS`.
        expansion_terms: Optional extra query terms for the query-expansion arm.
    """

    id: str
    category: str
    question: str
    keywords: tuple[str, ...]
    answer_cues: tuple[str, ...]
    needles: tuple[tuple[str, str, str], ...]
    expansion_terms: tuple[str, ...] = ()

    def template(self, kind: str, order: str) -> str:
        """Return the needle template (with ``{name}``) for a kind and order.

        Raises:
            ValueError: If ``kind`` or ``order`` is not a known value.
        """
        for needle_kind, needle_order, text in self.needles:
            if needle_kind == kind and needle_order == order:
                return text
        raise ValueError(
            f"Needle group '{self.id}' has no needle for kind={kind!r}, order={order!r}; "
            f"kinds are {NEEDLE_KINDS} and orders are {NEEDLE_ORDERS}."
        )

    def needle(self, kind: str, order: str, name: str) -> str:
        """Return the needle sentence with the character name filled in.

        Raises:
            ValueError: If the name is empty or contains braces, or kind/order is unknown.
        """
        if not name.strip() or "{" in name or "}" in name:
            raise ValueError(f"A character name must be non-empty and brace-free, got {name!r}.")
        return self.template(kind, order).replace(NAME_PLACEHOLDER, name)

    @property
    def audit_terms(self) -> tuple[str, ...]:
        """Keywords and answer cues, lowercase, deduplicated and sorted."""
        return tuple(sorted({term.lower() for term in (*self.keywords, *self.answer_cues)}))

    def to_dict(self) -> dict[str, Any]:
        """Return the group in its JSON shape."""
        needles: dict[str, dict[str, str]] = {}
        for kind, order, text in self.needles:
            needles.setdefault(kind, {})[order] = text
        data: dict[str, Any] = {
            "id": self.id,
            "category": self.category,
            "question": self.question,
            "keywords": list(self.keywords),
            "answer_cues": list(self.answer_cues),
            "needles": needles,
        }
        if self.expansion_terms:
            data["expansion_terms"] = list(self.expansion_terms)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> NeedleGroup:
        """Validate a group mapping (JSON shape) and build the group.

        Raises:
            NeedleSetError: If any field is missing, mistyped or breaks a rule.
        """
        return _parse_group(data, source=source, label=None)


def _parse_group(data: object, *, source: str, label: str | None) -> NeedleGroup:
    """Validate one group; ``label`` names it in errors until its id is known."""
    ctx = _Context(source, _group_label(data, label))
    group = ctx.mapping(data, None)
    ctx.keys(group, _GROUP_REQUIRED, _GROUP_OPTIONAL)
    group_id = _parse_id(ctx, group["id"])
    category = _parse_category(ctx, group["category"], group_id)
    question = ctx.text(group["question"], "question")
    needles = _parse_needles(ctx, group["needles"])
    _check_onehop(ctx, question, needles)
    return NeedleGroup(
        id=group_id,
        category=category,
        question=question,
        keywords=ctx.words(group["keywords"], "keywords", allow_empty=False),
        answer_cues=ctx.words(group["answer_cues"], "answer_cues", allow_empty=True),
        needles=needles,
        expansion_terms=ctx.words(
            group.get("expansion_terms", []), "expansion_terms", allow_empty=True, lowercase=False
        ),
    )


def _group_label(data: object, fallback: str | None) -> str:
    """Name a group by its id when that is a usable string, else by its position."""
    if isinstance(data, Mapping):
        group_id = data.get("id")
        if isinstance(group_id, str) and GROUP_ID_RE.fullmatch(group_id):
            return group_id
    return fallback or "<unknown id>"


def _parse_id(ctx: _Context, value: object) -> str:
    group_id = ctx.text(value, "id")
    if not GROUP_ID_RE.fullmatch(group_id):
        ctx.fail(
            "id",
            f"'{group_id}' does not match the pattern ^[a-z]+-[0-9]{{2}}$.",
            "use the category plus a two-digit number, e.g. 'location-01'.",
        )
    return group_id


def _parse_category(ctx: _Context, value: object, group_id: str) -> str:
    category = ctx.text(value, "category")
    prefix = group_id.rsplit("-", 1)[0]
    if category != prefix:
        ctx.fail(
            "category",
            f"'{category}' differs from the id's prefix '{prefix}'.",
            f"set category to '{prefix}' or rename the id to '{category}-NN'.",
        )
    return category


def _parse_needles(ctx: _Context, value: object) -> tuple[tuple[str, str, str], ...]:
    """Validate the needles object: every kind, every order, one placeholder each."""
    needles = ctx.mapping(value, "needles")
    _exact_keys(ctx, needles, "needles", NEEDLE_KINDS)
    parsed = []
    for kind in NEEDLE_KINDS:
        orders = ctx.mapping(needles[kind], f"needles.{kind}")
        _exact_keys(ctx, orders, f"needles.{kind}", NEEDLE_ORDERS)
        for order in NEEDLE_ORDERS:
            path = f"needles.{kind}.{order}"
            parsed.append((kind, order, _parse_template(ctx, orders[order], path)))
    return tuple(parsed)


def _exact_keys(ctx: _Context, data: Mapping[str, Any], path: str, keys: Sequence[str]) -> None:
    for key in keys:
        if key not in data:
            ctx.fail(f"{path}.{key}", "the entry is missing.", f'add "{key}": "...{{name}}...".')
    for key in data:
        if key not in keys:
            ctx.fail(
                f"{path}.{key}",
                "unknown key.",
                f"remove or rename it; the allowed keys are: {', '.join(keys)}.",
            )


def _parse_template(ctx: _Context, value: object, path: str) -> str:
    template = ctx.text(value, path)
    count = template.count(NAME_PLACEHOLDER)
    if count != 1:
        ctx.fail(
            path,
            f"the needle must contain the placeholder {NAME_PLACEHOLDER} exactly once, "
            f"found it {count} times in {template!r}.",
            f"write {NAME_PLACEHOLDER} (lowercase, in braces) once where the character's "
            "name goes.",
        )
    rest = template.replace(NAME_PLACEHOLDER, "")
    if "{" in rest or "}" in rest:
        ctx.fail(
            path,
            f"the needle has a stray brace besides {NAME_PLACEHOLDER}: {template!r}.",
            f"remove the brace or fix the misspelled placeholder; only {NAME_PLACEHOLDER} "
            "is allowed.",
        )
    return template


def _check_onehop(ctx: _Context, question: str, needles: Iterable[tuple[str, str, str]]) -> None:
    """Reject one-hop needles that share a content word with the question (a literal match)."""
    for kind, order, template in needles:
        if kind != "onehop":
            continue
        shared = shared_content_words(question, template)
        if shared:
            ctx.fail(
                f"needles.onehop.{order}",
                f"the one-hop needle shares the content word(s) {', '.join(sorted(shared))} "
                f"(stemmed) with the question {question!r}.",
                "reword the needle so it answers the question only through world knowledge "
                "(no word, or word form, of the question); a needle that repeats the "
                "question's words belongs in needles.literal.",
            )


@dataclass(frozen=True)
class NeedleSet:
    """A validated collection of needle groups plus the character names to fill in.

    Attributes:
        name: The set's name (``"builtin"`` for the shipped set).
        groups: The groups, in file order.
        names: Character names for the ``{name}`` placeholder.
        source: ``"builtin"``, the file path, or ``"<dict>"``; not part of equality.
        description: Free text.
    """

    name: str
    groups: tuple[NeedleGroup, ...]
    names: tuple[str, ...]
    source: str = field(compare=False)
    description: str = ""

    @property
    def categories(self) -> tuple[str, ...]:
        """Sorted unique category ids."""
        return tuple(sorted({group.category for group in self.groups}))

    @property
    def ids(self) -> tuple[str, ...]:
        """Group ids in set order."""
        return tuple(group.id for group in self.groups)

    def group(self, group_id: str) -> NeedleGroup:
        """Return the group with this id.

        Raises:
            KeyError: If no group has this id (the message lists the valid ids).
        """
        for group in self.groups:
            if group.id == group_id:
                return group
        raise KeyError(
            f"Needle set '{self.source}' has no group {group_id!r}; "
            f"valid ids: {', '.join(self.ids)}."
        )

    def select(self, selectors: Sequence[str] | None) -> NeedleSet:
        """Keep the groups whose id or category equals one of the selectors.

        Args:
            selectors: Group ids and/or categories (case-insensitive); None or empty
                keeps every group. A single string counts as one selector.

        Returns:
            A set with the matching groups, in their original order.

        Raises:
            NeedleSetError: If a selector matches no group id and no category.
        """
        if isinstance(selectors, str):
            selectors = [selectors]
        wanted = {s.strip().lower() for s in selectors or () if s.strip()}
        if not wanted:
            return self
        unknown = sorted(wanted - {*self.ids, *self.categories})
        if unknown:
            raise self._unknown_selectors(unknown)
        kept = tuple(g for g in self.groups if g.id in wanted or g.category in wanted)
        return dataclasses.replace(self, groups=kept)

    def _unknown_selectors(self, unknown: Sequence[str]) -> NeedleSetError:
        valid = [*self.categories, *self.ids]
        described = []
        for selector in unknown:
            hint = difflib.get_close_matches(selector, valid, n=1)
            described.append(f"'{selector}'" + (f" (did you mean '{hint[0]}'?)" if hint else ""))
        return _error(
            self.source,
            f"the selector(s) {', '.join(described)} match no group id and no category.",
            f"use categories ({', '.join(self.categories)}) or group ids ({', '.join(self.ids)}).",
        )

    def fingerprint(self) -> str:
        """Return the sha256 hex digest of the canonical JSON of :meth:`to_dict`.

        The source path is not part of it: the same content loaded from anywhere
        has the same fingerprint.
        """
        canonical = json.dumps(
            self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """Return the set in its JSON file shape."""
        return {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "description": self.description,
            "names": list(self.names),
            "groups": [group.to_dict() for group in self.groups],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> NeedleSet:
        """Validate a set mapping (JSON file shape) and build the set.

        A mapping without ``names`` uses the built-in names.

        Raises:
            NeedleSetError: If anything in the mapping breaks the schema or a rule.
        """
        ctx = _Context(source)
        top = ctx.mapping(data, None)
        _check_version(ctx, top)
        ctx.keys(top, _TOP_REQUIRED, _TOP_OPTIONAL)
        description = top.get("description", "")
        if not isinstance(description, str):
            ctx.fail(
                "description",
                f"expected a string, got {_json_type(description)}.",
                "write the description as one JSON string.",
            )
        return cls(
            name=ctx.text(top["name"], "name"),
            groups=_parse_groups(ctx, top["groups"]),
            names=_parse_names(ctx, top),
            source=source,
            description=description,
        )


def _check_version(ctx: _Context, top: Mapping[str, Any]) -> None:
    if "schema_version" not in top:
        ctx.fail(
            "schema_version",
            "the required top-level key is missing.",
            f'add "schema_version": {SCHEMA_VERSION}.',
        )
    version = top["schema_version"]
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        ctx.fail(
            "schema_version",
            f"unsupported schema version {version!r}; this pytest-niah reads version "
            f"{SCHEMA_VERSION}.",
            f'set "schema_version": {SCHEMA_VERSION} and check the file against the '
            "documented schema.",
        )


def _parse_groups(ctx: _Context, value: object) -> tuple[NeedleGroup, ...]:
    if not isinstance(value, list):
        ctx.fail(
            "groups",
            f"expected an array of groups, got {_json_type(value)}.",
            "make it a JSON array of group objects: [{...}, ...].",
        )
    if not value:
        ctx.fail("groups", "the set has no groups.", "add at least one needle group.")
    groups: list[NeedleGroup] = []
    seen: set[str] = set()
    for index, item in enumerate(value):
        group = _parse_group(item, source=ctx.source, label=f"groups[{index}]")
        if group.id in seen:
            raise _error(
                ctx.source,
                f"the id is used by more than one group (again at groups[{index}]).",
                "give every group its own id, e.g. by raising the two-digit number.",
                group=group.id,
                field="id",
            )
        seen.add(group.id)
        groups.append(group)
    return tuple(groups)


def _parse_names(ctx: _Context, top: Mapping[str, Any]) -> tuple[str, ...]:
    """Validate ``names``; when absent, fall back to the built-in names."""
    if "names" not in top:
        if ctx.source == BUILTIN:
            ctx.fail("names", "the built-in set must list its names.", "add a names array.")
        return builtin_needle_set().names
    value = top["names"]
    if not isinstance(value, list) or not value:
        got = "an empty array" if isinstance(value, list) else _json_type(value)
        ctx.fail(
            "names",
            f"expected a non-empty array of names, got {got}.",
            "list character first names, or leave out the names key to use the built-in names.",
        )
    names = tuple(_parse_name(ctx, item, f"names[{i}]") for i, item in enumerate(value))
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        ctx.fail(
            "names",
            f"duplicate names: {', '.join(duplicates)}.",
            "list each name once (duplicates would skew the seeded name draw).",
        )
    return names


def _parse_name(ctx: _Context, value: object, path: str) -> str:
    name = ctx.text(value, path)
    if name != name.strip() or "{" in name or "}" in name:
        ctx.fail(path, f"bad name {name!r}.", "use a plain name without braces or edge spaces.")
    return name


@functools.cache
def builtin_needle_set() -> NeedleSet:
    """Return the built-in needle set shipped in ``pytest_niah/data/needles.json``.

    The result is cached: it is immutable and loaded at most once per process.
    """
    resource = resources.files("pytest_niah") / "data" / "needles.json"
    text = resource.read_text(encoding="utf-8")
    return NeedleSet.from_dict(parse_json(text, BUILTIN, NeedleSetError), source=BUILTIN)


def load_needle_set(path: str | os.PathLike[str] | None = None) -> NeedleSet:
    """Load and validate a needle set.

    Args:
        path: A JSON file in the needle-set schema; None or ``"builtin"`` gives the
            built-in set.

    Raises:
        NeedleSetError: If the file is missing, unreadable, not UTF-8, not JSON, or
            breaks the schema or a needle rule.
    """
    if path is None or (isinstance(path, str) and path == BUILTIN):
        return builtin_needle_set()
    source = os.fspath(path)
    return NeedleSet.from_dict(
        read_json(source, NeedleSetError, builtin="the built-in needle set"), source=source
    )
