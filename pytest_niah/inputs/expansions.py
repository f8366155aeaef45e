"""Query expansions: related terms added to a question for the query-expansion arm.

An *expansion set* maps needle-group ids to an ordered list of terms that widen the
group's question (synonyms, related concepts, the world knowledge that links the
question to its one-hop answer). The order matters: the first ``N`` terms are the
``N``-term expansion, so the arms ``expand100``, ``expand150`` and ``expand250`` use
prefixes of one list (see :data:`EXPANSION_SIZES` and :func:`arm_size`).

The built-in set ships as ``pytest_niah/data/expansions.json``; custom sets use the
same JSON schema (``schema_version`` 1) and are loaded with :func:`load_expansions`.
Every problem in a file raises :class:`ExpansionError` naming the file, the group,
the field and the fix.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
import re
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, NoReturn

from pytest_niah.errors import ExpansionError
from pytest_niah.inputs.jsonfile import (
    duplicate_key_problem,
    json_type,
    parse_json,
    read_json,
)

__all__ = [
    "EXPANSION_SIZES",
    "SCHEMA_VERSION",
    "ExpansionError",
    "ExpansionSet",
    "arm_size",
    "builtin_expansions",
    "load_expansions",
]

EXPANSION_SIZES = (100, 150, 250)
SCHEMA_VERSION = 1

BUILTIN = "builtin"
GROUP_ID_RE = re.compile(r"[a-z]+-[0-9]{2}")

_TOP_REQUIRED = ("schema_version", "name", "expansions")
_TOP_OPTIONAL = ("description",)
_UNEXPANDED_ARMS = ("onehop", "literal")
_EXPAND_ARM_RE = re.compile(r"expand([1-9][0-9]*)")


_error = ExpansionError.at
_json_type = json_type


def _frozen_terms(terms: Mapping[str, Sequence[str]]) -> Mapping[str, tuple[str, ...]]:
    """Copy a group -> terms mapping into a read-only mapping of tuples."""
    return types.MappingProxyType({gid: tuple(items) for gid, items in terms.items()})


@dataclass(frozen=True)
class ExpansionSet:
    """A validated set of ordered expansion terms per needle group.

    Attributes:
        name: The set's name (``"builtin"`` for the shipped set).
        source: ``"builtin"``, the file path, or ``"<dict>"``; not part of equality.
        terms: Group id -> ordered terms (most relevant first), read-only, in file
            order.
        description: Free text.
    """

    name: str
    source: str = field(compare=False)
    # A read-only proxy is not hashable, so the hash rests on the other fields.
    terms: Mapping[str, tuple[str, ...]] = field(hash=False)
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "terms", _frozen_terms(self.terms))

    @property
    def ids(self) -> tuple[str, ...]:
        """Group ids in set order."""
        return tuple(self.terms)

    def terms_for(self, group_id: str) -> tuple[str, ...]:
        """Return the ordered expansion terms of one group.

        Raises:
            KeyError: If the set has no terms for this group (the message lists the
                valid ids).
        """
        try:
            return self.terms[group_id]
        except KeyError:
            hint = difflib.get_close_matches(str(group_id), self.ids, n=1)
            maybe = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise KeyError(
                f"Expansion set '{self.source}' has no terms for group {group_id!r}{maybe}; "
                f"add them to the file or pick one of: {', '.join(self.ids)}."
            ) from None

    def expand(self, question: str, group_id: str, size: int) -> str:
        """Return the question followed by the group's first ``size`` terms.

        The result is ``f"{question} "`` plus the terms joined with ``"; "``.

        Args:
            question: The question to widen.
            group_id: The needle group whose terms to add.
            size: How many terms to add (a positive integer).

        Raises:
            KeyError: If the set has no terms for the group.
            ExpansionError: If ``size`` is not a positive integer, or the group has
                fewer than ``size`` terms.
        """
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise _error(
                self.source,
                f"the expansion size must be a positive integer, got {size!r}.",
                f"ask for one of the study's sizes {EXPANSION_SIZES} or another positive integer.",
                group=group_id,
            )
        terms = self.terms_for(group_id)
        if len(terms) < size:
            raise _error(
                self.source,
                f"the group has {len(terms)} expansion terms, fewer than the {size} asked for.",
                f"add at least {size - len(terms)} more terms to the group, or use an arm "
                f"with at most {len(terms)} terms.",
                group=group_id,
                field=f"expansions.{group_id}",
            )
        return f"{question} " + "; ".join(terms[:size])

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
            "expansions": {gid: list(items) for gid, items in self.terms.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> ExpansionSet:
        """Validate a set mapping (JSON file shape) and build the set.

        Raises:
            ExpansionError: If anything in the mapping breaks the schema.
        """
        if not isinstance(data, Mapping):
            _fail(
                source,
                f"expected a JSON object at the top level, got {_json_type(data)}.",
                'make the file one JSON object: {"schema_version": 1, "name": ..., '
                '"expansions": {...}}.',
            )
        _check_version(source, data)
        _check_keys(source, data)
        name = data["name"]
        if not isinstance(name, str) or not name.strip():
            _fail(source, "expected a non-empty string.", "write the set's name.", field="name")
        description = data.get("description", "")
        if not isinstance(description, str):
            _fail(
                source,
                f"expected a string, got {_json_type(description)}.",
                "write the description as one JSON string.",
                field="description",
            )
        return cls(
            name=name,
            source=source,
            terms=_parse_expansions(source, data["expansions"]),
            description=description,
        )


def _fail(
    source: str, problem: str, fix: str, *, group: str | None = None, field: str | None = None
) -> NoReturn:
    raise _error(source, problem, fix, group=group, field=field)


def _check_version(source: str, top: Mapping[str, Any]) -> None:
    if "schema_version" not in top:
        _fail(
            source,
            "the required top-level key is missing.",
            f'add "schema_version": {SCHEMA_VERSION}.',
            field="schema_version",
        )
    version = top["schema_version"]
    # True == 1 in Python, so booleans are ruled out explicitly.
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        _fail(
            source,
            f"unsupported schema version {version!r}; this pytest-niah reads version "
            f"{SCHEMA_VERSION}.",
            f'set "schema_version": {SCHEMA_VERSION} and check the file against the '
            "documented schema.",
            field="schema_version",
        )


def _check_keys(source: str, top: Mapping[str, Any]) -> None:
    """Reject missing required keys and unknown (usually misspelled) keys."""
    allowed = (*_TOP_REQUIRED, *_TOP_OPTIONAL)
    for key in top:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            fix = f"rename it to '{hint[0]}' if that was meant" if hint else "remove it"
            _fail(
                source,
                "unknown top-level key (keys are checked to catch typos).",
                f"{fix}; the allowed keys are: {', '.join(allowed)}.",
                field=str(key),
            )
    # Unknown keys first: a misspelled key also leaves a required one missing.
    for key in _TOP_REQUIRED:
        if key not in top:
            _fail(source, "the required top-level key is missing.", f'add "{key}".', field=key)


def _parse_expansions(source: str, value: object) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        _fail(
            source,
            f"expected an object mapping group ids to term lists, got {_json_type(value)}.",
            'make it a JSON object: {"dietary-01": ["term", ...], ...}.',
            field="expansions",
        )
    if not value:
        _fail(
            source,
            "the set has no groups.",
            "add at least one group id with its terms.",
            field="expansions",
        )
    parsed: dict[str, tuple[str, ...]] = {}
    for group_id, items in value.items():
        if not isinstance(group_id, str) or not GROUP_ID_RE.fullmatch(group_id):
            _fail(
                source,
                f"the group id {group_id!r} does not match the pattern ^[a-z]+-[0-9]{{2}}$.",
                "use the needle group's id, e.g. 'location-01'.",
                group=str(group_id),
                field="expansions",
            )
        parsed[group_id] = _parse_terms(source, group_id, items)
    return parsed


def _parse_terms(source: str, group_id: str, value: object) -> tuple[str, ...]:
    """Validate one group's term list; return the terms stripped, in order."""
    path = f"expansions.{group_id}"
    if not isinstance(value, list):
        _fail(
            source,
            f"expected an array of terms, got {_json_type(value)}.",
            'make it a JSON array of strings, most relevant first: ["term", ...].',
            group=group_id,
            field=path,
        )
    if not value:
        _fail(
            source, "the term list is empty.", "add the group's terms.", group=group_id, field=path
        )
    terms: list[str] = []
    first_seen: dict[str, int] = {}
    duplicates: list[str] = []
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(item, str) or not item.strip():
            got = "an empty string" if isinstance(item, str) else _json_type(item)
            _fail(
                source,
                f"expected a non-empty string, got {got}.",
                "write every term as a non-empty JSON string.",
                group=group_id,
                field=where,
            )
        term = item.strip()
        if "{" in term or "}" in term:
            # A brace usually means a needle template ({name}) was pasted in by mistake.
            _fail(
                source,
                f"the term {term!r} contains a brace.",
                "write plain words; expansion terms take no placeholders.",
                group=group_id,
                field=where,
            )
        key = term.casefold()
        if key in first_seen:
            duplicates.append(f"{term!r} (items {first_seen[key]} and {index})")
        else:
            first_seen[key] = index
        terms.append(term)
    if duplicates:
        _fail(
            source,
            f"duplicate terms (compared case-insensitively): {', '.join(duplicates)}.",
            "keep each term once; a repeat would count twice in the first-N expansions.",
            group=group_id,
            field=path,
        )
    return tuple(terms)


def arm_size(arm: str) -> int | None:
    """Return how many expansion terms an arm adds to the question.

    Args:
        arm: An arm name: ``onehop`` or ``literal`` (no expansion) or ``expandN``
            with ``N`` a positive integer, e.g. ``expand100``.

    Returns:
        ``N`` for ``expandN``; None for the unexpanded arms.

    Raises:
        ValueError: If the arm is neither an unexpanded arm nor ``expandN``.
    """
    if arm in _UNEXPANDED_ARMS:
        return None
    match = _EXPAND_ARM_RE.fullmatch(arm) if isinstance(arm, str) else None
    if match is None:
        raise ValueError(
            f"Unknown arm {arm!r}: use {' or '.join(_UNEXPANDED_ARMS)}, or expandN with N a "
            f"positive integer (the study's sizes: "
            f"{', '.join(f'expand{n}' for n in EXPANSION_SIZES)})."
        )
    return int(match.group(1))


@functools.cache
def builtin_expansions() -> ExpansionSet:
    """Return the built-in expansion set shipped in ``pytest_niah/data/expansions.json``.

    The result is cached: it is immutable and loaded at most once per process.
    """
    resource = resources.files("pytest_niah") / "data" / "expansions.json"
    text = resource.read_text(encoding="utf-8")
    return ExpansionSet.from_dict(parse_json(text, BUILTIN, ExpansionError), source=BUILTIN)


def load_expansions(path: str | os.PathLike[str] | None = None) -> ExpansionSet:
    """Load and validate an expansion set.

    Args:
        path: A JSON file in the expansion-set schema; None or ``"builtin"`` gives
            the built-in set.

    Raises:
        ExpansionError: If the file is missing, unreadable, not UTF-8, not JSON, or
            breaks the schema.
    """
    if path is None or (isinstance(path, str) and path == BUILTIN):
        return builtin_expansions()
    source = os.fspath(path)
    return ExpansionSet.from_dict(
        read_json(
            source,
            ExpansionError,
            builtin="the built-in expansions",
            duplicate=lambda key: _duplicate_key(source, key),
        ),
        source=source,
    )


def _duplicate_key(source: str, key: str) -> ExpansionError:
    group = key if GROUP_ID_RE.fullmatch(key) else None
    return _error(
        source,
        duplicate_key_problem(key),
        "keep the key once (merge the two term lists if it is a group id).",
        group=group,
        field="expansions" if group else key,
    )
