"""The frozen experiment configuration, and the model specs of a run.

Every field's default and validation come from the option of the same name
(:data:`pytest_niah.config.options.OPTIONS`): the command line, ini files and the Python
API accept the same values and fail with the same messages, naming the field.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_niah.config.options import BY_NAME, default
from pytest_niah.config.parsers import named
from pytest_niah.digest import digest
from pytest_niah.errors import ConfigError
from pytest_niah.naming import MAX_LABEL_LENGTH, label_char


@dataclass(frozen=True)
class ModelSpec:
    """One model to test: a short label for ids and tables, and what to load."""

    label: str
    name: str

    @classmethod
    def parse(cls, value: str) -> ModelSpec:
        """Parse ``NAME``, ``PATH`` or ``LABEL=NAME_OR_PATH``."""
        value = value.strip()
        if not value:
            raise ConfigError(
                "--niah-model: the model name is empty", "give a hub name or a local path"
            )
        label, sep, name = value.partition("=")
        if sep and ((label and _is_label(label) and name) or _means_label(label, value)):
            label, name = label.strip(), name.strip()
            check_label(label, name=name)
            if not name:
                raise ConfigError(
                    f"--niah-model {_short(value)!r}: no model after the label {label!r}",
                    f"give one, e.g. --niah-model={label}=lexical:tfidf",
                )
            check_name_form(name, value, label=label)
            return cls(label=label, name=name)
        check_name_form(value, value)
        label = default_label(value)
        check_label(label, name=value, derived=True)
        return cls(label=label, name=value)


def check_name_form(name: str, value: str, *, label: str = "") -> None:
    """Refuse a model name holding ``=`` that names no existing file or folder.

    No hub name, alias or served model's name holds ``=``, so such a name is a
    ``LABEL=NAME`` gone wrong: a second ``=``, or a label holding ``/`` (which reads as a
    path). A served model's address (``openai+...``) may hold ``=`` in its query.

    Raises:
        ConfigError: naming the value and the ``LABEL=NAME`` form that works.
    """
    if "=" not in name or name.startswith("openai+"):
        return
    from pathlib import Path

    try:
        if Path(name).expanduser().exists():
            return
    except (OSError, ValueError):
        pass
    form = (
        "LABEL=NAME with one '=': a label of letters, digits, '.', '_' and '-', then a hub "
        "name, a local path, 'packaged-minilm' or 'lexical:tfidf'"
    )
    if label:
        rest = name.partition("=")[2]
        problem = (
            f"--niah-model {_short(value)!r}: the model {_short(name)!r} after the label "
            f"{label!r} holds '=' and is no existing path; no hub name holds '='"
        )
        fix = f"write {form}, e.g. --niah-model={label}={_short(rest) or 'NAME'}"
    else:
        before, _, after = value.partition("=")
        suggestion = _slug(before.replace("/", "-"))[:40].strip("._-") or "candidate"
        problem = (
            f"--niah-model {_short(value)!r} holds '=' and is no existing path; read as "
            f"LABEL=NAME, its label {_short(before)!r} holds characters a label may not hold"
        )
        fix = f"write {form}, e.g. --niah-model={suggestion}={_short(after) or 'NAME'}"
    raise ConfigError(problem, fix)


def default_label(name: str) -> str:
    """A short id-safe label for a model name or path (the last path component).

    A served model (``openai+URL#MODEL``) is labelled by its model name, not its URL.
    """
    if name.startswith("openai+") and "#" in name:
        name = name.split("#", 1)[1] or name
    path = name.replace("\\", "/").rstrip("/")
    stem = path.rsplit("/", 1)[-1] or name
    if stem.lower() in {"model", "models", "snapshot", "latest"} and "/" in path:
        parent = path.rsplit("/", 2)[-2]
        stem = f"{parent}-{stem}"
    return _slug(stem)


def _slug(text: str) -> str:
    """``text`` with every character a label may not hold turned into ``-``."""
    return "".join(ch if label_char(ch) else "-" for ch in text)


def _is_label(text: str) -> bool:
    return all(map(label_char, text))


def _means_label(label: str, value: str) -> bool:
    """Whether ``LABEL=...`` with an invalid label is meant as one, not a path holding ``=``.

    A part before ``=`` that holds a path separator belongs to a path or a served model's
    address (``openai+http://...``); so does a value that names an existing file or folder.
    """
    if any(sep in label for sep in ("/", "\\")):
        return False
    from pathlib import Path

    try:
        return not Path(value).expanduser().exists()
    except (OSError, ValueError):
        return True


def check_label(label: str, *, name: str = "", derived: bool = False) -> None:
    """Refuse a model label that cannot name its files, ids and table rows.

    A label is 1 to :data:`MAX_LABEL_LENGTH` characters: letters, digits, ``.``, ``_`` and
    ``-``, with at least one letter or digit (so not ``.``, ``..`` or ``-``).

    Args:
        label: The label.
        name: The model it labels, for the message.
        derived: The label was made from the model's name (no ``LABEL=`` was given).

    Raises:
        ConfigError: the label is not usable; the message names it and the fix.
    """
    shown = _short(label)
    what = (
        f"--niah-model {_short(name)!r}: the label {shown!r} made from the model name"
        if derived
        else f"--niah-model: the label {shown!r}" + (f" of {_short(name)!r}" if name else "")
    )
    if not label:
        problem = "--niah-model: the label before '=' is empty"
    elif len(label) > MAX_LABEL_LENGTH:
        problem = f"{what} is {len(label)} characters long (at most {MAX_LABEL_LENGTH})"
    elif not _is_label(label):
        odd = sorted({ch for ch in label if not label_char(ch)})
        problem = f"{what} holds {', '.join(map(repr, odd))}"
    elif not any(ch.isalnum() for ch in label):
        problem = f"{what} has no letter or digit"
    else:
        return
    suggestion = _slug(label)[:40].strip("._-") or "candidate"
    raise ConfigError(
        problem,
        "label the model with 1 to "
        f"{MAX_LABEL_LENGTH} letters, digits, '.', '_' or '-' (at least one letter or digit), "
        f"e.g. --niah-model={suggestion}={_short(name) if name else 'NAME'}",
    )


def _short(text: str, keep: int = 40) -> str:
    """``text``, cut to ``keep`` characters with "..." when longer (for messages)."""
    return text if len(text) <= keep else text[:keep] + "..."


# How a served model is reached, never what it answers: no cache or results key holds them,
# so the same run with another timeout reuses its results.
TRANSPORT = frozenset({"remote_concurrency", "remote_timeout", "api_key_env"})


@dataclass(frozen=True)
class NiahConfig:
    """Everything that determines one experiment; the same config gives the same results.

    Each field is described by its option (``pytest --help``, ``docs/reference/options.md``); values
    are validated and normalized on construction (``lengths="512,128"`` becomes
    ``(128, 512)``).

    Attributes:
        model: Model name on the hub, local path, ``packaged-minilm``, ``packaged-static``,
            ``lexical:tfidf`` or a served model ``openai+http(s)://HOST:PORT/v1#MODEL``.
    """

    model: str
    corpus: str = default("corpus")
    needles: str = default("needles")
    groups: tuple[str, ...] = default("groups")
    lengths: tuple[int, ...] = default("lengths")
    positions: int = default("positions")
    controls: int = default("controls")
    arms: tuple[str, ...] = default("arms")
    scoring: tuple[str, ...] = default("scoring")
    chunk_tokens: int | None = default("chunk_tokens")
    expansions: str = default("expansions")
    bootstrap: int = default("bootstrap")
    orders: tuple[str, ...] = default("orders")
    seed: int = default("seed")
    seeds: tuple[int, ...] = default("seeds")
    device: str = default("device")
    dtype: str = default("dtype")
    batch_size: int = default("batch_size")
    token_budget: int = default("token_budget")
    trust_remote_code: bool = default("trust_remote_code")
    model_kwargs: Mapping[str, Any] = field(default_factory=lambda: dict(default("model_kwargs")))
    encode_kwargs: Mapping[str, Any] = field(default_factory=lambda: dict(default("encode_kwargs")))
    query_prompt: str = default("query_prompt")
    doc_prompt: str = default("doc_prompt")
    max_seq_length: int | None = default("max_seq_length")
    tokenizer: str = default("tokenizer")
    api_key_env: str = default("api_key_env")
    remote_concurrency: int = default("remote_concurrency")
    remote_timeout: float = default("remote_timeout")

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ConfigError("model: empty", "give a hub name, a local path or 'packaged-minilm'")
        for item in dataclasses.fields(self):
            if item.name == "model":
                continue
            parse = BY_NAME[item.name.replace("_", "-")].parse
            value = named(item.name, parse, getattr(self, item.name))
            object.__setattr__(self, item.name, value)  # frozen: normalize in place once
        if self.model_kwargs.get("trust_remote_code") and not self.trust_remote_code:
            raise ConfigError(
                "model_kwargs: trust_remote_code cannot be set there",
                "use --niah-trust-remote-code if you trust the model's code",
            )

    @property
    def draws(self) -> tuple[int | None, ...]:
        """The haystack draws: each of ``seeds``, or one untagged draw from ``seed``.

        A tagged draw's cases and controls carry its seed in their ids (``-s7``).
        """
        return self.seeds if self.seeds else (None,)

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        data = dataclasses.asdict(self)
        loaded: dict[str, Any] = json.loads(json.dumps(data, sort_keys=True))
        return loaded

    def key_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` without the transport options (:data:`TRANSPORT`): what keys results."""
        return {k: v for k, v in self.to_dict().items() if k not in TRANSPORT}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NiahConfig:
        """Rebuild from :meth:`to_dict` output; unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(
                f"config: unknown keys {unknown}", f"keep only keys from {sorted(known)}"
            )
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items()
        }
        return cls(**values)

    def replace(self, **changes: Any) -> NiahConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def fingerprint(self) -> str:
        """Short sha256 of the canonical config, transport aside: names the shared results file."""
        return digest(self.key_dict())[:16]
