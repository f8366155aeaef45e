"""The frozen experiment configuration and the parsers that validate its parts.

Every parser raises :class:`ConfigError` with a message that names the value and the
fix; the plugin turns those into ``pytest.UsageError``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_niah.errors import ConfigError

DEFAULT_LENGTHS: tuple[int, ...] = (128, 256, 512, 1024, 2048, 4096, 8192)
DEFAULT_POSITIONS = 10
DEFAULT_SEED = 42
ARMS: tuple[str, ...] = ("onehop", "literal", "expand100", "expand150", "expand250")
SCORINGS: tuple[str, ...] = ("whole", "chunk-max", "chunk-mean")
GATE_ON: tuple[str, ...] = ("point", "lower")
ORDERS: tuple[str, ...] = ("default", "inverted")
DTYPES: tuple[str, ...] = ("auto", "float32", "float16", "bfloat16")
MAX_LENGTH = 1_000_000


def parse_lengths(value: str | Sequence[int]) -> tuple[int, ...]:
    """Parse haystack lengths such as ``"128,512,2048"`` into sorted unique ints.

    Raises:
        ConfigError: on a non-integer, a value below 16 or above 1,000,000, or an empty list.
    """
    items = _split(value) if isinstance(value, str) else list(value)
    if not items:
        raise ConfigError("haystack lengths: the list is empty; give e.g. '128,256,512'")
    lengths = []
    for item in items:
        try:
            if isinstance(item, bool) or (isinstance(item, float) and not item.is_integer()):
                raise ValueError
            length = int(item)
        except (TypeError, ValueError):
            raise ConfigError(
                f"haystack lengths: {item!r} is not a whole number of tokens; "
                "give e.g. '128,256,512'"
            ) from None
        if not 16 <= length <= MAX_LENGTH:
            raise ConfigError(
                f"haystack lengths: {length} is out of range; each length must be 16..{MAX_LENGTH} "
                "tokens, e.g. '128,256,512'"
            )
        lengths.append(length)
    return tuple(sorted(set(lengths)))


def parse_positive_int(value: str | int, *, what: str, minimum: int = 1) -> int:
    """Parse an integer that must be at least ``minimum``."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {value!r} is not a whole number") from None
    if number < minimum:
        raise ConfigError(f"{what}: {number} is too small; it must be at least {minimum}")
    return number


def parse_choices(
    value: str | Sequence[str], *, what: str, choices: Sequence[str]
) -> tuple[str, ...]:
    """Parse a comma list whose items must come from ``choices``; keeps the given order."""
    items = _split(value) if isinstance(value, str) else [str(v) for v in value]
    if not items:
        raise ConfigError(f"{what}: the list is empty; choose from {', '.join(choices)}")
    unknown = [item for item in items if item not in choices]
    if unknown:
        raise ConfigError(
            f"{what}: unknown value {', '.join(map(repr, unknown))}; "
            f"choose from {', '.join(choices)}"
        )
    return tuple(dict.fromkeys(items))


def parse_choice(value: str, *, what: str, choices: Sequence[str]) -> str:
    """Parse one value that must come from ``choices``."""
    if value not in choices:
        raise ConfigError(f"{what}: unknown value {value!r}; choose from {', '.join(choices)}")
    return value


def parse_device(value: str) -> str:
    """``auto``, ``cpu``, ``mps``, ``cuda``, ``cuda:N``, or a comma list for several GPUs."""
    from pytest_niah.embed.models import parse_devices

    try:
        return ",".join(parse_devices(str(value)))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def parse_json_object(value: str | Mapping[str, Any] | None, *, what: str) -> dict[str, Any]:
    """Parse a JSON object given on the command line, e.g. ``'{"task": "text-matching"}'``."""
    if value is None or value == "":
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what}: {value!r} is not valid JSON ({exc.msg} at column {exc.colno}); "
            'give an object such as \'{"task": "text-matching"}\''
        ) from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"{what}: {value!r} is JSON but not an object; wrap it in {{...}}")
    return parsed


def parse_thresholds(value: str | float | Mapping[int, float] | None, *, what: str) -> Thresholds:
    """Parse a gate threshold: one value for every length, or per length.

    ``"0.6"`` gates every length at 0.6; ``"128=0.7,1024=0.6"`` gates only those lengths;
    ``"0.55,128=0.7"`` sets a default and overrides 128.

    Raises:
        ConfigError: on a malformed item or a value outside 0..1.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return Thresholds()
    if isinstance(value, Thresholds):
        return value
    if isinstance(value, (int, float)):
        return Thresholds(default=_unit(value, what))
    if isinstance(value, Mapping):
        return Thresholds(
            per_length=tuple(sorted((int(k), _unit(v, what)) for k, v in value.items()))
        )
    default: float | None = None
    per_length: dict[int, float] = {}
    for item in _split(value):
        if "=" in item:
            key, _, number = item.partition("=")
            try:
                length = int(key)
            except ValueError:
                raise ConfigError(
                    f"{what}: {item!r} has no whole-number length before '='; write e.g. '128=0.7'"
                ) from None
            if length in per_length:
                raise ConfigError(
                    f"{what}: length {length} is given two thresholds ({per_length[length]:g} "
                    f"and {number.strip()}); keep one"
                )
            per_length[length] = _unit(number, what)
        else:
            if default is not None:
                raise ConfigError(
                    f"{what}: two default thresholds ({default:g} and {item}); keep one, and "
                    "write per-length values as LENGTH=VALUE"
                )
            default = _unit(item, what)
    return Thresholds(default=default, per_length=tuple(sorted(per_length.items())))


@dataclass(frozen=True)
class Thresholds:
    """A gate threshold, one default and optional per-length overrides."""

    default: float | None = None
    per_length: tuple[tuple[int, float], ...] = ()

    def at(self, length: int) -> float | None:
        """The threshold for ``length``, or ``None`` when that length is not gated."""
        return dict(self.per_length).get(length, self.default)

    def __bool__(self) -> bool:
        return self.default is not None or bool(self.per_length)

    def describe(self) -> str:
        """Render back in the option's syntax."""
        parts = [] if self.default is None else [repr(self.default)]
        parts += [f"{length}={value!r}" for length, value in self.per_length]
        return ",".join(parts) or "none"


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
            raise ConfigError("--niah-model: empty model name; give a hub name or a local path")
        label, sep, name = value.partition("=")
        if sep and label and _is_label(label) and name:
            return cls(label=label, name=name)
        return cls(label=default_label(value), name=value)


def default_label(name: str) -> str:
    """A short id-safe label for a model name or path (the last path component)."""
    path = name.replace("\\", "/").rstrip("/")
    stem = path.rsplit("/", 1)[-1] or name
    if stem.lower() in {"model", "models", "snapshot", "latest"} and "/" in path:
        parent = path.rsplit("/", 2)[-2]
        stem = f"{parent}-{stem}"
    return "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in stem)


@dataclass(frozen=True)
class NiahConfig:
    """Everything that determines one experiment; the same config gives the same results.

    Attributes:
        model: Model name on the hub, local path, ``packaged-minilm``, or ``lexical:tfidf``.
        corpus: ``"gutenberg"`` (pinned download) or a folder of ``.txt`` books.
        needles: Path of a needle-set JSON file, or ``"builtin"``.
        groups: Needle group ids or categories to keep; empty keeps all.
        lengths: Haystack lengths in tokens of the model's tokenizer.
        positions: Needle positions per haystack length, evenly spaced start to end.
        controls: No-needle control haystacks per question and length.
        arms: Needle/query variants: ``onehop``, ``literal`` (needles that state the answer
            in the question's words), ``expand100``/``expand150``/``expand250`` (one-hop
            needles, questions expanded with that many related terms).
        scoring: How a haystack is scored: ``whole`` (its own embedding, as in the study),
            ``chunk-max`` (best chunk), ``chunk-mean`` (mean of chunk embeddings).
        chunk_tokens: Chunk size for chunk scoring; ``None`` uses the model's window.
        expansions: Path of an expansion-terms JSON file, or ``"builtin"``.
        bootstrap: Bootstrap resamples (over needle groups) for the 95% intervals.
        orders: Needle word orders: ``default`` and/or ``inverted``.
        seed: Seed of every random choice.
        device: ``auto`` picks cuda, then mps, then cpu; ``cuda:0,cuda:1`` uses both GPUs.
        dtype: Model dtype; ``auto`` is bfloat16/float16 on a GPU, float32 elsewhere.
        batch_size: Texts per encode batch when ``token_budget`` is 0 (and on several devices).
        token_budget: Padded tokens per encode batch: texts are sorted by length and packed
            under it, so long texts do not run out of memory and short ones fill the device.
        trust_remote_code: Allow model code from the hub to run.
        model_kwargs: Extra keyword arguments for the model constructor.
        encode_kwargs: Extra keyword arguments for every ``encode`` call.
        query_prompt: Text prepended to questions.
        doc_prompt: Text prepended to haystacks and needles.
        max_seq_length: Override of the model's window in tokens; ``None`` keeps it.
    """

    model: str
    corpus: str = "gutenberg"
    needles: str = "builtin"
    groups: tuple[str, ...] = ()
    lengths: tuple[int, ...] = DEFAULT_LENGTHS
    positions: int = DEFAULT_POSITIONS
    controls: int = 1
    arms: tuple[str, ...] = ("onehop",)
    scoring: tuple[str, ...] = ("whole",)
    chunk_tokens: int | None = None
    expansions: str = "builtin"
    bootstrap: int = 1000
    orders: tuple[str, ...] = ORDERS
    seed: int = DEFAULT_SEED
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 16
    token_budget: int = 16384
    trust_remote_code: bool = False
    model_kwargs: Mapping[str, Any] = field(default_factory=dict)
    encode_kwargs: Mapping[str, Any] = field(default_factory=dict)
    query_prompt: str = ""
    doc_prompt: str = ""
    max_seq_length: int | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalize in place once
        set_(self, "lengths", parse_lengths(self.lengths))
        set_(self, "positions", parse_positive_int(self.positions, what="needle positions"))
        set_(self, "controls", parse_positive_int(self.controls, what="controls per question"))
        set_(self, "arms", parse_choices(self.arms, what="arms", choices=ARMS))
        set_(self, "scoring", parse_choices(self.scoring, what="scoring", choices=SCORINGS))
        set_(
            self,
            "bootstrap",
            parse_positive_int(self.bootstrap, what="bootstrap resamples", minimum=0),
        )
        if self.chunk_tokens is not None:
            set_(
                self,
                "chunk_tokens",
                parse_positive_int(self.chunk_tokens, what="chunk tokens", minimum=8),
            )
        set_(self, "orders", parse_choices(self.orders, what="needle orders", choices=ORDERS))
        set_(self, "device", parse_device(self.device))
        set_(self, "dtype", parse_choice(self.dtype, what="dtype", choices=DTYPES))
        set_(self, "batch_size", parse_positive_int(self.batch_size, what="batch size"))
        set_(
            self,
            "token_budget",
            parse_positive_int(self.token_budget, what="token budget", minimum=0),
        )
        set_(self, "seed", parse_positive_int(self.seed, what="seed", minimum=0))
        groups = self.groups.split(",") if isinstance(self.groups, str) else self.groups
        set_(self, "groups", tuple(g.strip() for g in groups if g.strip()))
        set_(self, "model_kwargs", parse_json_object(self.model_kwargs, what="model kwargs"))
        if self.model_kwargs.get("trust_remote_code") and not self.trust_remote_code:
            raise ConfigError(
                "model kwargs: trust_remote_code cannot be set there; use "
                "--niah-trust-remote-code if you trust the model's code"
            )
        set_(self, "encode_kwargs", parse_json_object(self.encode_kwargs, what="encode kwargs"))
        if self.max_seq_length is not None:
            set_(
                self,
                "max_seq_length",
                parse_positive_int(self.max_seq_length, what="max seq length"),
            )
        if not self.model:
            raise ConfigError("model: empty; give a hub name, a local path or 'lexical:tfidf'")

    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        data = dataclasses.asdict(self)
        return json.loads(json.dumps(data, sort_keys=True))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NiahConfig:
        """Rebuild from :meth:`to_dict` output; unknown keys are an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"config: unknown keys {unknown}; expected some of {sorted(known)}")
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**values)

    def replace(self, **changes: Any) -> NiahConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def fingerprint(self) -> str:
        """Short sha256 of the canonical config: names the shared results file."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _unit(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {value!r} is not a number; give a value in 0..1") from None
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ConfigError(f"{what}: {number:g} is out of range; give a value in 0..1")
    return number


def _is_label(text: str) -> bool:
    return all(ch.isalnum() or ch in "._-" for ch in text) and "/" not in text
