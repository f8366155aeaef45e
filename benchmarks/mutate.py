"""Mutation testing of the rule-bearing modules, against the fast tests that own them.

Each mutant changes one thing in one line. Operators: a comparison flipped or made strict,
``and``/``or`` swapped, a ``not`` dropped, a number moved by one, ``True``/``False``
swapped, ``min``/``max`` swapped, ``+``/``-`` swapped; clause deletion (one operand of an
``and``/``or`` dropped, an ``if`` statement, a ``raise`` or a bare call deleted: a dropped
check); return value (``return X`` -> ``return None``). Every mutant runs in a copy of the
last commit (the working tree is never touched or read, so other work can go on beside it;
``--working-tree`` mutates uncommitted code), with the copy first on ``PYTHONPATH`` so that
pytester subprocesses import the mutant too. A mutant is *killed* when its tests fail (or
time out), *survives* when they pass. The owning tests run once unmutated first: a module
whose tests already fail stops the run, as its every mutant would read as killed.

The modules and their tests are ``mutation_targets.TARGETS``. Each run draws ``--sample``
mutants per module with a fresh seed, printed (``--seed N`` draws that sample again), so the
score is that of mutants no test was written against; ``--rescore SEED`` runs an earlier
sample too, and the report gives both scores side by side.

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
import ast
import concurrent.futures
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mutation_targets import TARGETS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SAMPLE = 10  # mutants per module and seed
# Expression-level mutants of these lines change only a message or a log.
_MESSAGE_LINES = ("assert ", "raise ", "__all__", "log", "warnings.")

SWAPS_COMPARE: dict[type[ast.cmpop], list[type[ast.cmpop]]] = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt, ast.Gt],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt, ast.Lt],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
}
SWAPS_BINOP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
}


@dataclass(frozen=True)
class Mutant:
    """One change: which module, which node (by walk order), what it becomes."""

    module: str
    index: int
    line: int
    description: str


def _nodes(tree: ast.AST) -> list[ast.AST]:
    return list(ast.walk(tree))


def _in_docstring_or_annotation(tree: ast.AST) -> set[int]:
    """ids of nodes that are type annotations (mutating them changes nothing at run time)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            annotations.append(node.returns)
            args = node.args
            for arg in [*args.args, *args.kwonlyargs, *args.posonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    annotations.append(arg.annotation)
        for annotation in annotations:
            if annotation is not None:
                skip.update(id(n) for n in ast.walk(annotation))
    return skip


def mutations(node: ast.AST) -> list[tuple[str, object]]:
    """What one node can become: (description, replacement spec)."""
    out: list[tuple[str, object]] = []
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        for new in SWAPS_COMPARE.get(type(node.ops[0]), []):
            out.append((f"{type(node.ops[0]).__name__} -> {new.__name__}", ("cmp", new)))
    elif isinstance(node, ast.BoolOp):
        new_op = ast.Or if isinstance(node.op, ast.And) else ast.And
        out.append((f"{type(node.op).__name__} -> {new_op.__name__}", ("bool", new_op)))
        # Clause deletion: a condition that forgets one of its clauses.
        for position in range(len(node.values)):
            out.append(
                (f"drop clause {position + 1} of {type(node.op).__name__}", ("drop", position))
            )
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append(("drop not", ("unnot", None)))
    elif isinstance(node, ast.BinOp) and type(node.op) in SWAPS_BINOP:
        new_bin = SWAPS_BINOP[type(node.op)]
        out.append((f"{type(node.op).__name__} -> {new_bin.__name__}", ("bin", new_bin)))
    elif isinstance(node, ast.Constant):
        if node.value is True or node.value is False:
            out.append((f"{node.value} -> {not node.value}", ("const", not node.value)))
        elif isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            out.append((f"{node.value!r} -> {node.value + 1!r}", ("const", node.value + 1)))
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("min", "max")
    ):
        other = "max" if node.func.id == "min" else "min"
        out.append((f"{node.func.id} -> {other}", ("call", other)))
    return out


def statement_mutations(node: ast.AST) -> list[tuple[str, object]]:
    """What one statement can become: deleted (a check dropped), or returning ``None``."""
    if isinstance(node, ast.If):
        return [("delete if", ("delete", None))]
    if isinstance(node, ast.Raise):
        return [("delete raise", ("delete", None))]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return [("delete call", ("delete", None))]
    returns_none = isinstance(node, ast.Return) and (
        node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
    )
    if isinstance(node, ast.Return) and not returns_none:
        return [("return None", ("return_none", None))]
    return []


def _replace(tree: ast.AST, node: ast.AST, new: ast.AST) -> None:
    """Put ``new`` where ``node`` is in ``tree``."""
    parent = next(p for p in ast.walk(tree) for c in ast.iter_child_nodes(p) if c is node)
    for name, field in ast.iter_fields(parent):
        if field is node:
            setattr(parent, name, new)
        elif isinstance(field, list):
            for i, item in enumerate(field):
                if item is node:
                    field[i] = new


def apply(source: str, index: int, spec: object) -> str:
    """The source with node ``index`` (walk order) changed as ``spec`` says."""
    tree = ast.parse(source)
    node = _nodes(tree)[index]
    kind, value = spec  # type: ignore[misc]
    if kind == "cmp":
        node.ops = [value()]  # type: ignore[attr-defined]
    elif kind == "bool" or kind == "bin":
        node.op = value()  # type: ignore[attr-defined]
    elif kind == "const":
        node.value = value  # type: ignore[attr-defined]
    elif kind == "call":
        node.func.id = value  # type: ignore[attr-defined]
    elif kind == "unnot":
        _replace(tree, node, node.operand)  # type: ignore[attr-defined]
    elif kind == "drop":
        kept = [v for i, v in enumerate(node.values) if i != value]  # type: ignore[attr-defined]
        if len(kept) == 1:
            _replace(tree, node, kept[0])
        else:
            node.values = kept  # type: ignore[attr-defined]
    elif kind == "delete":
        _replace(tree, node, ast.Pass())
    elif kind == "return_none":
        node.value = ast.Constant(None)  # type: ignore[attr-defined]
    return ast.unparse(tree)


def enumerate_mutants(module: str, root: Path = ROOT) -> list[tuple[Mutant, object]]:
    """Every mutant of one module of the checkout at ``root``, skipping annotations,
    docstrings and ``__all__``."""
    source = (root / "pytest_niah" / module).read_text(encoding="utf-8")
    tree = ast.parse(source)
    skip = _in_docstring_or_annotation(tree)
    found = []
    for index, node in enumerate(_nodes(tree)):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            continue
        line = (source.splitlines()[node.lineno - 1]).strip()
        changes = statement_mutations(node)
        if not line.startswith(_MESSAGE_LINES):
            changes += mutations(node)
        for description, spec in changes:
            found.append((Mutant(module, index, node.lineno, description), spec))
    return found


def snapshot_head(target: Path) -> Path:
    """The committed tree (``git archive HEAD``) at ``target``: edits in progress in the
    working tree cannot break a baseline and pass for kills."""
    target.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", "HEAD"], cwd=ROOT, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _copy_checkout(target: Path, source: Path) -> None:
    ignore = shutil.ignore_patterns(
        ".git",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        "*.egg-info",
        ".pytest_cache",
        ".niah",
        "mutants",
    )
    shutil.copytree(source, target, ignore=ignore, symlinks=True)


def run_one(
    mutant: Mutant | None, spec: object, tests: list[str], timeout: float, source: Path
) -> tuple[str, float]:
    """Run one mutant's tests in a fresh copy of ``source``; 'killed', 'survived' or
    'timeout'. ``mutant=None`` runs them unmutated (the baseline: it must survive)."""
    with tempfile.TemporaryDirectory(prefix="niah-mutant-") as tmp:
        work = Path(tmp) / "checkout"
        _copy_checkout(work, source)
        if mutant is not None:
            path = work / "pytest_niah" / mutant.module
            path.write_text(
                apply(path.read_text(encoding="utf-8"), mutant.index, spec), encoding="utf-8"
            )
        env = dict(
            os.environ, PYTHONPATH=str(work), HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="1"
        )
        existing = [t for t in tests if (work / t).exists()]
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            *existing,
        ]
        started = time.perf_counter()
        try:
            done = subprocess.run(command, cwd=work, env=env, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", time.perf_counter() - started
        outcome = "survived" if done.returncode == 0 else "killed"
        return outcome, time.perf_counter() - started


def draw(
    found: list[tuple[Mutant, object]], module: str, seed: int, size: int
) -> list[tuple[Mutant, object]]:
    """The sample of ``size`` mutants of ``module`` that ``seed`` draws (all when fewer)."""
    if not size or len(found) <= size:
        return list(found)
    chosen = random.Random(f"{seed}:{module}").sample(found, size)
    return sorted(chosen, key=lambda item: item[0].index)


def report(
    modules: list[str],
    samples: dict[str, set[Mutant]],
    outcomes: dict[Mutant, str],
) -> str:
    """Per module, each sample's killed / mutants and score, then the survivors.

    The first sample is the fresh one; any others are earlier seeds re-scored.
    """
    names = list(samples)
    head = "| module | " + " | ".join(names) + " |"
    lines = [head, "|---|" + "---:|" * len(names)]

    def cell(mutants: set[Mutant]) -> str:
        if not mutants:
            return "-"
        killed = sum(1 for m in mutants if outcomes[m] != "survived")
        return f"{killed}/{len(mutants)} ({100 * killed / len(mutants):.0f}%)"

    for module in modules:
        row = [cell({m for m in samples[n] if m.module == module}) for n in names]
        if any(c != "-" for c in row):
            lines.append(f"| {module} | " + " | ".join(row) + " |")
    totals = []
    for name in names:
        mutants = samples[name]
        killed = sum(1 for m in mutants if outcomes[m] != "survived")
        score = 100 * killed / len(mutants) if mutants else 0.0
        totals.append(f"**{killed}/{len(mutants)} ({score:.1f}%)**")
    lines.append("| **all** | " + " | ".join(totals) + " |")
    survivors = [
        f"- `{m.module}:{m.line}` {m.description} ("
        + ", ".join(n for n in names if m in samples[n])
        + ")"
        for m in sorted(outcomes, key=lambda m: (m.module, m.line, m.index, m.description))
        if outcomes[m] == "survived"
    ]
    return "\n".join(lines) + "\n\nSurvivors:\n" + ("\n".join(survivors) or "- none") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Draw the samples, run the baselines then the mutants, print (and write) the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    args = parser.parse_args(argv)
    if args.sample < 0:
        parser.error(f"--sample={args.sample}: give 0 (every mutant) or a positive count")
    modules = args.module or list(TARGETS)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    print(f"seed {seed} (python benchmarks/mutate.py --seed {seed} draws this sample again)")
    seeds = {f"fresh, seed {seed}": seed}
    seeds |= {f"re-scored, seed {s}": s for s in args.rescore if s != seed}
    holder = tempfile.TemporaryDirectory(prefix="niah-mutate-head-")
    source = ROOT if args.working_tree else snapshot_head(Path(holder.name) / "head")
    samples: dict[str, set[Mutant]] = {name: set() for name in seeds}
    work: dict[Mutant, tuple[object, list[str]]] = {}
    for module in modules:
        if not (source / "pytest_niah" / module).exists():
            print(f"skip {module}: no such module")
            continue
        tests = TARGETS.get(module) or [f"tests/{Path(module).parent}"]
        found = enumerate_mutants(module, source)
        for name, value in seeds.items():
            for mutant, spec in draw(found, module, value, args.sample):
                samples[name].add(mutant)
                work[mutant] = (spec, tests)
    if args.list:
        for mutant in sorted(work, key=lambda m: (m.module, m.index, m.description)):
            print(f"{mutant.module}:{mutant.line}: {mutant.description}")
        print(f"{len(work)} mutants")
        return 0
    # A baseline that fails would count every mutant of its module as killed.
    baselines = {m.module: tests for m, (_, tests) in work.items()}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        checked = {
            module: pool.submit(run_one, None, None, tests, args.timeout, source)
            for module, tests in baselines.items()
        }
        failing = sorted(m for m, f in checked.items() if f.result()[0] != "survived")
    if failing:
        print(f"baseline tests fail unmutated for {', '.join(failing)}: fix them first")
        return 1
    outcomes: dict[Mutant, str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {
            pool.submit(run_one, m, spec, tests, args.timeout, source): m
            for m, (spec, tests) in work.items()
        }
        for future in concurrent.futures.as_completed(futures):
            mutant = futures[future]
            outcome, seconds = future.result()
            outcomes[mutant] = outcome
            print(
                f"{outcome:8} {mutant.module}:{mutant.line} {mutant.description} ({seconds:.0f} s)",
                flush=True,
            )
    text = f"Seed {seed}, {args.sample or 'every'} mutants per module.\n\n"
    text += report(modules, samples, outcomes)
    print(text)
    if args.report:
        Path(args.report).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
