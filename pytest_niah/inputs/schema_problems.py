"""What an error message is built from: the problem, its file format and the raw data.

:class:`LocatedProblem` is one pydantic error with the location of a cross-value rule resolved;
:class:`SchemaFormat` holds what a message needs to know about a file format (its model, its
published schema and an example value per key); the lookups find the keys and groups of
the raw data and the model at a JSON path, and the group a problem is in.
:mod:`pytest_niah.inputs.schema_messages` writes the messages from them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel

from pytest_niah.inputs.jsonfile import json_path, json_type
from pytest_niah.inputs.schema_models import ExpansionSetModel, GroupModel, NeedleSetModel
from pytest_niah.inputs.schema_values import INPUT_SCHEMA_VERSION, SLUG_RE, StrictModel


@dataclass(frozen=True)
class SchemaFormat:
    """What :func:`~pytest_niah.inputs.schema_messages.to_error` needs to know about a format."""

    model: type[StrictModel]
    schema: str  # the published schema file's name, for fixes
    examples: Mapping[str, str]
    root_example: str


_NEEDLE_EXAMPLES = {
    "$schema": '"needle-set.schema.json"',
    "schema_version": str(INPUT_SCHEMA_VERSION),
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
    "schema_version": str(INPUT_SCHEMA_VERSION),
    "name": '"my-expansions"',
    "description": '"What the terms are for."',
    "expansions": '{"pet-01": ["bird", "feathers"]}',
    "expansions{}": '["bird", "feathers"]',
    "expansions{}[]": '"bird"',
}
FORMATS: dict[str, SchemaFormat] = {
    "needle-set": SchemaFormat(
        NeedleSetModel,
        "needle-set.schema.json",
        _NEEDLE_EXAMPLES,
        '{"schema_version": 1, "name": ..., "groups": [...]}',
    ),
    "needle-group": SchemaFormat(
        GroupModel,
        "needle-set.schema.json",
        _NEEDLE_EXAMPLES,
        '{"id": "pet-01", "category": "pet", "question": ..., ...}',
    ),
    "expansion-set": SchemaFormat(
        ExpansionSetModel,
        "expansion-set.schema.json",
        _EXPANSION_EXAMPLES,
        '{"schema_version": 1, "name": ..., "expansions": {...}}',
    ),
}
_FIELD_NAMES = frozenset(key for spec in FORMATS.values() for key in spec.examples)


class LocatedProblem:
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
        """The last step of the location: the field or index at fault; None for the file."""
        return self.loc[-1] if self.loc else None


def raw_groups(data: object) -> list[Any]:
    """The raw data's ``groups`` list, as written; empty when it has none."""
    groups = data.get("groups") if isinstance(data, Mapping) else None
    return groups if isinstance(groups, list) else []


def raw_group(data: object, index: int) -> object:
    """The raw data's group at ``index``, as written; None when there is none."""
    groups = raw_groups(data)
    return groups[index] if 0 <= index < len(groups) else None


def group_label(problem: LocatedProblem, data: object, kind: str) -> str | None:
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
        return _usable_id(raw_group(data, loc[1])) or f"groups[{loc[1]}]"
    return None


def _usable_id(group: object) -> str | None:
    if isinstance(group, Mapping):
        group_id = group.get("id")
        if isinstance(group_id, str) and SLUG_RE.fullmatch(group_id):
            return group_id
    return None


def quote_value(value: object, limit: int = 60) -> str:
    """A value as the message shows it: a Python-quoted string, or compact JSON."""
    if isinstance(value, str):
        text = value if len(value) <= limit else value[: limit - 1] + "…"
        return repr(text)
    try:
        text = json.dumps(value, ensure_ascii=True, default=repr)
    except (ValueError, RecursionError):
        text = json_type(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _example(loc: tuple[str | int, ...], spec: SchemaFormat) -> str:
    """An example value for a location, from the format's examples (``...`` if none)."""
    for index in range(len(loc) - 1, -1, -1):
        step = loc[index]
        if isinstance(step, str) and step in _FIELD_NAMES and step in spec.examples:
            suffix = "".join("[]" if isinstance(s, int) else "{}" for s in loc[index + 1 :])
            return spec.examples.get(step + suffix, "...")
    return spec.root_example if not loc else "..."


def _model_at(spec: SchemaFormat, loc: tuple[str | int, ...]) -> type[BaseModel] | None:
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


def keys_at(data: object, loc: tuple[str | int, ...]) -> set[str]:
    """The keys of the object at ``loc`` in the raw data (none if it is not an object)."""
    for step in loc:
        if isinstance(data, Mapping) and isinstance(step, str):
            data = data.get(step)
        elif isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
        else:
            return set()
    return {str(key) for key in data} if isinstance(data, Mapping) else set()


def allowed_keys(spec: SchemaFormat, parent: tuple[str | int, ...]) -> list[str]:
    """The keys the object at ``parent`` may have (as written in JSON); none if unknown."""
    model = _model_at(spec, parent)
    if model is None:
        return []
    return [info.alias or name for name, info in model.model_fields.items()]


@dataclass(frozen=True)
class ProblemCase:
    """One problem to describe, with what its description needs."""

    problem: LocatedProblem
    spec: SchemaFormat
    kind: str
    rename: str | None
    data: object

    @property
    def loc(self) -> tuple[str | int, ...]:
        """The problem's location."""
        return self.problem.loc

    @property
    def example(self) -> str:
        """A valid example of the field at fault, for the fix."""
        return _example(self.problem.loc, self.spec)

    @property
    def top_level(self) -> bool:
        """A problem of a top-level field of the file (not of a group)."""
        return len(self.problem.loc) == 1 and self.kind != "needle-group"
