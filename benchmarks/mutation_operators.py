"""What ``mutate.py`` changes: the one-line mutants of a module and the sample a seed draws.

Expression operators: a comparison flipped or made strict, ``and``/``or`` swapped, a ``not``
dropped, a number moved by one, ``True``/``False`` swapped, ``min``/``max`` swapped,
``+``/``-`` swapped. Clause deletion: one operand of an ``and``/``or``, an ``if``, a
``raise`` or a bare call deleted (a dropped check). Return value: ``return X`` ->
``return None``. Annotations, docstrings and the messages of ``raise``/``assert``/log lines
are never mutated (a change there alters no rule).
"""

from __future__ import annotations

import ast
import dataclasses
import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from mutation_equivalents import EQUIVALENT

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
    """One change: which module, which node (by walk order), what it becomes; ``text`` is
    its line's source, stripped (the key of an exclusion in ``EQUIVALENT``)."""

    module: str
    index: int
    line: int
    description: str
    text: str = dataclasses.field(default="", compare=False)


def _nodes(tree: ast.AST) -> list[ast.AST]:
    return list(ast.walk(tree))


def _in_docstring_or_annotation(tree: ast.AST) -> set[int]:
    """ids of nodes that are type annotations (mutating them changes nothing at run time)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        annotations: list[ast.expr | None] = []
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
    # Any: the node's class is known only from the spec's kind.
    node: Any = _nodes(tree)[index]
    kind, value = cast("tuple[str, Any]", spec)
    if kind == "cmp":
        node.ops = [value()]
    elif kind == "bool" or kind == "bin":
        node.op = value()
    elif kind == "const":
        node.value = value
    elif kind == "call":
        node.func.id = value
    elif kind == "unnot":
        _replace(tree, node, node.operand)
    elif kind == "drop":
        kept = [v for i, v in enumerate(node.values) if i != value]
        if len(kept) == 1:
            _replace(tree, node, kept[0])
        else:
            node.values = kept
    elif kind == "delete":
        _replace(tree, node, ast.Pass())
    elif kind == "return_none":
        node.value = ast.Constant(None)
    return ast.unparse(tree)


def module_path(root: Path, module: str) -> Path:
    """Where ``module`` is in the checkout at ``root``: under ``pytest_niah/``, or a
    benchmark's module given as ``benchmarks/NAME.py``."""
    return root / module if module.startswith("benchmarks/") else root / "pytest_niah" / module


def enumerate_mutants(module: str, root: Path) -> list[tuple[Mutant, object]]:
    """Every mutant of one module of the checkout at ``root``, skipping annotations,
    docstrings and ``__all__``."""
    source = module_path(root, module).read_text(encoding="utf-8")
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
            found.append((Mutant(module, index, node.lineno, description, line), spec))
    return _numbered(found)


def _numbered(found: list[tuple[Mutant, object]]) -> list[tuple[Mutant, object]]:
    """Mutants that share a line and a description (two ``and``s on one line) numbered in
    walk order, ``And -> Or [1/2]``, so that an exclusion can name one of them."""
    counts = Counter((m.line, m.description) for m, _ in found)
    seen: Counter[tuple[int, str]] = Counter()
    out = []
    for mutant, spec in found:
        key = (mutant.line, mutant.description)
        if counts[key] > 1:
            seen[key] += 1
            numbered = f"{mutant.description} [{seen[key]}/{counts[key]}]"
            mutant = dataclasses.replace(mutant, description=numbered)
        out.append((mutant, spec))
    return out


def is_equivalent(mutant: Mutant) -> bool:
    """Whether ``mutant`` is a reviewed equivalent (``mutation_equivalents.EQUIVALENT``)."""
    return (mutant.module, mutant.text, mutant.description) in EQUIVALENT


def draw(
    found: list[tuple[Mutant, object]], module: str, seed: int, size: int
) -> list[tuple[Mutant, object]]:
    """The sample of ``size`` mutants of ``module`` that ``seed`` draws (all when fewer)."""
    if not size or len(found) <= size:
        return list(found)
    chosen = random.Random(f"{seed}:{module}").sample(found, size)
    return sorted(chosen, key=lambda item: item[0].index)
