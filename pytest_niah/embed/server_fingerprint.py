"""A served model's fingerprint: what its answers are this run, part of its identity.

A server's weights cannot be hashed, and its name and address stay the same when another
model is started behind them (a window of 128 tokens where there was one of 256). So every
run, reused results included, measures the server before trusting a cache: its noise
(:mod:`~pytest_niah.embed.server_noise`), what it reads (the window probe, sent past the
cache) and the vectors of a few fixed texts. That fingerprint joins the identity, which keys
the embedding cache and the results cache: a changed server reuses nothing and mixes
nothing, and a reused result's measured window is the one this run measured.

The identity cannot hash the vectors themselves: a server that is not bit-deterministic
(GPU kernels, bfloat16 rounding that depends on batch-mates) would never hit its own cache.
Instead the cache folder keeps the fingerprints seen for each endpoint; a new one that
matches a kept one (the same reading over the tokens both probes looked at, every fixed
vector within a few times the larger of the two measured spreads) takes that one's key, else
it is kept as a new one. The inputs are cut to this run's measured window before they are
keyed, so the vectors a run reads from the cache are of the tokens it saw the server read.
Without a cache the key is the fingerprint's own hash: nothing is reused anyway.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeGuard

import numpy as np

from pytest_niah.digest import digest
from pytest_niah.embed.identity import ModelIdentity
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.server_noise import ServerNoise
from pytest_niah.embed.window_probe import WindowMeasurement
from pytest_niah.files import write_atomic

REGISTRY_FOLDER = "servers"
# Fixed vectors match within this many times the larger measured spread...
MATCH_MARGIN = 4.0
# ...and never closer than float32 noise (a deterministic server repeats bit for bit).
MATCH_FLOOR = 1e-5
_LOCK_SECONDS = 60.0


class Served(Embedder, Protocol):
    """A model behind a server: its identity until its answers are pinned, and the pin."""

    @property
    def served_identity(self) -> ModelIdentity:
        """What the endpoint reports, before any answer is measured."""
        ...

    @property
    def fingerprint(self) -> ServerFingerprint | None:
        """This run's fingerprint, once pinned."""
        ...

    def pin_answers(self, key: str, fingerprint: ServerFingerprint) -> None:
        """Make ``key`` (of :func:`answers_key`) part of the model's identity."""
        ...


def is_served(model: object) -> TypeGuard[Served]:
    """Whether ``model`` is behind a server (asked of its class: no attribute is computed)."""
    return callable(getattr(type(model), "pin_answers", None))


@dataclass(frozen=True)
class ServerFingerprint:
    """What a server's answers were this run.

    Attributes:
        window: The window probe's measured window (``None``: none or not measured).
        probed: Tokens of each probe text.
        note: The probe's note (says which of the ``None`` cases it was).
        spread: How far the same text moved, relative to its length.
        vectors: The fixed texts' vectors.
    """

    window: int | None
    probed: int
    note: str
    spread: float
    vectors: tuple[tuple[float, ...], ...]

    @classmethod
    def of(cls, measured: WindowMeasurement, noise: ServerNoise) -> ServerFingerprint:
        """The fingerprint of one run's probe and noise measurement."""
        rows = np.asarray(noise.vectors, dtype=np.float32)
        vectors = tuple(tuple(float(x) for x in row) for row in rows)
        return cls(measured.window, measured.probed, measured.note, noise.spread, vectors)

    @classmethod
    def from_dict(cls, data: Any) -> ServerFingerprint | None:
        """A kept fingerprint, or ``None`` for an entry that is not one."""
        try:
            return cls(
                None if data["window"] is None else int(data["window"]),
                int(data["probed"]),
                str(data["note"]),
                float(data["spread"]),
                tuple(tuple(float(x) for x in row) for row in data["vectors"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def key(self) -> str:
        """The hash of the whole fingerprint."""
        return digest(asdict(self))

    def reads(self, tokens: int) -> int:
        """How many of the first ``tokens`` tokens the probe saw the server read."""
        return min(tokens, self.window) if self.window is not None else tokens

    def matches(self, other: ServerFingerprint) -> bool:
        """The same reading and every fixed vector within the servers' measured noise.

        Two probes of other lengths (another grid) agree where they both looked: a longer
        grid on the same server reuses the shorter one's vectors.
        """
        if min(self.probed, other.probed) == 0:
            if (self.probed, self.note) != (other.probed, other.note):
                return False  # not measured, and why, must be the same
        else:
            both = min(self.probed, other.probed)
            if self.reads(both) != other.reads(both):
                return False
        a, b = np.asarray(self.vectors), np.asarray(other.vectors)
        if a.shape != b.shape:
            return False
        scale = np.maximum(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
        moved = np.linalg.norm(a - b, axis=1) / np.where(scale > 0, scale, 1.0)
        tolerance = max(MATCH_FLOOR, MATCH_MARGIN * max(self.spread, other.spread))
        return bool((moved <= tolerance).all())


def answers_key(fingerprint: ServerFingerprint, space: str, folder: Path | None) -> str:
    """The key of a kept fingerprint ``fingerprint`` matches, else its own (then kept).

    Args:
        fingerprint: This run's.
        space: The endpoint's identity digest: fingerprints are kept per endpoint.
        folder: The caches' root (``None``: no cache, nothing kept or matched).
    """
    if folder is None:
        return fingerprint.key
    path = Path(folder) / REGISTRY_FOLDER / f"{space}.json"
    try:
        from filelock import FileLock

        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{path}.lock", timeout=_LOCK_SECONDS):
            kept = _read(path)
            for entry in kept:
                known = ServerFingerprint.from_dict(entry)
                if known is not None and known.matches(fingerprint):
                    return known.key
            write_atomic(path, json.dumps([*kept, asdict(fingerprint)]), inside=Path(folder))
    except (OSError, TimeoutError):
        pass  # an unwritable cache only loses the shortcut: this run's own key
    return fingerprint.key


def _read(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # missing or damaged: it only held shortcuts
    return data if isinstance(data, list) else []
