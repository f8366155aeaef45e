"""Split a run's embedding across CI jobs, and measure from the parts in one gate job.

A *shard job* (``--niah-shard=K/N --niah-shard-dir=DIR``) plans the whole run, forms the
run's batches as an unsharded run does (:mod:`pytest_niah.embed.batching`), embeds the whole
batches dealt to it and writes one part file; the deal is balanced by tokens and the same in
every job, so the N jobs together embed every input exactly once, each in its own batch. The
*gate job* (``--niah-from-shards=DIR``) checks that the parts come from one config and one model
identity and cover every input exactly once, then measures from them without loading any
model: the results are byte-identical to an unsharded run's.

The part file, written and read back with its checks, is
:mod:`pytest_niah.experiment.shard_parts`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config.niah import TRANSPORT, NiahConfig
from pytest_niah.embed.batching import Batch, BatchShares, batch_texts, form_batches
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.server_fingerprint import ServerFingerprint, is_served
from pytest_niah.embed.vector_table import VectorTable
from pytest_niah.errors import ConfigError, ShardError
from pytest_niah.experiment import (
    CachePolicy,
    Inputs,
    Layout,
    Planning,
    Run,
    RunReport,
    block_count,
    block_inputs,
    budget,
    layout_of,
    measure,
)
from pytest_niah.experiment.shard_parts import (
    PART_SCHEMA,
    Part,
    part_files,
    read_part,
    same_served_run,
    write_part,
)
from pytest_niah.experiment.shard_parts import Shard as Shard  # re-exported: the job option
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.inputs.needles import load_needle_set
from pytest_niah.progress import Progress
from pytest_niah.results.niah_results import NiahResults


def batch_positions(plan_keys: Iterable[str], batches: Sequence[Batch]) -> list[list[int]]:
    """Each batch as the places of its inputs among the plan's keys in sorted order.

    Sorted: a part's manifest is written with sorted keys, so the plan's own order does
    not survive it.
    """
    position = {key: i for i, key in enumerate(sorted(plan_keys))}
    return [[position[item.key] for item in batch] for batch in batches]


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
    mine = _dealt_batches(run, planning, shard)
    vectors = run.embed(mine, formed=True)
    keys = [item.key for batch in mine for item in batch]
    layout = layout_of(planning, run.inputs, run.embedder)
    rows = vectors.rows(keys)
    matrix = np.asarray(vectors.matrix, dtype=np.float32)[rows] if keys else np.zeros((0, 0))
    manifest = {
        "part_schema": PART_SCHEMA,
        "shard": [shard.index, shard.count],
        "config": config.to_dict(),
        "layout": layout.to_dict(),
        "batches": batch_positions(planning.plan.tokens, mine),
    }
    if is_served(run.embedder) and run.embedder.fingerprint is not None:
        manifest["server"] = asdict(run.embedder.fingerprint)
    path = Path(folder) / shard.file_name
    write_part(path, manifest, keys, matrix)
    return path


def _dealt_batches(run: Run, planning: Planning, shard: Shard) -> list[Batch]:
    """The whole run's batches, formed as an unsharded run forms them, that this job embeds.

    Every job forms them all and deals them out alike, so each batch is embedded whole, by
    exactly one job.
    """
    config = run.config
    size = functools.partial(batch_texts, budget(config, run.embedder), config.batch_size)
    run.progress.start("building haystacks", block_count(config, run.inputs), "blocks")

    def in_plan_order() -> Iterator[ModelInput]:
        yield from planning.queries
        for block in planning.blocks:
            yield from block_inputs(planning, block)
            run.progress.advance(1)

    hands = BatchShares(shard.count)
    mine = [b for b in form_batches(in_plan_order(), size) if hands.owner(b) == shard.index - 1]
    run.progress.finish(f"{len(planning.plan.tokens):,} model inputs planned")
    return mine


def results_from_shards(config: NiahConfig, folder: str | Path) -> NiahResults:
    """Measure a run from the part files in ``folder``, loading no model.

    Raises:
        ShardError: no parts; parts of different runs or shard counts; a part missing,
            repeated or holding other inputs than its share; a config that differs from
            the parts' (each names the file and the fix).
    """
    folder = Path(folder)
    parts = _one_whole_run(folder)
    first = parts[0]
    _check_config(config, first)
    layout = Layout.from_dict(first.manifest["layout"])
    table = _vector_table(parts, sorted(layout.plan.tokens))
    needle_set = load_needle_set(config.needles)
    if needle_set.fingerprint() != layout.needle_set.get("fingerprint"):
        raise ShardError(
            f"the needle set {config.needles!r} differs from the one the parts were built from",
            "run the gate job on the same checkout as the shard jobs",
        )
    groups = needle_set.select(config.groups or None).groups
    return measure(config, groups, layout, table)


def _one_whole_run(folder: Path) -> list[Part]:
    """The parts in ``folder`` in shard order, checked to be every part of one run, once."""
    files = part_files(folder)
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
    return [seen[index] for index in range(1, first.shard.count + 1)]


def _vector_table(parts: Sequence[Part], plan_keys: Sequence[str]) -> VectorTable:
    """Every part's vectors, each part checked to hold its batches, all of one width.

    Every input of the plan (``plan_keys``, sorted) is in exactly one part's batches.
    """
    table = VectorTable()
    widths: dict[int, Path] = {}
    owner: dict[int, Path] = {}
    for part in parts:
        positions = [p for batch in part.batches for p in batch]
        share = [plan_keys[p] for p in positions if 0 <= p < len(plan_keys)]
        if len(share) != len(positions) or sorted(part.keys) != sorted(share):
            raise ShardError(
                f"{part.path} holds other inputs than shard {part.shard}'s share",
                "write it again with --niah-shard from the same config",
            )
        for p in positions:
            if p in owner:
                raise ShardError(
                    f"{part.path.name} and {owner[p].name} both hold input {plan_keys[p]}",
                    "write every part again with --niah-shard from the same config",
                )
            owner[p] = part.path
        if part.keys:
            widths.setdefault(part.vectors.shape[1], part.path)
            table.add(part.keys, part.vectors)
    if len(owner) != len(plan_keys):
        raise ShardError(
            f"--niah-from-shards: the parts hold {len(owner):,} of the run's "
            f"{len(plan_keys):,} inputs",
            "write every part again with --niah-shard from the same config",
        )
    if len(widths) > 1:
        listed = ", ".join(f"{width} in {path.name}" for width, path in widths.items())
        raise ShardError(
            f"--niah-from-shards: the parts' vectors differ in width ({listed})",
            "write every part again with --niah-shard from the same model",
        )
    return table


def _check_config(config: NiahConfig, part: Part) -> None:
    theirs = part.manifest["config"]
    ours = config.to_dict()
    keys = (ours.keys() | theirs.keys()) - TRANSPORT  # a gate job's timeout is its own
    differing = sorted(k for k in keys if ours.get(k) != theirs.get(k))
    if differing:
        listed = "; ".join(
            f"{k}: {ours.get(k)!r} here, {theirs.get(k)!r} in the parts" for k in differing
        )
        raise ShardError(
            f"--niah-from-shards: this job's options differ from the shard jobs' ({listed})",
            "give the gate job exactly the shard jobs' --niah-* options",
        )


def _what_differs(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    either = (a["config"].keys() | b["config"].keys()) - TRANSPORT  # a timeout is per job
    keys = sorted(k for k in either if a["config"].get(k) != b["config"].get(k))
    if keys:
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
