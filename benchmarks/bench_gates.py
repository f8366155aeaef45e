"""Calibrate the comparison gate: how often it fails no-ops, and how often planted regressions.

    python benchmarks/bench_gates.py [--small] [--seeds 42,43,44] [--lengths 128,256,512,1024]
        [--positions 10] [--groups ""] [--orders default,inverted] [--variants copy,batch-1]
        [--allowance auc:0.02,ratio:5%] [--cache-dir DIR] [--json out.json] [--budget-s S]

It builds a catalogue of variants of the packaged all-MiniLM-L6-v2 (256-token window; see
``gate_variants.py``): planted regressions (window cut to 128 and 64 tokens, 4 and 2 of 6
layers kept, Gaussian weight noise), no-ops that change the numbers (weights rounded through
float16 and bfloat16, batch size 1 and 64 instead of 16, one torch thread instead of two)
and the zero control (an exact copy, counted apart). For each seed (a different haystack
draw) it runs the unmodified model, then every variant on the same grid, and gates each
against that baseline as ``--niah-compare-fail=ALLOWANCE`` with ``--niah-inconclusive=auto``
does (:func:`pytest_niah.compare`, then the verdicts and their ``auto`` outcome). One gate
per variant, seed and length; a failed gate on a no-op is a false alarm
(``gates_report.py`` has the tables and the Clopper-Pearson intervals).

The default grid is the plugin's default shape (every needle group, 10 positions, both word
orders) over the lengths MiniLM reads and just past them. Each variant runs with a cache
folder of its own under ``--cache-dir`` (models, embeddings, results), so a rerun with the
same folder resumes: finished runs are read back, not embedded again. Without
``--cache-dir`` a temporary folder is used and removed. ``--budget-s`` starts no run past
that many seconds; the JSON lists the runs left out. Exit 0 whatever was measured, 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_checks import check_config, check_folder, check_groups, check_output
from gate_variants import SMALL_VARIANTS, THREADS, Variant, packaged_minilm_folder, select
from gates_report import FULL_GRID, markdown

DEFAULTS = FULL_GRID  # see the docs for its wall time
SMALL = {
    "seeds": "42",
    "lengths": "128,256",
    "positions": 2,
    "groups": "dietary",
    "orders": "default",
}


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def integers(text: str, what: str) -> tuple[int, ...]:
    try:
        values = tuple(int(item) for item in text.split(",") if item.strip())
    except ValueError:
        message = f"bench_gates: --{what} takes a comma list of integers, not {text!r}"
        raise SystemExit(message) from None
    if not values:
        raise SystemExit(f"bench_gates: --{what} is empty")
    return values


def check_allowance(parser: argparse.ArgumentParser, allowance: str) -> None:
    from pytest_niah.config.gate_expressions import parse_allowances
    from pytest_niah.errors import NiahError

    try:
        parse_allowances(allowance)
    except NiahError as exc:
        parser.error(f"--allowance: {exc}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="1 seed, 2 lengths, 3 variants")
    parser.add_argument("--seeds", help=f"comma list of haystack seeds ({DEFAULTS['seeds']})")
    parser.add_argument("--lengths", help=f"comma list ({DEFAULTS['lengths']})")
    parser.add_argument("--positions", type=int, help=f"needle positions ({DEFAULTS['positions']})")
    parser.add_argument("--groups", help="needle groups or categories (default: all)")
    parser.add_argument("--orders", help=f"needle word orders ({DEFAULTS['orders']})")
    parser.add_argument("--variants", help="comma list of variants (default: all; --small: 3)")
    parser.add_argument("--allowance", default="auc:0.02,ratio:5%", help="the gate's value")
    parser.add_argument("--cache-dir", type=Path, help="keep models and results here: resumable")
    parser.add_argument("--json", type=Path, help="write every gate here")
    parser.add_argument("--budget-s", type=float, help="start no run after this many seconds")
    args = parser.parse_args(argv)
    preset = SMALL if args.small else DEFAULTS
    for name, value in preset.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.variants is None and args.small:
        args.variants = ",".join(SMALL_VARIANTS)
    args.seed_list = integers(args.seeds, "seeds")
    args.length_list = integers(args.lengths, "lengths")
    try:
        args.variant_list = select(args.variants)
    except ValueError as error:
        raise SystemExit(f"bench_gates: --variants: {error}") from None
    if args.budget_s is not None and not args.budget_s > 0:
        parser.error(f"--budget-s: {args.budget_s} is not a positive number of seconds")
    args.cache_dir = check_folder(parser, "--cache-dir", args.cache_dir)
    check_groups(parser, args.groups)
    check_config(
        parser,
        model="packaged-minilm",
        lengths=args.length_list,
        positions=args.positions,
        seeds=args.seed_list,
        orders=args.orders,
    )
    check_allowance(parser, args.allowance)
    check_output(parser, "--json", args.json)
    return args


def config(args: argparse.Namespace, seed: int, model: str, **changes: Any) -> Any:
    from pytest_niah.config.niah import NiahConfig

    groups = tuple(g.strip() for g in args.groups.split(",") if g.strip())
    orders = tuple(o.strip() for o in args.orders.split(",") if o.strip())
    return NiahConfig(
        model=model,
        lengths=args.length_list,
        positions=args.positions,
        groups=groups,
        orders=orders,
        seed=seed,
        device="cpu",
        **changes,
    )


def build_models(variants: Sequence[Variant], source: Path, folder: Path) -> dict[str, Path]:
    """Each variant's model folder, written once (kept from an earlier run of the cache)."""
    models: dict[str, Path] = {}
    for variant in variants:
        if variant.build is None:
            models[variant.name] = source
            continue
        target = folder / variant.name
        if not target.is_dir():
            started, partial = time.perf_counter(), folder / f".{variant.name}.partial"
            shutil.rmtree(partial, ignore_errors=True)  # an interrupted build
            variant.build(source, partial)
            partial.rename(target)  # whole or absent: a resumed run never reads half a model
            log(f"built {variant.name} in {time.perf_counter() - started:.1f} s")
        models[variant.name] = target
    return models


def score_changes(results: Any, baseline: Any) -> dict[int, float]:
    """Per length, the largest change of any case's similarity scores against the baseline.

    0.0 means the variant computed the very same numbers: no test of the gate's noise.
    """
    before = {case.id: case for case in baseline.cases}
    moved: dict[int, float] = {}
    for case in results.cases:
        old = before.get(case.id)
        if old is None:
            continue
        for name in ("cos_qh", "cos_qn", "control_score"):
            now, then = getattr(case, name, None), getattr(old, name, None)
            if now is None or then is None or now != now or then != then:  # absent or NaN
                continue
            change = abs(float(now) - float(then))
            moved[case.length] = max(moved.get(case.length, 0.0), change)
    return moved


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Every gate: variant, kind, seed, length and each metric's (state, auto outcome).

    Each variant (and the baseline) keeps its own cache folder: a setting the results' key
    does not hold (threads) never reads another's results, and a rerun reads its own.
    """
    import torch

    from pytest_niah.config.gate_expressions import parse_allowances
    from pytest_niah.experiment import RunReport, load_inputs, run_experiment

    began = time.perf_counter()
    allowances = parse_allowances(args.allowance)
    source = packaged_minilm_folder()
    models = build_models(args.variant_list, source, work / "models")
    inputs = load_inputs(config(args, args.seed_list[0], str(source)), cache_dir=work / "inputs")
    seconds: dict[str, dict[str, float]] = {}

    def run(name: str, seed: int, model: Path, threads: int, **settings: Any) -> Any:
        torch.set_num_threads(threads)
        report, started = RunReport(), time.perf_counter()
        results = run_experiment(
            config(args, seed, str(model), **settings), inputs=inputs,
            cache_dir=work / "runs" / name, progress=False, report=report,
        )  # fmt: skip
        took = time.perf_counter() - started
        # The first run into this cache measured the time; a resumed one only read results.
        # "total" includes loading the model, which the report's own total leaves out.
        timing = work / "runs" / name / f"seconds-{seed}.json"
        if not timing.exists():
            timing.parent.mkdir(parents=True, exist_ok=True)
            timing.write_text(json.dumps({**report.seconds, "total": took}), encoding="utf-8")
        seconds[f"{name}/{seed}"] = json.loads(timing.read_text(encoding="utf-8"))
        log(f"seed {seed}: {name} in {took:.1f} s")
        return results

    baselines = {seed: run("baseline", seed, source, THREADS) for seed in args.seed_list}
    gates: list[dict[str, Any]] = []
    not_run: list[str] = []
    for variant in args.variant_list:
        for seed in args.seed_list:
            if args.budget_s is not None and time.perf_counter() - began > args.budget_s:
                log(f"{variant.name}, seed {seed}: not run, --budget-s {args.budget_s:.0f} spent")
                not_run.append(f"{variant.name}/{seed}")
                continue
            model = models[variant.name]
            results = run(variant.name, seed, model, variant.threads, **variant.settings)
            gates.extend(variant_gates(variant, seed, results, baselines[seed], allowances))
    torch.set_num_threads(THREADS)
    return {"gates": gates, "seconds": seconds, "not_run": not_run}


def variant_gates(
    variant: Variant, seed: int, results: Any, baseline: Any, allowances: Any
) -> list[dict[str, Any]]:
    """One gate per length of a variant's run against the baseline of its seed."""
    from pytest_niah.api import compare

    by_length: dict[int, dict[str, Any]] = {}
    moved = score_changes(results, baseline)
    for (_, _, length), verdict in compare(results, baseline).slice_verdicts(allowances):
        gate = by_length.setdefault(
            length,
            {"variant": variant.name, "kind": variant.kind, "seed": seed,
             "length": length, "max_change": moved.get(length, 0.0), "verdicts": {}},
        )  # fmt: skip
        gate["verdicts"][verdict.metric] = [verdict.state, verdict.outcome("auto")]
    return [by_length[n] for n in sorted(by_length)]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as stop:
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
            return 2
        return 2 if stop.code else 0
    began = time.perf_counter()
    with ExitStack() as stack:
        work = args.cache_dir
        if work is None:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="niah-gates-")))
        measured = measure(args, work)
    wall = time.perf_counter() - began
    payload = {
        "settings": {key: getattr(args, key) for key in
                     ("seeds", "lengths", "positions", "groups", "orders", "allowance", "small")},
        "machine": {"machine": platform.machine(), "cpus": os.cpu_count(),
                    "platform": platform.platform(), "python": platform.python_version()},
        "wall_s": round(wall, 1),  # this invocation; a resumed one reads most runs back
        "runs_s": round(sum(parts["total"] for parts in measured["seconds"].values()), 1),
        "gates": measured["gates"],
        "not_run": measured["not_run"],
        "seconds": {run: {k: round(v, 2) for k, v in parts.items()}
                    for run, parts in measured["seconds"].items()},
    }  # fmt: skip
    print("\n".join(markdown(payload)))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
