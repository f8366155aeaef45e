"""How long a static (model2vec) model takes to load: read from its folder, and again in the
same process (built from what the first load read), in one run.

    python benchmarks/bench_static_load.py [--model packaged-static] [--repeat 3] [--json out.json]

Each round forgets what was read, loads the folder the way the engine does (model2vec reads
it), then loads it again (the per-process memo builds a new module from what was read); the
fastest of ``--repeat`` rounds counts. It prints both times and their ratio. Imports are
done before the first round and not timed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from bench_checks import check_output


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--model", default="packaged-static", help="a static model or folder")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat={args.repeat}: give at least 1")
    check_output(parser, "--json", args.json)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    from pytest_niah.embed.models import is_model2vec_folder, resolve_model_name
    from pytest_niah.embed.st_loading import static_embedding_class
    from pytest_niah.embed.static_memo import StaticModelMemo

    folder = Path(resolve_model_name(args.model))
    if not (folder.is_dir() and is_model2vec_folder(folder)):
        print(f"--model={args.model}: not a model2vec folder ({folder})", file=sys.stderr)
        return 2
    module_class = static_embedding_class()
    read, again = [], []
    for _ in range(args.repeat):
        memo = StaticModelMemo()
        started = time.perf_counter()
        memo.load(str(folder), folder, module_class)
        read.append(time.perf_counter() - started)
        started = time.perf_counter()
        memo.load(str(folder), folder, module_class)
        again.append(time.perf_counter() - started)
    row = {"read": min(read), "again": min(again), "ratio": min(again) / min(read)}
    print(f"{args.model}: read {row['read']:.2f} s, again in the same process {row['again']:.2f} s")
    print(f"ratio again/read: {row['ratio']:.3f} (fastest of {args.repeat})")
    if args.json is not None:
        document = {
            "model": args.model,
            "repeat": args.repeat,
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            **row,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
