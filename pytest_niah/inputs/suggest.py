"""Values that work, for the fixes of error messages: slugs, group ids and categories.

:func:`slugify` turns a text into the closest slug; :func:`suggest_id` and
:func:`suggest_category` propose an unused id and a category for a needle group from the
raw data of its file; :func:`suggested_fix` writes the fix for a problem of a group's id or
category with such a value.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from pytest_niah.inputs.schema_models import GroupModel, NeedleSetModel
from pytest_niah.inputs.schema_problems import LocatedProblem, SchemaFormat, raw_groups
from pytest_niah.inputs.schema_values import SLUG_RE

__all__ = ["slugify", "suggest_category", "suggest_id"]


def slugify(value: str) -> str:
    """Return the slug closest to a text (``"Fast Food"`` -> ``"fast-food"``), or ``""``."""
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9_-]+", "-", ascii_text.lower())
    slug = re.sub(r"[-_]{2,}", lambda match: match.group()[0], slug).strip("-_")
    return slug if SLUG_RE.fullmatch(slug) else ""


def suggested_fix(problem: LocatedProblem, data: object, spec: SchemaFormat) -> str | None:
    """A fix with a value that works, for any problem of a group's id or category."""
    loc = problem.loc
    if spec.model is GroupModel:
        groups, index, rest = [data], 0, loc
    elif spec.model is NeedleSetModel and len(loc) >= 3 and loc[0] == "groups":
        groups, index, rest = raw_groups(data), loc[1], loc[2:]
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
