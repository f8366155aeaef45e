"""One needle group: a question and its four needle templates, validated from its JSON shape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from pytest_niah.config.vocabulary import ORDERS
from pytest_niah.errors import NeedleSetError
from pytest_niah.inputs.jsonfile import check_value
from pytest_niah.inputs.schema import GroupModel, to_error
from pytest_niah.inputs.words import NAME_PLACEHOLDER

NEEDLE_KINDS = ("onehop", "literal")
NEEDLE_ORDERS = ORDERS


@dataclass(frozen=True)
class NeedleGroup:
    """One question and its four needle templates.

    Attributes:
        id: A slug unique in the set, e.g. ``location-01`` or ``fast-food-01``.
        category: A slug, e.g. ``dietary``; need not be the id's prefix.
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
        check_value(data, source, NeedleSetError)
        try:
            model = GroupModel.model_validate(plain_mapping(data))
        except ValidationError as exc:
            raise to_error(
                exc, data, source=source, error=NeedleSetError, kind="needle-group"
            ) from None
        return group_from_model(model)


def plain_mapping(data: object) -> object:
    """A mapping as a dict (strict validation takes dicts only); anything else as it is."""
    return dict(data) if isinstance(data, Mapping) and not isinstance(data, dict) else data


def _words(items: Sequence[str], *, lowercase: bool = True) -> tuple[str, ...]:
    """Strip (and lowercase) a validated word list and drop repeats, keeping the order."""
    cleaned = (item.strip().lower() if lowercase else item.strip() for item in items)
    return tuple(dict.fromkeys(cleaned))


def group_from_model(model: GroupModel) -> NeedleGroup:
    """The public group of a validated group model."""
    return NeedleGroup(
        id=model.id,
        category=model.category,
        question=model.question,
        keywords=_words(model.keywords),
        answer_cues=_words(model.answer_cues),
        needles=tuple(
            (kind, order, getattr(getattr(model.needles, kind), order))
            for kind in NEEDLE_KINDS
            for order in NEEDLE_ORDERS
        ),
        expansion_terms=_words(model.expansion_terms, lowercase=False),
    )
