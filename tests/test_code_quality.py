"""The package's own rules, checked on every CI run: types, import direction, lint.

Each is a tool configured in pyproject.toml; running them here means a change that breaks
one fails the suite like any other regression.
"""

from __future__ import annotations

import ast
import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_the_package_type_checks_under_mypy_strict():
    done = run(sys.executable, "-m", "mypy", "--strict", "pytest_niah")
    assert done.returncode == 0, done.stdout + done.stderr


def test_imports_flow_one_way_through_the_pipeline():
    """``plugin | cli > report > experiment > results > measure > embed > haystacks > ...``."""
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert linter is not None, "import-linter is missing: install the test extra"
    done = run(linter)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_ruff_finds_nothing_in_the_package_tests_and_benchmarks():
    done = run(sys.executable, "-m", "ruff", "check", "pytest_niah", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_file_is_formatted_as_the_pinned_ruff_formats_it():
    # Found (#46.5): `ruff format --check .` failed on a test file (ruff unpinned, not run).
    done = run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


@pytest.fixture(scope="module")
def import_graph() -> grimp.ImportGraph:
    # Every import counts: module level, inside functions and under TYPE_CHECKING.
    return grimp.build_graph("pytest_niah")


def test_no_import_cycle_inside_the_package(import_graph: grimp.ImportGraph) -> None:
    """A cycle hides behind a function-level import (corpus <-> gutenberg was one)."""
    assert import_cycles(import_graph) == []


def test_the_cycle_check_finds_a_cycle_added_to_the_graph(
    import_graph: grimp.ImportGraph,
) -> None:
    graph = copy.deepcopy(import_graph)
    graph.add_import(importer="pytest_niah.errors", imported="pytest_niah.inputs.corpus")
    cycles = import_cycles(graph)
    assert len(cycles) == 1
    assert {"pytest_niah.errors", "pytest_niah.inputs.corpus"} <= set(cycles[0])


# -- rules read off the source (ast) --------------------------------------------------------------

PACKAGE = REPO / "pytest_niah"


def package_sources() -> dict[str, ast.Module]:
    """Every module of the package, parsed, by its path relative to the repository."""
    return {
        path.relative_to(REPO).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


SOURCES = package_sources()


def private_imports(sources: dict[str, ast.Module]) -> list[str]:
    """``path:line: from module import _name`` for each underscore name imported in the package.

    Dunder names (``__version__``) are public.
    """
    found = []
    for path, tree in sources.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            if not (node.level or (node.module or "").split(".")[0] == "pytest_niah"):
                continue
            for alias in node.names:
                name = alias.name
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    found.append(f"{path}:{node.lineno}: from {node.module} import {name}")
    return found


def error_class_names(sources: dict[str, ast.Module]) -> set[str]:
    """The names of NiahError and of every class of the package that derives from it."""
    bases: dict[str, set[str]] = {}
    for tree in sources.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                named = {b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases}
                bases.setdefault(node.name, set()).update(named)
    family = {"NiahError"}
    while True:
        grown = family | {name for name, parents in bases.items() if parents & family}
        if grown == family:
            return family
        family = grown


def string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level names bound to a string (or an f-string's literal parts)."""
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            constants[target.id] = literal_text(value, {})
    return constants


def literal_text(node: ast.AST, constants: dict[str, str]) -> str:
    """The literal text of a message expression: its strings, and the constants it names."""
    parts = []
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            parts.append(child.value)
        elif isinstance(child, ast.Name) and child.id in constants:
            parts.append(constants[child.id])
    return " ".join(parts)


INLINE_FIX = re.compile(r"(^|[.;:]\s*|\s)fix\s*:", re.IGNORECASE)


def inline_fixes(sources: dict[str, ast.Module]) -> list[str]:
    """``path:line: Class`` for each NiahError built with its fix inside the problem text.

    The fix belongs in the ``hint`` argument, which the error renders as ``... Fix: ...``;
    a hint that says ``Fix:`` itself would print it twice.
    """
    errors = error_class_names(sources)
    found = []
    for path, tree in sources.items():
        constants = string_constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name) and func.id in errors:
                name, problem_at = func.id, 0
            elif (
                isinstance(func, ast.Attribute)
                and func.attr == "at"
                and isinstance(func.value, ast.Name)
                and func.value.id in errors
            ):
                name, problem_at = f"{func.value.id}.at", 1
            else:
                continue
            given = {k.arg: k.value for k in node.keywords if k.arg}
            problem = node.args[problem_at] if len(node.args) > problem_at else given.get("problem")
            hint_node = node.args[problem_at + 1] if len(node.args) > problem_at + 1 else None
            hint_node = hint_node or given.get("hint") or given.get("fix")
            if problem is not None and INLINE_FIX.search(literal_text(problem, constants)):
                found.append(f"{path}:{node.lineno}: {name}: 'Fix:' inside the problem text")
            hint = literal_text(hint_node, constants) if hint_node is not None else ""
            if re.match(r"\s*fix\s*:", hint, re.IGNORECASE):
                found.append(f"{path}:{node.lineno}: {name}: the hint starts with 'Fix:'")
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    """A name with a leading underscore is its module's own; another module may not use it."""
    offenders = private_imports(SOURCES)
    assert offenders == [], "\n".join(offenders)


def test_the_private_import_check_finds_one() -> None:
    tree = ast.parse("from pytest_niah.measure.stats import _helper, __all__, Interval\n")
    assert private_imports({"x.py": tree}) == [
        "x.py:1: from pytest_niah.measure.stats import _helper"
    ]


def test_every_error_gives_its_fix_as_the_hint_not_inside_the_problem() -> None:
    """``NiahError(problem, hint)`` renders ``problem. Fix: hint``: one form for every error."""
    offenders = inline_fixes(SOURCES)
    assert offenders == [], "\n".join(offenders)


def test_the_inline_fix_check_finds_each_form() -> None:
    source = (
        "class NiahError(Exception): ...\n"
        "class CorpusError(NiahError): ...\n"
        "_HELP = 'Fix: reinstall'\n"
        "def f(x):\n"
        "    raise CorpusError(f'{x} is missing. Fix: add it')\n"
        "    raise CorpusError(f'{x} is missing. {_HELP}')\n"
        "    return CorpusError('missing', 'Fix: add it')\n"
        "    return CorpusError.at('f.json', 'missing. fix: add it', 'add it')\n"
        "    raise CorpusError(f'{x} is missing', 'add it, then fix the prefix')\n"
        "    raise ValueError('Fix: not ours')\n"
    )
    found = inline_fixes({"x.py": ast.parse(source)})
    assert [line.split(":")[1] for line in found] == ["5", "6", "7", "8"]


# -- sizes: a function reads on one screen, a module holds one concept ----------------------------

MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 300
MAX_TEST_FILE_LINES = 450
# Two tables are data, one entry per option and one per reviewed mutant, and grow with
# what they list; every other module holds one concept.
LONG_MODULE_ALLOWED = {"pytest_niah/config/options.py", "benchmarks/mutation_equivalents.py"}


def code_files() -> list[Path]:
    """Every module of the package and of the benchmarks."""
    return sorted([*PACKAGE.rglob("*.py"), *(REPO / "benchmarks").rglob("*.py")])


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def long_functions(sources: dict[str, ast.Module], limit: int) -> dict[str, int]:
    """``path:Class.function`` -> lines, for each function or method longer than ``limit``.

    A function's lines run from its ``def`` (decorators aside) to its last line, docstring
    and nested functions included.
    """
    found: dict[str, int] = {}

    def visit(node: ast.AST, path: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    if lines > limit:
                        found[f"{path}:{name}"] = lines
                visit(child, path, f"{name}.")
            else:
                visit(child, path, prefix)

    for path, tree in sources.items():
        visit(tree, path, "")
    return found


def long_files(paths: list[Path], limit: int, root: Path = REPO) -> dict[str, int]:
    """Path relative to ``root`` -> lines, for each file longer than ``limit`` lines."""
    counts = {path.relative_to(root).as_posix(): line_count(path) for path in paths}
    return {path: lines for path, lines in counts.items() if lines > limit}


def over_the_limits() -> dict[str, dict[str, int]]:
    sources = {
        path.relative_to(REPO).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in code_files()
    }
    modules = long_files(code_files(), MAX_MODULE_LINES)
    return {
        "functions": long_functions(sources, MAX_FUNCTION_LINES),
        "modules": {p: n for p, n in modules.items() if p not in LONG_MODULE_ALLOWED},
        "test files": long_files(sorted((REPO / "tests").rglob("*.py")), MAX_TEST_FILE_LINES),
    }


@pytest.mark.parametrize("kind", ["functions", "modules", "test files"])
def test_nothing_is_over_its_size_limit(kind: str) -> None:
    """Functions <= 60 lines, modules <= 300 (the two tables aside), test files <= 450."""
    over = over_the_limits()[kind]
    assert over == {}, f"{kind} over the limit: split them by concern"


def test_the_size_checks_find_a_long_function_method_and_file(tmp_path: Path) -> None:
    def function(name: str, lines: int, indent: str = "") -> str:
        body = "".join(f"{indent}    x = {i}\n" for i in range(lines - 1))
        return f"{indent}def {name}():\n{body}"

    source = function("at_the_limit", 60) + function("long", 61) + "class C:\n"
    source += function("method", 61, "    ") + function("short", 3, "    ")
    assert long_functions({"m.py": ast.parse(source)}, MAX_FUNCTION_LINES) == {
        "m.py:long": 61,
        "m.py:C.method": 61,
    }
    (tmp_path / "a.py").write_text("x = 1\n" * 3)
    (tmp_path / "b.py").write_text("x = 1\n" * 2)
    assert long_files([tmp_path / "a.py", tmp_path / "b.py"], 2, root=tmp_path) == {"a.py": 3}


def test_no_two_modules_share_a_file_name() -> None:
    package = Path(__file__).resolve().parents[1] / "pytest_niah"
    seen: dict[str, list[str]] = {}
    for path in package.rglob("*.py"):
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.name, []).append(str(path.relative_to(package)))
    assert {name: where for name, where in seen.items() if len(where) > 1} == {}


def conftest_imports(trees: dict[str, ast.Module]) -> list[str]:
    """Each ``import tests.conftest`` and ``from tests.conftest import ...``."""
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if (isinstance(node, ast.ImportFrom) and node.module == "tests.conftest") or (
                "tests.conftest" in names
            ):
                found.append(f"{path}:{node.lineno}")
    return found


def test_no_test_imports_the_suites_conftest_by_name() -> None:
    """``tests.conftest`` is a second copy of the conftest module.

    Once a worker imported it, a pytester project's own ``tests/conftest.py`` can no longer
    load there (ImportPathMismatchError), and which tests fail depends on the order modules
    reach the workers. A fixture hands out what a test needs (``hashing_embedder``).
    """
    trees = {
        path.relative_to(REPO).as_posix(): ast.parse(path.read_text(encoding="utf-8"))
        for path in (REPO / "tests").rglob("*.py")
    }
    offenders = conftest_imports(trees)
    assert offenders == [], offenders


def test_the_conftest_import_check_finds_both_forms() -> None:
    tree = ast.parse("import os\nimport tests.conftest\nfrom tests.conftest import Hashing\n")
    assert conftest_imports({"x.py": tree}) == ["x.py:2", "x.py:3"]
