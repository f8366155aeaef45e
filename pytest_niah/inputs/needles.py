"""Needle sets: the questions and needle sentences of the experiment.

A *needle group* is one "Which character ...?" question plus four needle templates
that answer it: a one-hop and a literal needle, each in a default and an inverted
word order. A template holds the placeholder ``{name}`` exactly once; it is filled
with a character name drawn (seeded) from the set's name list.

One-hop needles must share no content word with their question (that is the point
of the benchmark), and no character name may be a word of a group's question, keywords
or answer cues; :mod:`pytest_niah.inputs.words` says when two words are the same.

One group is a :class:`~pytest_niah.inputs.needle_group.NeedleGroup`; this module holds the
set, its selection and its loading, and names the needle API (``__all__``) in one place.

The built-in set ships as ``pytest_niah/data/needles.json``; custom sets use the same
format (``schema_version`` 1, published as the JSON Schema
``pytest_niah/data/schemas/needle-set.schema.json``) and are loaded with
:func:`load_needle_set`. The format is defined by the pydantic models of
:mod:`pytest_niah.inputs.schema`; every problem in a set raises one
:class:`NeedleSetError` naming the file, the group, the field and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from pydantic import ValidationError

from pytest_niah.config.vocabulary import BUILTIN
from pytest_niah.digest import digest
from pytest_niah.errors import NeedleSetError
from pytest_niah.inputs.jsonfile import check_value, parse_json, read_json
from pytest_niah.inputs.needle_group import (
    NEEDLE_KINDS,
    NEEDLE_ORDERS,
    NeedleGroup,
    group_from_model,
    plain_mapping,
)
from pytest_niah.inputs.schema import INPUT_SCHEMA_VERSION, NeedleSetModel, to_error
from pytest_niah.inputs.words import NAME_PLACEHOLDER, content_words, shared_content_words

__all__ = [
    "INPUT_SCHEMA_VERSION",
    "NAME_PLACEHOLDER",
    "NEEDLE_KINDS",
    "NEEDLE_ORDERS",
    "NeedleGroup",
    "NeedleSet",
    "NeedleSetError",
    "builtin_needle_set",
    "content_words",
    "load_needle_set",
    "shared_content_words",
]

_error = NeedleSetError.at


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
        return digest(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, Any]:
        """Return the set in its JSON file shape."""
        return {
            "schema_version": INPUT_SCHEMA_VERSION,
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
        check_value(data, source, NeedleSetError)
        context: dict[str, Any] = {}
        if source == BUILTIN:
            context["require_names"] = True
        elif isinstance(data, Mapping) and "names" not in data:
            context["default_names"] = builtin_needle_set().names
        try:
            model = NeedleSetModel.model_validate(plain_mapping(data), context=context)
        except ValidationError as exc:
            raise to_error(
                exc, data, source=source, error=NeedleSetError, kind="needle-set"
            ) from None
        names = tuple(model.names) if "names" in model.model_fields_set else None
        return cls(
            name=model.name,
            groups=tuple(group_from_model(group) for group in model.groups),
            names=names if names is not None else builtin_needle_set().names,
            source=source,
            description=model.description,
        )


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
