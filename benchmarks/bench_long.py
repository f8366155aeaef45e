"""Peak memory and time of long haystacks, one length per run, on a model that reads every token.

    python benchmarks/bench_long.py [--model packaged-static] [--lengths 8192,16384,32768]
        [--json out.json]

Each length runs ``run_experiment`` in a fresh interpreter with a fresh cache and the full
default needle set, and reports its peak RSS (``ru_maxrss``), wall time and the engine's time
split. Memory should stay near-flat in length: haystacks are built, embedded and scored
block by block. The script reports; it exits 0 whatever it measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_checks import check_config, check_output

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = "packaged"  # the books shipped with pytest-niah; a folder works too

_CHILD = """\
import json, resource, sys, time
from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import RunReport, run_experiment
config = NiahConfig(**json.loads(sys.argv[1]))
report = RunReport()
started = time.perf_counter()
run_experiment(config, cache_dir=sys.argv[2], report=report)
print(json.dumps({
    "seconds": time.perf_counter() - started,
    "split": report.seconds,
    "tokens": report.embedding.tokens,
    "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def measure(model: str, corpus: str, length: int) -> dict[str, Any]:
    """One length in a fresh interpreter and cache."""
    config = {"model": model, "corpus": str(corpus), "lengths": [length]}
    with tempfile.TemporaryDirectory() as cache:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(config), cache],
            capture_output=True,
            text=True,
            env=os.environ | {"HF_HUB_OFFLINE": "1"},
        )
    if done.returncode != 0:
        return {"length": length, "error": done.stderr.strip().splitlines()[-1:]}
    return {"length": length, **json.loads(done.stdout.strip().splitlines()[-1])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="packaged-static")
    parser.add_argument("--corpus", type=str, default=DEFAULT_CORPUS)
    parser.add_argument("--lengths", default="8192,16384,32768")
    parser.add_argument("--json", type=Path, default=None, help="write every number here")
    args = parser.parse_args(argv)
    config = check_config(parser, model=args.model, corpus=args.corpus, lengths=args.lengths)
    check_output(parser, "--json", args.json)
    rows = []
    for length in config.lengths:
        row = measure(args.model, args.corpus, length)
        rows.append(row)
        if "error" in row:
            print(f"{length:>7,}: failed: {row['error']}", flush=True)
            continue
        split = ", ".join(f"{k} {v:.1f} s" for k, v in row["split"].items() if k != "total")
        print(
            f"{length:>7,}: peak RSS {row['rss_mib']:,.0f} MiB, {row['seconds']:.1f} s "
            f"({split}), {row['tokens']:,} tokens",
            flush=True,
        )
    if args.json is not None:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        machine = {"platform": platform.platform(), "cpus": os.cpu_count()}
        document = {"model": args.model, "machine": machine, "commit": commit, "rows": rows}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
