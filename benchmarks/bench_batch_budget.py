"""How the CPU token budget per batch changes a transformer's encode time, in one run.

    python benchmarks/bench_batch_budget.py [--model packaged-minilm] [--budgets 16384,4096]
        [--lengths 254,126] [--texts 640] [--repeat 2] [--json out.json]

For each text length and token budget, encodes ``--texts`` random token-id rows of that
length (plus the special tokens) straight through the model in batches of
``budget // (length + 2)`` rows, as the engine batches one length on a CPU, and records wall
and CPU seconds; the fastest of ``--repeat`` counts. It prints, per length, each budget's
time relative to the largest budget's: what to weigh before choosing ``--niah-token-budget``
for a CPU. Model load and one warm-up batch are not timed. Run it on a quiet machine: under
other processes' load the order of the budgets changed between two runs here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from bench_checks import check_output


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="packaged-minilm")
    parser.add_argument("--budgets", default="16384,8192,4096,2048")
    parser.add_argument("--lengths", default="254,126")
    parser.add_argument("--texts", type=int, default=640)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        args.budgets = [int(b) for b in args.budgets.split(",")]
        args.lengths = [int(n) for n in args.lengths.split(",")]
    except ValueError:
        parser.error("--budgets and --lengths take comma-separated whole numbers")
    if min(args.budgets + args.lengths) < 1 or args.texts < 1 or args.repeat < 1:
        parser.error("--budgets, --lengths, --texts and --repeat must be at least 1")
    check_output(parser, "--json", args.json)
    return args


def encode_seconds(model: Any, rows: Any, per_batch: int) -> tuple[float, float]:
    """Wall and CPU seconds to run ``rows`` through ``model`` ``per_batch`` at a time."""
    import torch

    cls, sep = model.tokenizer.cls_token_id, model.tokenizer.sep_token_id
    started, cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        for start in range(0, len(rows), per_batch):
            batch = rows[start : start + per_batch]
            ids = torch.cat(
                [torch.full((len(batch), 1), cls), batch, torch.full((len(batch), 1), sep)], 1
            )
            model({"input_ids": ids, "attention_mask": torch.ones_like(ids)})
    return time.perf_counter() - started, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    import torch

    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.embed.loader import load_embedder

    model = load_embedder(NiahConfig(model=args.model, device="cpu")).model  # type: ignore[attr-defined]
    generator = torch.Generator().manual_seed(0)
    rows: list[dict[str, Any]] = []
    for length in args.lengths:
        ids = torch.randint(1000, 20000, (args.texts, length), generator=generator)
        encode_seconds(model, ids[:4], 4)  # warm-up
        for budget in args.budgets:
            per_batch = max(1, budget // (length + 2))
            runs = [encode_seconds(model, ids, per_batch) for _ in range(args.repeat)]
            wall, cpu = min(runs)
            rows.append(
                {
                    "length": length,
                    "budget": budget,
                    "per_batch": per_batch,
                    "seconds": wall,
                    "cpu_seconds": cpu,
                    "all_seconds": [r[0] for r in runs],
                }
            )
    largest = max(args.budgets)
    for row in rows:
        base = next(r for r in rows if r["length"] == row["length"] and r["budget"] == largest)
        row["relative"] = row["seconds"] / base["seconds"]
        print(
            f"{row['length']:>5} tokens, budget {row['budget']:>6,} ({row['per_batch']:>3} per "
            f"batch): {row['seconds']:6.2f} s, CPU {row['cpu_seconds']:6.2f} s, "
            f"{row['relative']:.2f}x the {largest:,} budget's time"
        )
    if args.json is not None:
        report = {
            "model": args.model,
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
            "load_average": os.getloadavg(),
            "texts": args.texts,
            "rows": rows,
        }
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
