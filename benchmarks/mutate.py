"""Mutation testing of the rule-bearing modules, against the fast tests that own them.

Each mutant changes one thing in one line. Operators: a comparison flipped or made strict,
``and``/``or`` swapped, a ``not`` dropped, a number moved by one, ``True``/``False``
swapped, ``min``/``max`` swapped, ``+``/``-`` swapped; clause deletion (one operand of an
``and``/``or`` dropped, an ``if`` statement, a ``raise`` or a bare call deleted: a dropped
check); return value (``return X`` -> ``return None``). Every mutant runs in a copy of the
last commit (the working tree is never touched or read, so other work can go on beside it;
``--working-tree`` mutates uncommitted code), with the copy first on ``PYTHONPATH`` so that
pytester subprocesses import the mutant too. A mutant is *killed* when its tests fail,
*survives* when they pass, and *times out* when they run past ``--timeout``: the report and
the printed tally count timeouts in a column of their own, not as kills. The owning tests run
once unmutated first: a module whose tests already fail is left unscored, as its every mutant
would read as killed.

The modules and their tests are ``mutation_targets.TARGETS`` (a test may be a node id,
``file::name``); the operators are in ``mutation_operators.py``, the runs and the report in
``mutation_runs.py``. Each module's baseline time is printed: its mutants each take about as
long, so a slow test list is worth trimming to the tests that kill. Each run draws ``--sample``
mutants per module with a fresh seed, printed (``--seed N`` draws that sample again), so the
score is that of mutants no test was written against; ``--rescore SEED`` runs an earlier
sample too, and the report gives both scores side by side. Mutants reviewed as equivalent or
unreachable (``mutation_equivalents.EQUIVALENT``, each with why no test can kill it) are never
drawn; the run prints, and the report says, how many were left out.

    python benchmarks/mutate.py                      # a fresh sample of every module
    python benchmarks/mutate.py --module measure/verdicts.py --jobs 2
    python benchmarks/mutate.py --rescore 1          # the fresh sample beside seed 1's
    python benchmarks/mutate.py --list               # the mutants, without running them
    python benchmarks/mutate.py --report benchmarks/results/mutation.md

mutmut 3 and cosmic-ray were the first choice; both run the mutant in place or need the
whole suite once per session to map tests, which took longer than this script's full pass
on the 2-core machines. Not in CI: it takes tens of minutes. Run it before resolving an
issue that touches a rule, and explain every survivor in the report.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import time
from pathlib import Path

from bench_checks import check_at_least, check_output
from mutation_operators import (
    Mutant,
    apply,
    draw,
    enumerate_mutants,
    is_equivalent,
    module_path,
)
from mutation_runs import Job, report, run_all, snapshot_head
from mutation_targets import TARGETS

__all__ = ["TARGETS", "Mutant", "apply", "enumerate_mutants", "main", "report"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SAMPLE = 10  # mutants per module and seed


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line, checked."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--module", action="append", help="module under pytest_niah/ (repeatable)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument(
        "--sample",
        type=int,
        default=DEFAULT_SAMPLE,
        help=f"mutants per module and seed (default {DEFAULT_SAMPLE}; 0: every mutant)",
    )
    parser.add_argument("--seed", type=int, help="the fresh sample's seed (default: a new one)")
    parser.add_argument(
        "--rescore", type=int, action="append", default=[], help="also run seed N's sample"
    )
    parser.add_argument("--report", help="write a markdown report here")
    parser.add_argument(
        "--working-tree",
        action="store_true",
        help="mutate the working tree as it is (default: the last commit, HEAD)",
    )
    parser.add_argument(
        "--passed",
        action="append",
        default=[],
        help="a module whose tests passed unmutated on this commit already: no baseline",
    )
    parser.add_argument(
        "--stop-after",
        type=float,
        default=0,
        help="start no mutant after this many seconds (those left are listed, not scored)",
    )
    args = parser.parse_args(argv)
    if args.sample < 0:
        parser.error(f"--sample={args.sample}: give 0 (every mutant) or a positive count")
    check_at_least(parser, "--jobs", args.jobs, 1)
    check_at_least(parser, "--timeout", args.timeout, 1)
    check_at_least(parser, "--stop-after", args.stop_after, 0)
    if args.report:
        args.report = str(Path(args.report).absolute())  # the run changes folders
        check_output(parser, "--report", Path(args.report))
    return args


def collect(
    modules: list[str], source: Path, seeds: dict[str, int], size: int
) -> tuple[dict[str, set[Mutant]], list[Job], str]:
    """Each seed's sample of every module, the jobs (one per distinct mutant), and a line
    saying how many mutants were left out as reviewed equivalents (never drawn)."""
    samples: dict[str, set[Mutant]] = {name: set() for name in seeds}
    work: dict[Mutant, Job] = {}
    excluded: dict[str, int] = {}
    for module in modules:
        if not module_path(source, module).exists():
            print(f"skip {module}: no such module")
            continue
        tests = TARGETS.get(module) or [f"tests/{Path(module).parent}"]
        every = enumerate_mutants(module, source)
        found = [item for item in every if not is_equivalent(item[0])]
        if len(every) > len(found):
            excluded[module] = len(every) - len(found)
        for name, value in seeds.items():
            for mutant, spec in draw(found, module, value, size):
                samples[name].add(mutant)
                work[mutant] = (module, mutant, spec, tests)
    where = ", ".join(f"{module} {count}" for module, count in excluded.items())
    line = (
        f"Left out as equivalent (mutation_equivalents.EQUIVALENT, each with its reason): "
        f"{sum(excluded.values())} mutants ({where or '-'})."
    )
    print(line)
    jobs = [work[m] for m in sorted(work, key=lambda m: (m.module, m.index, m.description))]
    return samples, jobs, line


def run(jobs: list[Job], args: argparse.Namespace, source: Path) -> tuple[dict[Mutant, str], str]:
    """Each module's baseline (its tests unmutated, unless ``--passed``), then its mutants,
    module by module in one pool; the outcomes scored and a note of what was not (a failing
    baseline would read its every mutant as killed)."""
    modules = {module: tests for module, _, _, tests in jobs if module not in args.passed}
    baselines: list[Job] = [(module, None, None, tests) for module, tests in modules.items()]
    failing: set[str] = set()
    outcomes: dict[Mutant, str] = {}

    def done(job: Job, outcome: str, seconds: float) -> None:
        module, mutant = job[0], job[1]
        if mutant is None:
            print(f"baseline {outcome:8} {module} ({seconds:.0f} s)", flush=True)
            if outcome != "survived":
                failing.add(module)
            return
        outcomes[mutant] = outcome
        where = f"{mutant.module}:{mutant.line}"
        print(f"{outcome:8} {where} {mutant.description} ({seconds:.0f} s)", flush=True)

    stop_at = time.monotonic() + args.stop_after if args.stop_after else float("inf")
    # Each module's baseline just before its mutants: modules run in the order given.
    order = {module: rank for rank, module in enumerate(args.module or TARGETS)}
    queue = sorted([*baselines, *jobs], key=lambda job: (order.get(job[0], 0), job[1] is not None))
    run_all(queue, args.timeout, source, args.jobs, done, stop_at)
    skipped = [m for m in outcomes if outcomes[m] == "not run" or m.module in failing]
    skipped.sort(key=lambda m: (m.module, m.index, m.description))
    notes = [f"Baselines not rerun (passed before, --passed): {', '.join(args.passed) or '-'}."]
    if failing:
        notes.append(f"Not scored, their tests fail unmutated: {', '.join(sorted(failing))}.")
    if skipped:
        where = ", ".join(f"`{m.module}:{m.line}` {m.description}" for m in skipped)
        notes.append(f"Not scored ({len(skipped)}; not run by --stop-after, or above): {where}.")
    return {m: o for m, o in outcomes.items() if m not in skipped}, "\n".join(notes)


def main(argv: list[str] | None = None) -> int:
    """Draw the samples, run the baselines and the mutants, print (and write) the report."""
    args = parse(argv)
    modules = args.module or list(TARGETS)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    print(f"seed {seed} (python benchmarks/mutate.py --seed {seed} draws this sample again)")
    # A sample drawn again (--seed) is a rescore once tests were written for it: not "fresh".
    seeds = {f"{'fresh' if args.seed is None else 'drawn again'}, seed {seed}": seed}
    seeds |= {f"re-scored, seed {s}": s for s in args.rescore if s != seed}
    holder = tempfile.TemporaryDirectory(prefix="niah-mutate-head-")
    source = ROOT if args.working_tree else snapshot_head(Path(holder.name) / "head", ROOT)
    samples, jobs, left_out = collect(modules, source, seeds, args.sample)
    if args.list:
        for _, mutant, _, _ in jobs:
            assert mutant is not None
            print(f"{mutant.module}:{mutant.line}: {mutant.description}")
        print(f"{len(jobs)} mutants")
        return 0
    outcomes, notes = run(jobs, args, source)
    samples = {name: {m for m in sample if m in outcomes} for name, sample in samples.items()}
    text = f"Seed {seed}, {args.sample or 'every'} mutants per module.\n\n"
    text += report(modules, samples, outcomes) + "\n" + notes + "\n" + left_out + "\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
