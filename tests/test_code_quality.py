"""The package's own rules, checked on every CI run: types, import direction, lint.

Each is a tool configured in pyproject.toml; running them here means a change that breaks
one fails the suite like any other regression.
"""

from __future__ import annotations

import copy
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
