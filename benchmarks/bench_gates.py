"""Calibrate the comparison gate: how often it flags known regressions, and never no-ops.

    python benchmarks/bench_gates.py [--small] [--seeds 42,43,44,45,46] [--json out.json]
        [--lengths 128,256,512] [--positions 2] [--groups dietary,medical,location]
        [--variants window-64,copy] [--allowance auc:0.02] [--budget-s 1800]

It builds a catalogue of variants of the packaged all-MiniLM-L6-v2 (256-token window; see
``gate_variants.py``): regressions (window cut to 128 and 64 tokens, 4 and 2 of 6 layers
kept, Gaussian noise of 0.02, 0.1 and 0.3 times each weight's std) and no-ops (an exact
copy, a re-save through sentence-transformers, float16 where it runs on this machine). For
each seed (a different haystack draw) it runs the unmodified model once, then every variant
on the same grid, and compares each with that baseline exactly as ``--niah-compare`` with
``--niah-compare-fail=ALLOWANCE`` does (:func:`pytest_niah.compare`, then the comparison's
gate verdicts). One gate per variant, length and seed.

It prints one table (variant, kind, length, gates, % regressed / inconclusive / within
allowance / improved), then the false-alarm rate on no-ops (a no-op gate that regressed;
target: none) and the detection rate of each regression (its gates that regressed), and
writes them with the machine and every verdict to ``--json``. The exact copy has the same
file hashes as the model, so the engine reuses the baseline's embeddings: it checks the
comparison path end to end, while the re-save and float16 check numerical noise.

``--budget-s`` starts no run past that many seconds: a truncated variant's rows count fewer
gates, and the summary lists the runs left out. Embeddings, results and model variants live
in one temporary folder per bench run, removed at the end; the user's caches are never read
or written. Exit 0 whatever was measured, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_checks import check_config, check_groups, check_output
from gate_variants import NO_OP, SMALL_VARIANTS, Variant, packaged_minilm_folder, select

STATES = ("regressed", "inconclusive", "within allowance", "improved")
# Sized for ~30 minutes on 2 busy cores; more groups narrow the intervals (see README).
DEFAULTS = {
    "seeds": "42,43,44,45,46",
    "lengths": "128,256,512",
    "positions": 2,
    "groups": "dietary,medical,location",
}
SMALL = {
    "seeds": "42,43",
    "lengths": "128,256",
    "positions": 3,
    "groups": "dietary,medical,location",
}
COLUMNS = (
    "variant",
    "kind",
    "length",
    "gates",
    "% regressed",
    "% inconcl.",
    "% within",
    "% improved",
)


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
    parser.add_argument("--small", action="store_true", help="2 seeds, 2 lengths, 3 variants")
    parser.add_argument("--seeds", help=f"comma list of haystack seeds ({DEFAULTS['seeds']})")
    parser.add_argument("--lengths", help=f"comma list ({DEFAULTS['lengths']})")
    parser.add_argument("--positions", type=int, help=f"needle positions ({DEFAULTS['positions']})")
    parser.add_argument("--groups", help="needle groups or categories (default: all)")
    parser.add_argument("--variants", help="comma list of variants (default: all; --small: 3)")
    parser.add_argument("--allowance", default="auc:0.02", help="--niah-compare-fail's value")
    parser.add_argument("--orders", default="default", help="needle word orders (default)")
    parser.add_argument("--json", type=Path, help="write every number here")
    parser.add_argument(
        "--budget-s",
        type=float,
        help="start no run after this many seconds (rows keep fewer gates)",
    )
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
    """Each variant's model folder, written once (the source folder where it has no build)."""
    models: dict[str, Path] = {}
    for variant in variants:
        if variant.build is None:
            models[variant.name] = source
            continue
        started = time.perf_counter()
        target = folder / variant.name
        variant.build(source, target)
        models[variant.name] = target
        log(f"built {variant.name} in {time.perf_counter() - started:.1f} s")
    return models


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Every gate verdict: variant -> length -> list of states (one per seed).

    The inputs and each variant's model load once and serve every seed: only the haystacks
    and their embeddings change from seed to seed.
    """
    from pytest_niah.api import compare
    from pytest_niah.config.gate_expressions import parse_allowances
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.experiment import RunReport, load_inputs, run_experiment

    began = time.perf_counter()
    allowances = parse_allowances(args.allowance)
    source = packaged_minilm_folder()
    models = build_models(args.variant_list, source, work / "models")
    cache = work / "cache"
    inputs = load_inputs(config(args, args.seed_list[0], str(source)), cache_dir=cache)
    seconds: dict[str, dict[str, float]] = {}

    def run(name: str, seed: int, model: Path, embedder: Any, **settings: Any) -> Any:
        run_config = config(args, seed, str(model), **settings)
        if embedder is None:
            embedder = load_embedder(run_config, memo_dir=cache)
        report, started = RunReport(), time.perf_counter()
        results = run_experiment(
            run_config, embedder=embedder, inputs=inputs, cache_dir=cache, progress=False,
            report=report,
        )  # fmt: skip
        took = time.perf_counter() - started
        seconds[f"{name}/{seed}"] = {"total": took, **report.seconds}
        log(f"seed {seed}: {name} in {took:.1f} s")
        return results, embedder

    baselines, embedder = {}, None
    for seed in args.seed_list:
        baselines[seed], embedder = run("baseline", seed, source, embedder)
    states: dict[str, dict[int, list[str]]] = {v.name: {} for v in args.variant_list}
    skipped: dict[str, str] = {}
    truncated: list[str] = []  # variant/seed runs the time budget left out
    for variant in args.variant_list:
        embedder = None  # one model per variant, loaded on its first seed
        for seed in args.seed_list:
            if args.budget_s is not None and time.perf_counter() - began > args.budget_s:
                log(f"{variant.name}, seed {seed}: not run, --budget-s {args.budget_s:.0f} spent")
                truncated.append(f"{variant.name}/{seed}")
                continue
            try:
                results, embedder = run(
                    variant.name, seed, models[variant.name], embedder, **variant.settings
                )
            except Exception as error:  # e.g. float16 kernels missing on this CPU
                if "dtype" not in variant.settings:
                    raise
                skipped[variant.name] = f"{type(error).__name__}: {error}".splitlines()[0]
                log(f"{variant.name}: does not run here, skipped ({skipped[variant.name]})")
                break
            comparison = compare(results, baselines[seed])
            for (_, _, length), verdict in comparison.slice_verdicts(allowances):
                states[variant.name].setdefault(length, []).append(verdict.state)
    return {"states": states, "skipped": skipped, "seconds": seconds, "truncated": truncated}


def rows(
    variants: Sequence[Variant], states: dict[str, dict[int, list[str]]]
) -> list[dict[str, Any]]:
    out = []
    for variant in variants:
        for length, seen in sorted(states.get(variant.name, {}).items()):
            counts = Counter(seen)
            share = {s: 100.0 * counts[s] / len(seen) for s in STATES}
            other = {s: n for s, n in counts.items() if s not in STATES}  # e.g. no paired cells
            out.append(
                {"variant": variant.name, "kind": variant.kind, "length": length,
                 "gates": len(seen), "percent": share, "other": other, "states": seen}
            )  # fmt: skip
    return out


def table(table_rows: Sequence[dict[str, Any]]) -> list[str]:
    cells = [
        [r["variant"], r["kind"], str(r["length"]), str(r["gates"])]
        + [f"{r['percent'][s]:.0f}" for s in STATES]
        for r in table_rows
    ]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(COLUMNS)]

    def line(values: Sequence[str]) -> str:  # names left, numbers right
        pairs = enumerate(zip(values, widths, strict=True))
        return "  ".join(v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in pairs)

    lines = [line(COLUMNS), *(line(row) for row in cells)]
    return lines


def summary(
    variants: Sequence[Variant],
    states: dict[str, dict[int, list[str]]],
    skipped: dict[str, str],
    truncated: Sequence[str],
) -> tuple[list[str], dict[str, Any]]:
    lines: list[str] = []
    numbers: dict[str, Any] = {}
    no_op = [
        s for v in variants if v.kind == NO_OP for n in states[v.name] for s in states[v.name][n]
    ]
    alarms = no_op.count("regressed")
    numbers["false_alarm"] = {"regressed": alarms, "gates": len(no_op)}
    rate = f"{100.0 * alarms / len(no_op):.0f}%" if no_op else "n/a"
    verdict = "MET" if no_op and alarms == 0 else "MISSED" if no_op else "n/a"
    lines.append(f"false alarms on no-ops: {alarms} of {len(no_op)} gates regressed ({rate}); "
                 f"target none: {verdict}")  # fmt: skip
    numbers["detection"] = {}
    for variant in variants:
        if variant.kind == NO_OP or not states[variant.name]:
            continue
        per_length = states[variant.name]
        hit = sum(seen.count("regressed") for seen in per_length.values())
        total = sum(len(seen) for seen in per_length.values())
        longest = max(per_length)
        at_longest = per_length[longest].count("regressed")
        numbers["detection"][variant.name] = {
            "regressed": hit,
            "gates": total,
            "longest": longest,
            "regressed_at_longest": at_longest,
            "gates_at_longest": len(per_length[longest]),
        }
        lines.append(f"detection {variant.name}: {hit} of {total} gates regressed "
                     f"({100.0 * hit / total:.0f}%); at {longest} tokens "
                     f"{at_longest} of {len(per_length[longest])}")  # fmt: skip
    for name, why in skipped.items():
        lines.append(f"skipped {name}: does not run on this machine ({why})")
    if truncated:
        lines.append(f"not run (--budget-s spent): {', '.join(truncated)}")
    return lines, numbers


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as stop:
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
            return 2
        return 2 if stop.code else 0
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="niah-bench-gates-") as work:
        measured = measure(args, Path(work))
    wall = time.perf_counter() - began
    states, skipped = measured["states"], measured["skipped"]
    variants = [v for v in args.variant_list if v.name not in skipped]
    table_rows = rows(variants, states)
    print(f"gates: --niah-compare-fail={args.allowance} against the unmodified packaged MiniLM, "
          f"seeds {','.join(map(str, args.seed_list))}, lengths {args.lengths}, positions "
          f"{args.positions}, groups {args.groups or 'all'}, orders {args.orders}")  # fmt: skip
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, {platform.platform()}; "
          f"wall {wall:.0f} s")  # fmt: skip
    print("\n".join(table(table_rows)))
    lines, numbers = summary(variants, states, skipped, measured["truncated"])
    print("\n".join(lines))
    if args.json is not None:
        payload = {
            "settings": {k: getattr(args, k) for k in ("seeds", "lengths", "positions", "groups",
                                                       "orders", "allowance", "small")},
            "machine": {"machine": platform.machine(), "cpus": os.cpu_count(),
                        "platform": platform.platform(), "python": platform.python_version()},
            "wall_s": round(wall, 1),
            "rows": table_rows,
            "summary": numbers,
            "skipped": skipped,
            "not_run": measured["truncated"],
            "seconds": {run: {k: round(v, 2) for k, v in parts.items()}
                        for run, parts in measured["seconds"].items()},
        }  # fmt: skip
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
