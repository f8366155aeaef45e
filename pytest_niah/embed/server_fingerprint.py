"""A served model's fingerprint: what its answers are this run, part of its identity.

A server's weights cannot be hashed, and its name and address stay the same when another
model is started behind them (a window of 128 tokens where there was one of 256, a
bfloat16 deployment where there was a float32 one). So every run, reused results included,
measures the server before trusting a cache: its noise
(:mod:`~pytest_niah.embed.server_noise`), what it reads (the window probe, sent past the
cache) and the vectors of a few fixed texts sent as one batch of their own, twice. That
fingerprint joins the identity, which keys the embedding cache and the results cache: a
changed server reuses nothing and mixes nothing, and a reused result's measured window is
the one this run measured. (What the server reports about itself -- its ``/models`` entry,
text-embeddings-inference's ``/info`` -- is part of the identity already:
:mod:`~pytest_niah.embed.server_report`.)

The identity cannot hash the vectors themselves: a server that is not bit-deterministic
(GPU kernels that sum in another order) would never hit its own cache. Instead the cache
folder keeps the fingerprints seen for each endpoint; a new one that matches a kept one
takes that one's key, else it is kept as a new one. They match with the same reading over
the tokens both probes looked at, and every fixed vector within a few times the larger of
the two same-batch repeat noises (:func:`~pytest_niah.embed.server_watch.tolerance`): the
fixed batch is always sent alone, so batch-mates (which move a bfloat16 server's vectors by
as much as the dtype does) never widen the tolerance, and a deterministic server matches
only to float32 noise. The inputs are cut to this run's measured window before they are
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
from pytest_niah.embed.server_noise import fixed_inputs
from pytest_niah.embed.server_watch import (
    EVERY_REQUESTS,
    EVERY_SECONDS,
    CheckedBatch,
    ServerWatch,
    check_inputs,
    moved,
    tolerance,
    watch_batch,
)
from pytest_niah.embed.window_probe import WindowMeasurement
from pytest_niah.files import write_atomic
from pytest_niah.inputs.books import Corpus

REGISTRY_FOLDER = "servers"
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
        repeat: How far the fixed batch moved when sent alone again, relative to length.
        vectors: The fixed texts' vectors, sent as one batch of their own.
    """

    window: int | None
    probed: int
    note: str
    repeat: float
    vectors: tuple[tuple[float, ...], ...]

    @classmethod
    def of(cls, measured: WindowMeasurement, fixed: CheckedBatch) -> ServerFingerprint:
        """The fingerprint of one run's probe and its fixed batch, sent alone twice."""
        rows = np.asarray(fixed.vectors, dtype=np.float32)
        vectors = tuple(tuple(float(x) for x in row) for row in rows)
        return cls(measured.window, measured.probed, measured.note, fixed.repeat, vectors)

    @classmethod
    def from_dict(cls, data: Any) -> ServerFingerprint | None:
        """A kept fingerprint, or ``None`` for an entry that is not one."""
        try:
            return cls(
                None if data["window"] is None else int(data["window"]),
                int(data["probed"]),
                str(data["note"]),
                float(data["repeat"]),
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
        """The same reading and every fixed vector within the same-batch repeat noise.

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
        return moved(a, b) <= tolerance(self.repeat, other.repeat)


FIXED_BATCH = "the fixed fingerprint texts"
DRAWN_BATCH = "the check texts drawn for this run"


def start_watch(embedder: Served, corpus: Corpus, seed: int) -> ServerWatch:
    """The checks of a served model during its run: its fixed batch, and texts drawn now.

    The fixed batch's reference is this run's fingerprint; the drawn texts (``seed``) are
    sent alone twice now, for their answer and their repeat noise. The intervals are the
    embedder's ``check_every`` (requests) and ``check_seconds`` where it has them.
    """
    pinned = embedder.fingerprint
    if pinned is None:
        raise ValueError("the server's answers are pinned before its run is watched")
    vectors = np.asarray(pinned.vectors, dtype=np.float64)
    fixed = CheckedBatch(FIXED_BATCH, tuple(fixed_inputs(embedder)), vectors, pinned.repeat)
    drawn = check_inputs(embedder, corpus, seed)
    batches = (fixed, watch_batch(embedder, DRAWN_BATCH, drawn)) if drawn else (fixed,)
    requests = getattr(embedder, "request_seconds", ())
    every = getattr(embedder, "check_every", EVERY_REQUESTS)
    seconds = getattr(embedder, "check_seconds", EVERY_SECONDS)
    return ServerWatch(embedder, batches, lambda: len(requests), every, seconds)


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
