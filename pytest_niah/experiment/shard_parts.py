"""The part file of a shard job: job K of N, and one ``.npz`` file written and read back.

A part holds the input keys, their vectors (float32) and a JSON manifest: the run's layout
(haystacks, which inputs score each, the model's identity), the job (K of N) and a digest of
the keys with their vectors, so that rows moved against their keys, or changed, are refused;
so is a row that is not finite, and a manifest of another part schema.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config import strict_json
from pytest_niah.config.bounded_numbers import parse_shard
from pytest_niah.config.parsers import named
from pytest_niah.embed.server_fingerprint import ServerFingerprint
from pytest_niah.errors import ConfigError, ShardError
from pytest_niah.files import write_atomic

PART_SCHEMA = 3  # 2: the manifest holds the rows' digest; 3: and the part's batches
_PART = re.compile(r"part-(\d+)-of-(\d+)\.npz")


@dataclass(frozen=True)
class Shard:
    """Job ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, value: str) -> Shard:
        """``"2/3"`` -> ``Shard(2, 3)``.

        Raises:
            ConfigError: not ``K/N`` with ``1 <= K <= N``.
        """
        parsed = named("--niah-shard", parse_shard, value)
        if parsed is None:
            raise ConfigError("--niah-shard: no value", "give K/N, e.g. --niah-shard=2/4")
        return cls(*parsed)

    @property
    def file_name(self) -> str:
        """The part file this job writes."""
        return f"part-{self.index:03d}-of-{self.count:03d}.npz"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def part_files(folder: Path) -> list[Path]:
    """The part files (``part-K-of-N.npz``) in ``folder``, sorted by name."""
    return sorted(p for p in folder.glob("part-*.npz") if _PART.fullmatch(p.name))


def write_part(path: Path, manifest: Mapping[str, Any], keys: Sequence[str], rows: Any) -> None:
    """One part file, whole or not at all."""
    from pytest_niah.errors import OutputError

    vectors = np.asarray(rows, dtype=np.float32)
    manifest = {**manifest, "rows_digest": rows_digest(keys, vectors)}
    buffer = io.BytesIO()
    np.savez(
        buffer,
        manifest=np.frombuffer(json.dumps(manifest, sort_keys=True).encode(), dtype=np.uint8),
        keys=np.asarray(list(keys), dtype="U64"),
        vectors=vectors,
    )
    try:
        write_atomic(path, buffer.getvalue())
    except OSError as exc:
        raise OutputError(
            f"--niah-shard-dir: cannot write the part {path} ({exc.strerror or exc})",
            "give a writable folder (it is created if missing)",
        ) from exc


def rows_digest(keys: Sequence[str], vectors: Any) -> str:
    """Hash of the keys in order with their vectors (as little-endian float32) in order."""
    hasher = hashlib.sha256()
    hasher.update("\n".join(keys).encode())
    hasher.update(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
    return hasher.hexdigest()


@dataclass(frozen=True)
class Part:
    """One part file, read."""

    path: Path
    shard: Shard
    manifest: dict[str, Any]
    keys: list[str]
    vectors: np.ndarray

    @property
    def batches(self) -> list[list[int]]:
        """The run's batches this part embedded, as positions of their inputs in the plan."""
        batches: list[list[int]] = self.manifest["batches"]
        return batches

    @property
    def layout_digest(self) -> str:
        """Hash of the run this part belongs to (config and layout)."""
        run = {"config": self.manifest["config"], "layout": self.manifest["layout"]}
        return hashlib.sha256(json.dumps(run, sort_keys=True).encode()).hexdigest()

    @property
    def unpinned_digest(self) -> str:
        """:attr:`layout_digest` with a served model's answers left out of its identity."""
        layout = json.loads(json.dumps(self.manifest["layout"]))
        model = layout.get("model")
        if isinstance(model, dict):
            model.pop("fingerprint", None)
            source = model.get("identity", {}).get("source")
            if isinstance(source, dict):
                source.pop("answers", None)
        run = {"config": self.manifest["config"], "layout": layout}
        return hashlib.sha256(json.dumps(run, sort_keys=True).encode()).hexdigest()

    @property
    def server(self) -> ServerFingerprint | None:
        """The served model's fingerprint as its shard job measured it (else ``None``)."""
        return ServerFingerprint.from_dict(self.manifest.get("server"))


def same_served_run(a: Part, b: Part) -> bool:
    """Parts of one run on a server that is not bit-deterministic.

    Each shard job measures the server and keys its answers in its own cache, so a server
    whose vectors move a little from call to call (GPU kernels) gives each job another
    answers key. Such parts are one run when everything else is the same and their
    fingerprints match within the server's measured noise (the rule a cache uses).
    """
    ours, theirs = a.server, b.server
    if ours is None or theirs is None or a.unpinned_digest != b.unpinned_digest:
        return False
    return ours.matches(theirs)


def read_part(path: Path) -> Part:
    """Read a part file.

    Raises:
        ShardError: it is not a pytest-niah part (named, with the fix).
    """
    fix = "remove it from the folder, or write it again with --niah-shard"
    try:
        with np.load(path, allow_pickle=False) as data:
            manifest = strict_json.strict_loads(
                bytes(data["manifest"]),
                lambda problem, hint, _: ShardError(f"{path}: its manifest: {problem}", fix),
            )
            keys = [str(k) for k in data["keys"]]
            vectors = np.asarray(data["vectors"], dtype=np.float32)
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        # An empty or cut file ends np.load early (EOFError); other bytes are no zip.
        cause = str(exc) or type(exc).__name__
        raise ShardError(f"{path} is not a readable pytest-niah part ({cause})", fix) from exc
    schema = manifest.get("part_schema") if isinstance(manifest, dict) else None
    if type(schema) is not int or schema != PART_SCHEMA:
        # As JSON, so that "2" (a string, a hand-edited manifest) does not read as 2.
        given = json.dumps(schema) if isinstance(manifest, dict) else "?"
        raise ShardError(
            f"{path} is a part of another pytest-niah version, or a changed one (part schema "
            f"{given}{'' if type(schema) is int else ', not a whole number'}, this one reads "
            f"{PART_SCHEMA})",
            "write every part with the same pytest-niah as the gate job",
        )
    try:
        index, count = (int(n) for n in manifest["shard"])
        shard = Shard(index, count)
        layout = manifest["layout"]
        _ = manifest["config"], layout["plan"]["tokens"]
        batches = manifest["batches"]
        if not isinstance(batches, list) or not all(
            isinstance(batch, list) and all(type(p) is int for p in batch) for batch in batches
        ):
            raise TypeError("its batches are not lists of input positions")
    except (KeyError, TypeError, ValueError) as exc:
        raise ShardError(f"{path} has a damaged manifest ({exc})", fix) from exc
    if len(keys) != len(vectors):
        raise ShardError(f"{path} holds {len(keys)} keys but {len(vectors)} vectors", fix)
    _check_rows(path, manifest, keys, vectors)
    if keys:
        vectors = vectors.reshape(len(keys), -1)  # one row per key, whatever shape was stored
    return Part(path, shard, manifest, keys, vectors)


def _check_rows(path: Path, manifest: Mapping[str, Any], keys: list[str], vectors: Any) -> None:
    """Refuse rows that are not finite, or that are not the ones written under their keys."""
    fix = "write the part again with --niah-shard; do not edit part files"
    if vectors.size and not np.isfinite(vectors).all():
        finite = np.isfinite(vectors.reshape(len(keys), -1)).all(axis=1)
        bad = [keys[i] for i in np.flatnonzero(~finite)]
        raise ShardError(
            f"{path} holds {len(bad)} vector(s) with NaN or infinite values (first: input "
            f"{bad[0]})",
            fix,
        )
    expected = manifest.get("rows_digest")
    if expected != rows_digest(keys, vectors):
        raise ShardError(
            f"{path}: its vectors do not match its keys (the rows' digest differs from the "
            "manifest's: rows reordered, changed or cut after the part was written)",
            fix,
        )
