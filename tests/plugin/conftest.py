"""Shared helpers of the pytester tests of the plugin: paths, a tiny grid, output parsing.

Every run here uses the TF-IDF baseline (``lexical:tfidf``: no torch) on a small grid,
through the :func:`niah` fixture. Options a test names itself replace the grid's defaults.
Helpers are fixtures, not imports: every conftest.py of this repo is a module "conftest".
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_niah.results.niah_results import NiahResults

# torch & co. are imported once by tests/conftest.py (pytester runs need that).

REPO = Path(__file__).resolve().parents[2]
TINY_CORPUS = REPO / "fixtures" / "corpus" / "tiny"
NEEDLE_FIXTURES = REPO / "fixtures" / "needles"

MODEL = "lexical:tfidf"
LABEL = "lexical-tfidf"  # the label pytest-niah derives from MODEL

# The tiny grid: 2 groups x 2 arms x 2 orders x 2 lengths x 3 positions = 48 cases + 4 gates.
# The lexical baseline finds every literal needle (pass) and misses every one-hop one (xfail).
# Its books are the default corpus: the pinned books shipped inside the package.
GRID: dict[str, str] = {
    "lengths": "128,256",
    "positions": "3",
    "groups": "dietary-01,location-01",
    "arms": "literal,onehop",
}
# "LABEL (MODEL), arm ARM[, scoring SCORING]: ..." -- one title line per table.
TITLE = re.compile(
    r"^(?P<label>\S+)(?: \((?P<model>.*?)\))?, arm (?P<arm>[\w-]+)"
    r"(?:, scoring (?P<scoring>[\w-]+))?[:,]"
)
# Cells are right-aligned and joined by two spaces; a cell itself has single spaces at most.
CELL_GAP = re.compile(r"\s{2,}")
# Below a table: "  note: TEXT" and, per gate that did not pass, "  L<length> FAIL|WARN MESSAGE".
NOTE = re.compile(r"  note: (.+)")
DETAIL = re.compile(r"  L(\d+) (FAIL|WARN) (.+)")


@dataclass
class Niah:
    """Runs pytest with pytest-niah inside a pytester folder and reads what it printed."""

    pytester: pytest.Pytester
    corpus: Path  # the default corpus's books as a folder of .txt files
    model: str = MODEL
    label: str = LABEL
    grid: dict[str, str] = field(default_factory=lambda: dict(GRID))
    tiny_corpus: Path = TINY_CORPUS
    needle_fixtures: Path = NEEDLE_FIXTURES
    n_groups: int = 2
    n_arms: int = 2
    n_orders: int = 2
    n_lengths: int = 2
    n_positions: int = 3

    @property
    def n_cases(self) -> int:
        """Case tests of the tiny grid."""
        return self.n_groups * self.n_arms * self.n_orders * self.n_lengths * self.n_positions

    @property
    def n_gates(self) -> int:
        """Gate tests of the tiny grid."""
        return self.n_arms * self.n_lengths

    def args(self, *args: str, omit: Sequence[str] = (), model: str | None = MODEL) -> list[str]:
        """``args`` plus the grid's options that ``args`` does not name and ``omit`` leaves in.

        ``model=None`` adds no ``--niah-model``; one in ``args`` always wins.
        """
        named = {
            a.split("=", 1)[0].removeprefix("--niah-") for a in args if a.startswith("--niah-")
        }
        skip = named | set(omit)
        out = ["-p", "no:cacheprovider", "-p", "no:benchmark"]
        if model and "model" not in skip:
            out.append(f"--niah-model={model}")
        out += [f"--niah-{key}={value}" for key, value in self.grid.items() if key not in skip]
        return out + list(args)

    def run(
        self,
        *args: str,
        omit: Sequence[str] = (),
        model: str | None = MODEL,
        subprocess: bool = False,
        timeout: float = 180,
    ) -> pytest.RunResult:
        """Run pytest on the tiny grid: in-process, or in a fresh interpreter."""
        full = self.args(*args, omit=omit, model=model)
        if subprocess:
            return self.pytester.runpytest_subprocess(*full, timeout=timeout)
        return self.pytester.runpytest(*full)

    def load(self, name: str | Path) -> NiahResults:
        """A ``--niah-json`` file of the pytester folder."""
        return NiahResults.load(self.pytester.path / name)

    @staticmethod
    def ids(result: pytest.RunResult) -> list[str]:
        """The parametrize ids of the tests ``--collect-only -q`` listed."""
        return [m.group(1) for line in result.outlines if (m := re.search(r"\[(.+)\]$", line))]

    @staticmethod
    def sections(result: pytest.RunResult) -> list[str]:
        """Labels of the ``pytest-niah: LABEL`` summary sections, in order."""
        return [
            m.group(1)
            for line in result.outlines
            if (m := re.fullmatch(r"=+ pytest-niah: (\S+) =+", line))
        ]

    def tables(self, result: pytest.RunResult, label: str | None = None) -> dict[str, dict]:
        """One model's summary tables, keyed by arm (``arm/scoring`` beside whole scoring).

        Returns ``{arm: {"title": line, "header": [col, ...], "rows": {length: {col: cell}},
        "notes": [text, ...], "details": {length: [(outcome, message), ...]}}}``; a column is
        named by the first word of its header (``AUC [95% CI]`` is ``AUC``); ``notes`` are the
        ``  note: ...`` lines below the table and ``details`` its ``  L<length> FAIL|WARN ...``
        gate lines.
        """
        label = label or self.label
        lines = result.outlines
        start = next(
            i
            for i, line in enumerate(lines)
            if re.fullmatch(rf"=+ pytest-niah: {re.escape(label)} =+", line)
        )
        tables: dict[str, dict] = {}
        current: dict | None = None
        for line in lines[start + 1 :]:
            if line.startswith("=") or not line.strip():
                break
            title = TITLE.match(line)
            if title and title.group("label") == label:
                key = title.group("arm")
                if title.group("scoring") not in (None, "whole"):
                    key += "/" + title.group("scoring")
                current = tables[key] = {
                    "title": line,
                    "header": None,
                    "rows": {},
                    "notes": [],
                    "details": {},
                }
            elif current is not None and line.startswith("  "):
                if note := NOTE.fullmatch(line):
                    current["notes"].append(note.group(1))
                    continue
                if detail := DETAIL.fullmatch(line):
                    length, outcome, message = detail.groups()
                    current["details"].setdefault(int(length), []).append((outcome, message))
                    continue
                cells = CELL_GAP.split(line.strip())
                if current["header"] is None:
                    current["header"] = [name.split()[0] for name in cells]
                else:
                    row = dict(zip(current["header"], cells, strict=True))
                    current["rows"][int(row["length"].rstrip("*"))] = row
            else:
                current = None  # what the run did, or a comparison: no table line
        return tables

    def gates(self, result: pytest.RunResult, arm: str, label: str | None = None) -> dict[int, str]:
        """{length: gate column} of one arm's summary table."""
        return {
            length: row["gate"] for length, row in self.tables(result, label)[arm]["rows"].items()
        }

    def details(
        self, result: pytest.RunResult, arm: str, label: str | None = None
    ) -> dict[int, list[tuple[str, str]]]:
        """{length: [(FAIL|WARN, message), ...]}: the gate lines below one arm's table."""
        return self.tables(result, label)[arm]["details"]

    @staticmethod
    def gate_failures(result: pytest.RunResult) -> dict[str, list[str]]:
        """{gate id: the lines of its failure}: ``model ..., length N:`` then one per gate."""
        out: dict[str, list[str]] = {}
        current: list[str] | None = None
        for line in result.outlines:
            if match := re.fullmatch(r"_+ test_gate\[(.+)\] _+", line):
                current = out[match.group(1)] = []
            elif current is not None:
                if line.startswith(("_", "=")) or not line.strip():
                    current = None
                else:
                    current.append(line)
        return out

    @staticmethod
    def stopped(result: pytest.RunResult, label: str) -> str:
        """The one cause of a run stopped before its first test; checks how it stopped.

        The run exits with a usage error (4), runs no test, prints no summary, names the model
        once and says how to fix the problem. Returns the text after ``could not run 'LABEL': ``.
        """
        out = result.stdout.str() + result.stderr.str()
        assert result.ret == pytest.ExitCode.USAGE_ERROR, out
        prefix = f"pytest-niah could not run {label!r}: "
        assert out.count("pytest-niah could not run") == 1, out
        line = next(line for line in result.outlines + result.errlines if prefix in line)
        cause = line.split(prefix, 1)[1].removesuffix(" !")
        assert ". Fix: " in cause or ": Fix: " in cause, cause
        assert re.search(r"=+ no tests ran in [\d.]+s", result.stdout.str()), out
        assert "pytest-niah: " + label not in result.stdout.str(), "no summary after a stop"
        assert "Traceback" not in out
        return cause

    @staticmethod
    def without_comparisons(result: pytest.RunResult) -> SimpleNamespace:
        """The output without the ``LABEL versus ...`` tables, for the summary-table helpers."""
        kept, skipping = [], False
        for line in result.outlines:
            if re.match(r"\S+ versus .*:$", line):
                skipping = True
                continue
            if skipping and line.startswith("  "):
                continue
            skipping = False
            kept.append(line)
        return SimpleNamespace(outlines=kept)


@pytest.fixture
def niah(pytester: pytest.Pytester, shared_corpus_dir: Path) -> Niah:
    """Run pytest-niah on a tiny grid inside this test's pytester folder."""
    return Niah(pytester, shared_corpus_dir)


@pytest.fixture(autouse=True)
def _no_niah_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """NIAH_* variables of the calling shell (tox passes them on) must not steer the runs.

    Any on-disk cache pytest-niah keeps goes to this test's own folder.
    """
    for name in list(os.environ):
        if name.startswith("NIAH_"):
            monkeypatch.delenv(name)
    # A run appends to the step summary whenever it is set: not to this CI job's own.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "niah-cache"))
