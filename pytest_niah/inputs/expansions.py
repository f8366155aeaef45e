"""Query expansions: related terms added to a question for the query-expansion arm.

An *expansion set* maps needle-group ids to an ordered list of terms that widen the
group's question (synonyms, related concepts, the world knowledge that links the
question to its one-hop answer). The order matters: the first ``N`` terms are the
``N``-term expansion, so the arms ``expand100``, ``expand150`` and ``expand250`` use
prefixes of one list (see :data:`EXPANSION_SIZES` and :func:`arm_size`).

The built-in set ships as ``pytest_niah/data/expansions.json``; custom sets use the
same format (``schema_version`` 1, published as the JSON Schema
``pytest_niah/data/schemas/expansion-set.schema.json``) and are loaded with
:func:`load_expansions`. The format is defined by the pydantic models of
:mod:`pytest_niah.inputs.schema`; every problem in a file raises one
:class:`ExpansionError` naming the file, the group, the field and the fix.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from pydantic import ValidationError

from pytest_niah.config.vocabulary import BUILTIN
from pytest_niah.digest import digest
from pytest_niah.errors import ExpansionError
from pytest_niah.inputs.jsonfile import check_value, duplicate_key_problem, parse_json, read_json
from pytest_niah.inputs.schema import (
    INPUT_SCHEMA_VERSION,
    SLUG_PATTERN,
    ExpansionSetModel,
    to_error,
)

__all__ = [
    "EXPANSION_SIZES",
    "INPUT_SCHEMA_VERSION",
    "ExpansionError",
    "ExpansionSet",
    "UnknownExpansionGroup",
    "arm_size",
    "builtin_expansions",
    "load_expansions",
]

EXPANSION_SIZES = (100, 150, 250)

_GROUP_ID_RE = re.compile(SLUG_PATTERN)

_UNEXPANDED_ARMS = ("onehop", "literal")
_EXPAND_ARM_RE = re.compile(r"expand([1-9][0-9]*)")


_error = ExpansionError.at
_IDS_SHOWN = 12


class UnknownExpansionGroup(ExpansionError, KeyError):
    """An expansion set has no terms for a needle group.

    A :class:`ExpansionError` (the plugin reports it as one clear message) and a
    ``KeyError`` (what a lookup of a missing group raises).
    """

    __str__ = ExpansionError.__str__


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
            UnknownExpansionGroup: If the set has no terms for this group (an
                :class:`ExpansionError` and a ``KeyError``; the message lists the valid ids).
        """
        try:
            return self.terms[group_id]
        except KeyError:
            hint = difflib.get_close_matches(str(group_id), self.ids, n=1)
            maybe = f" (did you mean '{hint[0]}'?)" if hint else ""
            shown = ", ".join(self.ids[:_IDS_SHOWN]) + (
                ", ..." if len(self.ids) > _IDS_SHOWN else ""
            )
            raise UnknownExpansionGroup.at(
                self.source,
                f"the set has no terms for this group{maybe}.",
                f"add the group's terms to the file, or select only groups it has terms for "
                f"({shown}), or leave the expandN arms out of --niah-arms.",
                group=str(group_id),
                field="expansions",
            ) from None

    def expand(self, question: str, group_id: str, size: int) -> str:
        """Return the question followed by the group's first ``size`` terms.

        The result is ``f"{question} "`` plus the terms joined with ``"; "``.

        Args:
            question: The question to widen.
            group_id: The needle group whose terms to add.
            size: How many terms to add (a positive integer).

        Raises:
            UnknownExpansionGroup: If the set has no terms for the group.
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
        return digest(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the set in its JSON file shape."""
        return {
            "schema_version": INPUT_SCHEMA_VERSION,
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
        check_value(data, source, ExpansionError)
        plain = dict(data) if isinstance(data, Mapping) and not isinstance(data, dict) else data
        try:
            model = ExpansionSetModel.model_validate(plain)
        except ValidationError as exc:
            raise to_error(
                exc, data, source=source, error=ExpansionError, kind="expansion-set"
            ) from None
        return cls(
            name=model.name,
            source=source,
            terms={
                group_id: tuple(term.strip() for term in terms)
                for group_id, terms in model.expansions.items()
            },
            description=model.description,
        )


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
    group = key if _GROUP_ID_RE.fullmatch(key) else None
    return _error(
        source,
        duplicate_key_problem(key),
        "keep the key once (merge the two term lists if it is a group id).",
        group=group,
        field="expansions" if group else key,
    )
