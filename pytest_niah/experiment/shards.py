"""Split a run's embedding across CI jobs, and measure from the parts in one gate job.

A *shard job* (``--niah-shard=K/N --niah-shard-dir=DIR``) plans the whole run, embeds its
share of the unique model inputs and writes one part file; shares are balanced by tokens and
the same in every job, so the N jobs together embed every input exactly once. The *gate job*
(``--niah-from-shards=DIR``) checks that the parts come from one config and one model
identity and cover every input exactly once, then measures from them without loading any
model: the results are byte-identical to an unsharded run's.

A part is one ``.npz`` file: the input keys, their vectors (float32) and a JSON manifest
holding the run's layout (haystacks, which inputs score each, the model's identity) and a
digest of the keys with their vectors, so that rows moved against their keys, or changed,
are refused; so is a row that is not finite.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config import strict_json
from pytest_niah.config.bounded_numbers import parse_shard
from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.parsers import named
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.runner import VectorTable
from pytest_niah.embed.server_fingerprint import ServerFingerprint, is_served
from pytest_niah.errors import ConfigError, ShardError
from pytest_niah.experiment import (
    CachePolicy,
    Inputs,
    Layout,
    Run,
    RunReport,
    block_inputs,
    layout_of,
    measure,
)
from pytest_niah.files import write_atomic
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.inputs.needles import load_needle_set
from pytest_niah.progress import Progress
from pytest_niah.results.niah_results import NiahResults

PART_SCHEMA = 2  # 2: the manifest holds the rows' digest
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


def shares(tokens: Mapping[str, int], count: int) -> list[list[str]]:
    """Split input keys into ``count`` shares of about equal tokens, the same in every job.

    Largest inputs first, each to the share with the fewest tokens so far (ties: the lower
    share); keys break ties between inputs of equal size.
    """
    out: list[list[str]] = [[] for _ in range(count)]
    load = [0] * count
    for key in sorted(tokens, key=lambda k: (-tokens[k], k)):
        share = min(range(count), key=lambda i: (load[i], i))
        out[share].append(key)
        load[share] += max(tokens[key], 1)
    return out


def run_shard(
    config: NiahConfig,
    shard: Shard,
    folder: str | Path,
    *,
    embedder: Embedder | None = None,
    inputs: Inputs | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
    report: RunReport | None = None,
) -> Path:
    """Plan the whole run, embed this job's share, write its part file; return the file.

    The caches are those of a whole run with the same ``cache_dir`` and ``use_cache``
    (:class:`~pytest_niah.experiment.CachePolicy`).

    Raises:
        ConfigError: the model cannot be sharded (the lexical baseline fits on all texts).
        OutputError: the part cannot be written.
    """
    run = Run.prepare(
        config,
        cache=CachePolicy.resolve(cache_dir, use_cache),
        embedder=embedder,
        inputs=inputs,
        progress=progress,
        report=report,
    )
    if run.embedder.fits_on_documents:
        raise ConfigError(
            f"--niah-shard: {config.model!r} learns from all documents at once and cannot be "
            "split across jobs",
            "run it without --niah-shard (it needs no GPU and little time)",
        )
    planning = run.plan()
    every: dict[str, ModelInput] = {i.key: i for i in planning.queries}
    total = len(config.lengths) * len(config.draws) * len(run.inputs.needle_set.groups)
    run.progress.start("building haystacks", total, "blocks")
    for block in planning.blocks:
        every.update((i.key, i) for i in block_inputs(planning, block))
        run.progress.advance(1)
    run.progress.finish(f"{len(every):,} model inputs planned")
    mine = shares(planning.plan.tokens, shard.count)[shard.index - 1]
    vectors = run.embed([[every[k] for k in mine]])
    layout = layout_of(planning, run.inputs, run.embedder)
    rows = vectors.rows(mine)
    matrix = np.asarray(vectors.matrix, dtype=np.float32)[rows] if mine else np.zeros((0, 0))
    manifest = {
        "part_schema": PART_SCHEMA,
        "shard": [shard.index, shard.count],
        "config": config.to_dict(),
        "layout": layout.to_dict(),
    }
    if is_served(run.embedder) and run.embedder.fingerprint is not None:
        manifest["server"] = asdict(run.embedder.fingerprint)
    path = Path(folder) / shard.file_name
    write_part(path, manifest, mine, matrix)
    return path


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
    except (KeyError, TypeError, ValueError) as exc:
        raise ShardError(f"{path} has a damaged manifest ({exc})", fix) from exc
    if len(keys) != len(vectors) and len(keys):
        raise ShardError(f"{path} holds {len(keys)} keys but {len(vectors)} vectors", fix)
    _check_rows(path, manifest, keys, vectors)
    if keys:
        vectors = vectors.reshape(len(keys), -1)  # one row per key, whatever shape was stored
    return Part(path, shard, manifest, keys, vectors)


def _check_rows(path: Path, manifest: Mapping[str, Any], keys: list[str], vectors: Any) -> None:
    """Refuse rows that are not finite, or that are not the ones written under their keys."""
    fix = "write the part again with --niah-shard; do not edit part files"
    if len(keys) and vectors.size and not np.isfinite(vectors).all():
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


def results_from_shards(config: NiahConfig, folder: str | Path) -> NiahResults:
    """Measure a run from the part files in ``folder``, loading no model.

    Raises:
        ShardError: no parts; parts of different runs or shard counts; a part missing,
            repeated or holding other inputs than its share; a config that differs from
            the parts' (each names the file and the fix).
    """
    folder = Path(folder)
    files = sorted(p for p in folder.glob("part-*.npz") if _PART.fullmatch(p.name))
    if not files:
        raise ShardError(
            f"--niah-from-shards: no part files (part-K-of-N.npz) in {folder}",
            "gather every shard job's --niah-shard-dir into this folder first",
        )
    parts = [read_part(path) for path in files]
    first = parts[0]
    for part in parts[1:]:
        if part.shard.count != first.shard.count:
            raise ShardError(
                f"{part.path.name} is part of {part.shard.count} jobs but {first.path.name} of "
                f"{first.shard.count}",
                "use the parts of one sharded run only",
            )
        if part.layout_digest != first.layout_digest and not same_served_run(first, part):
            raise ShardError(
                f"{part.path} comes from another run than {first.path.name} "
                f"({_what_differs(first.manifest, part.manifest)})",
                "use the parts of one run: same config, model and pytest-niah version",
            )
    seen: dict[int, Part] = {}
    for part in parts:
        if part.shard.index in seen:
            raise ShardError(
                f"shard {part.shard} appears twice: {seen[part.shard.index].path.name} and "
                f"{part.path.name}",
                "keep one part per shard",
            )
        seen[part.shard.index] = part
    missing = [k for k in range(1, first.shard.count + 1) if k not in seen]
    if missing:
        names = ", ".join(Shard(k, first.shard.count).file_name for k in missing)
        raise ShardError(
            f"--niah-from-shards: {folder} lacks {len(missing)} of {first.shard.count} parts "
            f"({names})",
            "wait for every shard job and gather all their parts",
        )
    _check_config(config, first)
    layout = Layout.from_dict(first.manifest["layout"])
    expected = shares(layout.plan.tokens, first.shard.count)
    table = VectorTable()
    widths: dict[int, Path] = {}
    for index in range(1, first.shard.count + 1):
        part = seen[index]
        if sorted(part.keys) != sorted(expected[index - 1]):
            raise ShardError(
                f"{part.path} holds other inputs than shard {part.shard}'s share",
                "write it again with --niah-shard from the same config",
            )
        if part.keys:
            widths.setdefault(part.vectors.shape[1], part.path)
            table.add(part.keys, part.vectors)
    if len(widths) > 1:
        listed = ", ".join(f"{width} in {path.name}" for width, path in widths.items())
        raise ShardError(
            f"--niah-from-shards: the parts' vectors differ in width ({listed})",
            "write every part again with --niah-shard from the same model",
        )
    needle_set = load_needle_set(config.needles)
    if needle_set.fingerprint() != layout.needle_set.get("fingerprint"):
        raise ShardError(
            f"the needle set {config.needles!r} differs from the one the parts were built from",
            "run the gate job on the same checkout as the shard jobs",
        )
    groups = needle_set.select(config.groups or None).groups
    return measure(config, groups, layout, table)


def _check_config(config: NiahConfig, part: Part) -> None:
    theirs = part.manifest["config"]
    ours = config.to_dict()
    differing = sorted(k for k in ours.keys() | theirs.keys() if ours.get(k) != theirs.get(k))
    if differing:
        listed = "; ".join(
            f"{k}: {ours.get(k)!r} here, {theirs.get(k)!r} in the parts" for k in differing
        )
        raise ShardError(
            f"--niah-from-shards: this job's options differ from the shard jobs' ({listed})",
            "give the gate job exactly the shard jobs' --niah-* options",
        )


def _what_differs(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    if a["config"] != b["config"]:
        keys = sorted(k for k in a["config"] if a["config"].get(k) != b["config"].get(k))
        return "config: " + ", ".join(keys)
    la, lb = a["layout"], b["layout"]
    ours, theirs = (ServerFingerprint.from_dict(m.get("server")) for m in (a, b))
    if ours is not None and theirs is not None and not ours.matches(theirs):
        return (
            "the server answered otherwise: its window or its vectors of fixed texts moved "
            "beyond its measured noise, as when another model is behind the same address"
        )
    if la["model"] != lb["model"]:
        return "model identity " + str(lb["model"].get("fingerprint", "?"))[:12]
    return "haystacks or data"
