"""The engine against bare ``encode`` on a GPU, per attention implementation, in one command.

    python benchmarks/bench_gpu.py [--small] [--device auto|cuda|cpu] [--lengths 128,8192]
        [--positions N] [--groups dietary,vehicle] [--attention auto|sdpa,flash_attention_2]
        [--models standin,packaged-minilm] [--standin-dir DIR] [--json out.json]

It builds the 8K stand-in encoder with ``benchmarks/make_long_standin.py`` (a random
BERT-large-shaped model, 342M parameters, 8,192 positions; ``--small``: a 5M-parameter one
for a CPU) in a temporary folder (``--standin-dir`` builds there once and reuses it), then,
for the stand-in and the packaged MiniLM, and for each attention implementation:

bare s: ``SentenceTransformer.encode`` of exactly the texts the engine embeds (questions,
    haystacks, chunks, needles), batched as the engine batches them (by kind and token count,
    as many per batch as its token budget allows), in the same model, dtype and device. The
    model's load and one warm-up batch are not timed.
engine s: a cold ``run_experiment`` on fresh caches (haystack building, planning, encoding,
    measuring, the embedding cache's writes and the model files' hashing), model loaded and
    warmed up beforehand, as ``bench_grid.py`` (b) times it.
ratio: engine s / bare s. Target: <= 1.10 on a GPU (<= 1.25 on a CPU, bench_grid's target).
bare GiB, engine GiB: peak device memory (``torch.cuda.max_memory_allocated``, model
    weights included) of each; ``n/a`` on a CPU, where the process's peak RSS is printed.
tok/s: tokens the engine embedded per second of engine time.
inputs: how the texts reached the model: bare ``pad`` or ``unpad`` (sentence-transformers'
    unpadded flash-attention path), engine ``ids`` (token ids, no tokenizing) or ``text``.

Attention implementations (``--attention auto``): the model's default (what the engine uses
when not told; sdpa with torch >= 2), ``flash_attention_2`` on a GPU where flash-attn is
installed (sentence-transformers >= 6 then unpads on its own), and ``flash_attention_2:padded``
(that path turned off) where this sentence-transformers has it; on a CPU ``eager`` as well.
Name others explicitly (``--attention eager,sdpa``). Dtype: bfloat16 on a GPU; float32 on a CPU,
where bfloat16 is slow and not what a GPU run measures (``--dtype`` overrides both).

Targets when a GPU is lent: engine <= 1.10x bare in bfloat16, and no out-of-memory at 8,192
tokens with the defaults (default attention, token budget and batch size). An out-of-memory
is a row of the table (verdict OOM), never a crash. The script prints the device, the machine
and one table, writes every number with machine and commit to ``--json``, and exits 0 whatever
it measured (2 on a usage or setup error: a bad option, a missing stand-in builder).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_checks import check_folder, check_input, check_output
from bench_grid import DEFAULT_CORPUS, QUICK, REPO
from bench_grid_verdicts import TARGETS
from gpu_measure import engine_config, measure_model
from gpu_rows import Row, table, verdicts
from gpu_setup import (
    DEFAULT,
    MINILM,
    STANDIN,
    TOOL,
    TOOL_PLACE,
    SetupError,
    attention_specs,
    commit,
    find_tool,
    machine,
    resolve_device,
    standin_folder,
)

if importlib.util.find_spec("pytest_niah") is None:
    # A bare GPU machine may have the dependencies but not this checkout installed.
    sys.path.insert(0, str(REPO))

# Where the tests and other scripts find them (they lived here before the split).
__all__ = ["Row", "SetupError", "find_tool", "main", "table", "verdicts"]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="build the 5M-parameter stand-in")
    parser.add_argument("--device", default="auto", help="auto, cuda, cuda:N or cpu")
    parser.add_argument("--dtype", default="auto", help="auto: bfloat16 on a GPU, float32 on a CPU")
    parser.add_argument("--attention", default="auto", help="auto, or a list: eager,sdpa,...")
    parser.add_argument("--models", default=f"{STANDIN},{MINILM}", help="default: %(default)s")
    parser.add_argument("--corpus", type=str, default=DEFAULT_CORPUS)
    parser.add_argument("--lengths", default=None, help="default: the engine's (128 to 8192)")
    parser.add_argument("--positions", type=int, default=None)
    parser.add_argument("--groups", default=None)
    parser.add_argument("--quick", action="store_true", help="a small grid: " + str(QUICK))
    parser.add_argument("--repeat", type=int, default=1, help="the fastest counts (default: 1)")
    parser.add_argument("--standin-dir", type=Path, default=None, help="build here once, reuse")
    parser.add_argument("--standin-tool", type=Path, default=None, help=f"path of {TOOL}")
    parser.add_argument(
        "--standin-tokenizer", type=Path, default=None, help="tokenizer folder for the build"
    )
    parser.add_argument("--json", type=Path, default=None, help="write every number here")
    args = parser.parse_args(argv)
    if args.quick:
        args.lengths = args.lengths or QUICK["lengths"]
        args.positions = args.positions or QUICK["positions"]
        args.groups = args.groups or QUICK["groups"]
    unknown = set(filter(None, args.models.split(","))) - {STANDIN, MINILM}
    if unknown or args.repeat < 1:
        parser.error(f"--models takes {STANDIN},{MINILM}; --repeat at least 1")
    check_output(parser, "--json", args.json)
    args.standin_dir = check_folder(parser, "--standin-dir", args.standin_dir)
    if args.standin_tool is not None:
        if not args.standin_tool.exists():
            parser.error(
                f"--standin-tool {args.standin_tool}: does not exist; pass --standin-tool=PATH "
                f"to a builder (the project ships {TOOL_PLACE}), or --standin-dir=DIR holding "
                "a stand-in built before"
            )
        check_input(parser, "--standin-tool", args.standin_tool, "script")
    return args


def print_setup(
    args: argparse.Namespace, host: dict[str, Any], grid: dict[str, Any], specs: Sequence[str]
) -> None:
    """The device, machine, versions and grid the rows were measured on."""
    gpu = args.device.startswith("cuda")
    print(
        f"device: {args.device} ({host['device_name']}"
        + (f", {host['device_memory_gib']:.1f} GiB" if gpu else "")
        + f"); machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}; "
        + ", ".join(f"{k} {v}" for k, v in host["versions"].items())
        + f"; commit {commit()}",
        flush=True,
    )
    print(
        f"grid: lengths {','.join(map(str, grid['lengths']))}, positions "
        f"{grid['positions']}, groups {','.join(grid['groups']) or 'all'}; dtype "
        f"{args.dtype}; attention {', '.join(specs)}; repeat {args.repeat}",
        flush=True,
    )


def run_notes(args: argparse.Namespace, rows: Sequence[Row], gpu: bool) -> list[str]:
    """Each model's size and inputs, and on a CPU the process's memory and the dtype."""
    notes = []
    for name in dict.fromkeys(row.model for row in rows):
        bare = next((r.bare for r in rows if r.model == name and r.bare.get("parameters")), None)
        if bare is not None:
            notes.append(
                f"{name}: {bare['parameters'] / 1e6:.0f}M parameters, window {bare['window']}, "
                f"{bare['texts']:,} texts, {bare['tokens']:,} tokens, {bare['batches']:,} batches"
            )
    if not gpu:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        notes.append(f"CPU: no device memory per row; peak RSS of this process {rss:,.0f} MiB")
        if args.dtype == "float32":
            notes.append("CPU: float32 (bfloat16 on a CPU is slow, not what a GPU run measures)")
    return notes


def run(args: argparse.Namespace) -> dict[str, Any]:
    from pytest_niah.errors import NiahError

    try:  # a bad grid is a usage error, found before anything is built or loaded
        engine_config(args, MINILM, DEFAULT)
    except NiahError as exc:
        raise SetupError(str(exc)) from exc
    with tempfile.TemporaryDirectory() as scratch:
        models = [m for m in args.models.split(",") if m]
        standin, built = (None, None)
        if STANDIN in models:  # first: a missing builder stops the run before anything loads
            standin, built = standin_folder(args, Path(scratch))
        args.device = resolve_device(args.device)
        if args.dtype == "auto":
            args.dtype = "bfloat16" if args.device.startswith("cuda") else "float32"
        specs, notes = attention_specs(args.attention, args.device)
        host = machine(args.device)
        grid = engine_config(args, MINILM, DEFAULT).to_dict()
        for per_row in ("model", "model_kwargs"):  # each row says its own
            grid.pop(per_row, None)
        gpu = args.device.startswith("cuda")
        target = TARGETS["cold_gpu"] if gpu else TARGETS["cold_cpu"]
        print_setup(args, host, grid, specs)
        rows: list[Row] = []
        for name in models:
            model = str(standin) if name == STANDIN else name
            label = name
            if name == STANDIN:
                label = "stand-in small" if args.small else "stand-in"
            rows += measure_model(args, label, model, specs)
    if built is not None:
        notes.insert(0, f"stand-in built in {built:.0f} s")
    notes += run_notes(args, rows, gpu)
    print("\n".join(table(rows, target)))
    lines = verdicts(rows, target, tuple(grid["lengths"]))
    print("\n".join(lines))
    print("\n".join(f"note: {n}" for n in dict.fromkeys(notes)), flush=True)
    return {
        "machine": host,
        "commit": commit(),
        "grid": grid,
        "standin": {"small": args.small, "dir": args.standin_dir, "build_seconds": built},
        "target": target,
        "rows": [row.to_dict(target) for row in rows],
        "verdicts": lines,
        "notes": list(dict.fromkeys(notes)),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write the JSON; 2 on a usage or setup error, else 0."""
    args = parse(argv)
    try:
        report = run(args)
    except SetupError as exc:
        print(f"bench_gpu.py: {exc}", file=sys.stderr)
        return 2
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
