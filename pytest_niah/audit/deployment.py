"""A deployment's fingerprint (``--save``) and what changed since a saved one (``--expect``).

The fingerprint holds what names the deployment (the model name, what the server reports of
itself, the tokenizer), what it reads (the declared and the measured window), its dimension,
and the vectors of the fixed texts of :mod:`~pytest_niah.embed.server_noise` sent as one
batch, alone, with how far that same request moves when repeated.

Vectors are compared at the same request's noise, never across batch-mates: a bfloat16 server
whose rounding depends on the batch repeats the same batch exactly, so a float32 deployment
restarted in bfloat16 (its vectors about 2e-3 of their length away) stands far above that
noise, while batch-mate jitter of the same size never enters the comparison. Two fixed batches
match within :data:`MARGIN` times the larger repeat noise, and never closer than
:data:`FLOOR`; a move of :data:`MODEL_LEVEL` or more reads as another model, a smaller one as
another dtype or numerics.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.audit.determinism import row_distances
from pytest_niah.errors import CliError

KIND = "pytest-niah endpoint fingerprint"
VERSION = 1
MARGIN = 4.0
# Float32 repeats bit for bit; bfloat16 moves a vector by about 2e-3 of its length.
FLOOR = 1e-4
MODEL_LEVEL = 0.02
_MAX_BYTES = 16 * 2**20


@dataclass(frozen=True)
class Fingerprint:
    """What identifies a deployment.

    Attributes:
        endpoint: The API root (no query string, no key).
        model: The model name asked for.
        server_model: What the server reports about the model (``GET /models``).
        tokenizer: The tokenizer's identity.
        declared: The declared window, special tokens included.
        measured: Text tokens the server was seen to read (``None``: not measured or no limit).
        dim: The vectors' dimension.
        repeat: How far the fixed batch moved when sent again alone.
        vectors: The fixed batch's vectors.
    """

    endpoint: str
    model: str
    server_model: dict[str, Any]
    tokenizer: str
    declared: int
    measured: int | None
    dim: int
    repeat: float
    vectors: tuple[tuple[float, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        """The fingerprint as JSON-ready data, with its kind and version."""
        return {"kind": KIND, "version": VERSION, **asdict(self)}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Fingerprint:
        """A saved fingerprint (``where`` names it in the error).

        Raises:
            CliError: the data is not a fingerprint of this version.
        """
        if isinstance(data, dict) and isinstance(data.get("fingerprint"), dict):
            data = data["fingerprint"]  # an audit's --json file holds one
        try:
            if data["kind"] != KIND or data["version"] != VERSION:
                raise ValueError("another kind or version")
            return cls(
                endpoint=str(data["endpoint"]),
                model=str(data["model"]),
                server_model=dict(data["server_model"]),
                tokenizer=str(data["tokenizer"]),
                declared=int(data["declared"]),
                measured=None if data["measured"] is None else int(data["measured"]),
                dim=int(data["dim"]),
                repeat=float(data["repeat"]),
                vectors=tuple(tuple(float(x) for x in row) for row in data["vectors"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CliError(
                f"--expect: {where} is not a saved audit of this version ({exc})",
                "give a file written by 'pytest-niah audit --save FILE' (or its --json FILE)",
            ) from None


def fingerprint_of(**fields: Any) -> Fingerprint:
    """A fingerprint of the audit's findings (the vectors rounded to float32)."""
    rows = np.asarray(fields.pop("vectors"), dtype=np.float32)
    vectors = tuple(tuple(float(x) for x in row) for row in rows)
    return Fingerprint(vectors=vectors, **fields)


def read_fingerprint(path: str) -> Fingerprint:
    """The fingerprint saved in ``path`` (a ``--save`` or ``--json`` file).

    Raises:
        CliError: the file is missing, too large, not JSON or not a fingerprint.
    """
    target = Path(path)
    try:
        if not target.is_file():
            raise CliError(
                f"--expect: {path!r} is not a file",
                "give the file 'pytest-niah audit --save FILE' wrote",
            )
        with target.open("rb") as stream:
            raw = stream.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise CliError(f"--expect: cannot read {path!r}: {exc.strerror or exc}") from None
    if len(raw) > _MAX_BYTES:
        raise CliError(
            f"--expect: {path!r} is larger than any saved audit ({_MAX_BYTES:,} bytes read)",
            "give the file 'pytest-niah audit --save FILE' wrote",
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CliError(
            f"--expect: {path!r} is not JSON", "give the file 'pytest-niah audit --save FILE' wrote"
        ) from None
    return Fingerprint.from_dict(data, repr(path))


@dataclass(frozen=True)
class Change:
    """One way the deployment differs from the saved one."""

    what: str
    saved: str
    now: str


def changes(saved: Fingerprint, now: Fingerprint) -> list[Change]:
    """How ``now`` differs from ``saved``: empty when it is the same deployment."""
    found = []
    for what, before, after in (
        ("model name", saved.model, now.model),
        ("the model the server reports", _reported(saved), _reported(now)),
        ("declared window", saved.declared, now.declared),
        ("measured window", saved.measured, now.measured),
        ("dimension", saved.dim, now.dim),
    ):
        if before != after:
            found.append(Change(what, str(before), str(after)))
    vectors = vector_change(saved, now)
    if vectors is not None:
        found.append(vectors)
    return found


def _reported(fingerprint: Fingerprint) -> str:
    server = fingerprint.server_model
    return json.dumps({k: server[k] for k in sorted(server) if k != "max_model_len"})


def tolerance(saved: Fingerprint, now: Fingerprint) -> float:
    """How far the fixed batch may move and still be the same deployment."""
    return max(FLOOR, MARGIN * max(saved.repeat, now.repeat))


def vector_change(saved: Fingerprint, now: Fingerprint) -> Change | None:
    """The fixed batch's move, when it stands above the same request's noise."""
    a, b = np.asarray(saved.vectors), np.asarray(now.vectors)
    if a.shape != b.shape:
        return None  # the dimension (or the fixed texts) changed: said elsewhere
    moved = max(row_distances(a, b))
    allowed = tolerance(saved, now)
    if moved <= allowed:
        return None
    kind = "another model" if moved >= MODEL_LEVEL else "another dtype or numerics"
    return Change(
        f"fixed batch's vectors ({kind})",
        f"same-request noise {max(saved.repeat, now.repeat):.2g}, allowed {allowed:.2g}",
        f"moved {moved:.3g} of their length",
    )


def dtype_visible(saved: Fingerprint, now: Fingerprint) -> bool:
    """Whether a float32 <-> bfloat16 change (about 2e-3) would stand above the noise."""
    return tolerance(saved, now) < 1e-3
