"""Run-to-run spread of ``--niah-speed`` on one machine: what a speed gate must allow.

    python benchmarks/bench_speed_spread.py [--runs 5] [--models packaged-minilm,packaged-static]
        [--json benchmarks/results/speed-spread-2cpu.json]

Each run is a fresh ``pytest --niah-speed --niah-no-cache`` of a small grid (one group, the
literal arm, two positions) in a subprocess, so the run embeds (its own tokens/s) and
test_speed times one batch of the run's shape per length. From each run's
``--benchmark-json`` it keeps, per model and length, test_speed's tokens/s (median round),
the fastest round's, tokens per CPU second (median round), tokens per reference workload
(``relative_speed``, in CPU time), the run's own tokens/s and test_speed's over it, and the
load average (1 minute) before and after. Per figure over the runs: min,
max, median, the relative spread ``(max - min) / median`` and the allowance a gate on it needs
so that none of these runs would fail against any other: ``max / min - 1``, in percent
(``--benchmark-compare-fail=median:X%`` compares the median round's time, which is
``tokens / tokens_per_second``). Runs alternate between models, so load changes reach both.
It reports; it exits 0 whatever it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_checks import check_at_least, check_output

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

REPO = Path(__file__).resolve().parents[1]
LENGTHS = {"packaged-minilm": "128,256", "packaged-static": "128,1024"}
GRID = ("--niah-arms=literal", "--niah-groups=dietary-01", "--niah-positions=2")
FIGURES = ("tokens_per_second", "best_tokens_per_second", "cpu_tokens_per_second", "relative_speed")
FIGURES_OF_RUNS = (*FIGURES, "relative_speed_wall", "run_tokens_per_second", "test_over_run")


def one_run(model: str, lengths: str, folder: Path) -> dict[str, Any]:
    """One pytest run of ``model`` with ``--niah-speed``: its speed tests' extra_info."""
    out = folder / "bench.json"
    out.unlink(missing_ok=True)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-q",
        f"--niah-model={model}",
        f"--niah-lengths={lengths}",
        *GRID,
        "--niah-speed",
        "--niah-no-cache",
        f"--benchmark-json={out}",
    ]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0 or not out.is_file():
        tail = (done.stdout + done.stderr)[-2000:]
        raise SystemExit(f"pytest of {model} failed (exit {done.returncode}):\n{tail}")
    data = json.loads(out.read_text(encoding="utf-8"))
    per_length = {}
    for entry in data["benchmarks"]:
        info = entry["extra_info"]
        row = {key: info.get(key) for key in (*FIGURES, "run_tokens_per_second")}
        row["reference_seconds"] = info.get("reference_seconds")
        row["reference_cpu_seconds"] = info.get("reference_cpu_seconds")
        row["rounds"] = info.get("rounds")
        row["tokens"] = info.get("tokens")
        run, test = info.get("run_tokens_per_second"), info.get("tokens_per_second")
        row["test_over_run"] = test / run if run and test else None
        wall_reference = info.get("reference_seconds")
        row["relative_speed_wall"] = test * wall_reference if test and wall_reference else None
        per_length[str(info["length"])] = row
    return {
        "wall_s": round(wall, 1),
        "load_1min_before": load_before,
        "load_1min_after": os.getloadavg()[0],
        "lengths": per_length,
    }


def spread(values: list[float]) -> dict[str, float]:
    """Min, max, median, ``(max - min) / median`` and the allowance ``max / min - 1`` (%)."""
    low, high, middle = min(values), max(values), statistics.median(values)
    return {
        "min": low,
        "max": high,
        "median": middle,
        "relative_spread": (high - low) / middle if middle else math.inf,
        "allowance_percent": math.ceil((high / low - 1) * 100) if low > 0 else math.inf,
    }


def summary(runs: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per length and figure, the spread over ``runs``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for length in runs[0]["lengths"]:
        rows = [run["lengths"][length] for run in runs]
        out[length] = {
            figure: spread([row[figure] for row in rows])
            for figure in FIGURES_OF_RUNS
            if all(row.get(figure) for row in rows)
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models", default=",".join(LENGTHS))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in LENGTHS]
    if unknown:
        parser.error(f"--models takes {', '.join(LENGTHS)}")
    check_at_least(parser, "--runs", args.runs, 2)
    check_output(parser, "--json", args.json)
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in models}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="niah-speed-spread-") as tmp:
        for i in range(args.runs):
            for model in models:
                folder = Path(tmp) / model
                folder.mkdir(exist_ok=True)
                run = one_run(model, LENGTHS[model], folder)
                runs[model].append(run)
                cells = ", ".join(
                    f"{n}: {row['tokens_per_second']:,.0f} tok/s, {row['relative_speed']:,.1f} rel"
                    for n, row in run["lengths"].items()
                )
                load = run["load_1min_before"]
                print(f"run {i + 1}/{args.runs} {model} (load {load:.1f}): {cells}", flush=True)
                # Written after every run: a run cut short keeps what it measured.
                result = _result(runs, args.runs, time.perf_counter() - started)
                if args.json is not None:
                    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for model in models:
        for length, figures in result["models"][model]["spread"].items():
            for figure, s in figures.items():
                print(
                    f"{model} {length} {figure}: min {s['min']:,.3g} max {s['max']:,.3g} "
                    f"spread {s['relative_spread']:.0%} allowance {s['allowance_percent']}%"
                )
    return 0


def _result(runs: dict[str, list[dict[str, Any]]], planned: int, wall: float) -> dict[str, Any]:
    done = {m: r for m, r in runs.items() if r}
    return {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "commit": _commit(),
        "grid": list(GRID),
        "runs_per_model": planned,
        "runs_done": {m: len(r) for m, r in done.items()},
        "wall_s": round(wall, 1),
        "models": {
            m: {
                "lengths": LENGTHS[m],
                "runs": r,
                "spread": summary(r) if len(r) >= 2 else {},
            }
            for m, r in done.items()
        },
    }


def _commit() -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None


if __name__ == "__main__":
    raise SystemExit(main())
