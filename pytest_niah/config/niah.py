"""The frozen experiment configuration, and the model specs of a run.

Every field's default and validation come from the option of the same name
(:data:`pytest_niah.config.options.OPTIONS`): the command line, ini files and the Python
API accept the same values and fail with the same messages, naming the field.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_niah.config.options import BY_NAME, default
from pytest_niah.config.parsers import named
from pytest_niah.errors import ConfigError


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
        if sep and label and _is_label(label) and name:
            return cls(label=label, name=name)
        return cls(label=default_label(value), name=value)


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
    return "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in stem)


def _is_label(text: str) -> bool:
    return all(ch.isalnum() or ch in "._-" for ch in text) and "/" not in text


@dataclass(frozen=True)
class NiahConfig:
    """Everything that determines one experiment; the same config gives the same results.

    Each field is described by its option (``pytest --help``, README "Options"); values
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

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        data = dataclasses.asdict(self)
        loaded: dict[str, Any] = json.loads(json.dumps(data, sort_keys=True))
        return loaded

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
        """Short sha256 of the canonical config: names the shared results file."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]
