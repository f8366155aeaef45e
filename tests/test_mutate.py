"""``benchmarks/mutate.py``: its operators, fresh seeds, targets and report (no mutant is run)."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
CHECK = '''
def check(x, limit):
    """Refuse what is over the limit."""
    if x is None or x > limit:
        raise ValueError("bad")
    record(x)
    return x * 2
'''


@pytest.fixture
def mutate(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    try:
        yield importlib.import_module("mutate")
    finally:
        for name in (
            "mutate",
            "mutation_targets",
            "mutation_targets_haystacks",
            "mutation_equivalents",
            "mutation_operators",
            "mutation_runs",
        ):
            sys.modules.pop(name, None)


def mutants_of(mutate: ModuleType, root: Path, source: str) -> dict[str, str]:
    (root / "pytest_niah").mkdir(parents=True, exist_ok=True)
    (root / "pytest_niah" / "check.py").write_text(source, encoding="utf-8")
    return {
        m.description: mutate.apply(source, m.index, spec)
        for m, spec in mutate.enumerate_mutants("check.py", root)
    }


def test_a_dropped_check_and_a_lost_return_value_are_generated(mutate, tmp_path):
    # Found (#34.6): no clause-deletion or return-value operators, so a dropped check was
    # never generated.
    changed = mutants_of(mutate, tmp_path, CHECK)
    body = {name: ast.unparse(ast.parse(code).body[0].body[1:]) for name, code in changed.items()}
    assert "raise" not in body["delete raise"] and "if " in body["delete raise"]
    assert "raise" not in body["delete if"] and "return x * 2" in body["delete if"]
    assert "record(x)" not in body["delete call"]
    assert body["return None"].endswith("return None")
    assert body["drop clause 1 of Or"].startswith("if x > limit:")
    assert body["drop clause 2 of Or"].startswith("if x is None:")
    # The docstring is never deleted; every mutant is valid Python and differs.
    assert all('"""Refuse' in code for code in changed.values())
    original = ast.unparse(ast.parse(CHECK))
    for name, code in changed.items():
        compile(code, name, "exec")
        assert code != original, name


def test_expression_mutants_skip_messages_but_a_raise_can_be_deleted(mutate, tmp_path):
    source = 'def f(x):\n    raise ValueError("x" * 2 if x > 1 else "y")\n'
    assert set(mutants_of(mutate, tmp_path, source)) == {"delete raise"}


def test_each_run_draws_a_fresh_sample_and_prints_its_seed(mutate, capsys):
    args = ["--list", "--working-tree", "--module", "config/cache_policy.py", "--sample", "4"]

    def listed(*extra: str) -> tuple[int, list[str]]:
        assert mutate.main([*args, *extra]) == 0
        out = capsys.readouterr().out.splitlines()
        seed = re.fullmatch(r"seed (\d+) \(.*--seed \1 draws this sample again\)", out[0])
        assert seed, out[0]
        return int(seed.group(1)), out[1:]

    seeds = {listed()[0] for _ in range(3)}
    assert len(seeds) == 3, "a new seed on every run"
    seed, first = listed("--seed", "12345")
    assert seed == 12345 and listed("--seed", "12345")[1] == first
    assert first[-1] == "4 mutants"
    # --rescore adds an earlier seed's sample to the fresh one.
    assert int(listed("--seed", "12345", "--rescore", "1")[1][-1].split()[0]) >= 4


def test_targets_cover_every_module_that_holds_a_rule(mutate):
    rules = {
        "measure/gating.py",  # gating
        "measure/verdicts.py",
        "results/compare.py",
        "measure/scoring.py",
        "config/cache_policy.py",
        "naming.py",
        "results/storage.py",
        "embed/secrets.py",
        "config/strict_json.py",
        "experiment/shards.py",
        "report/report_folder.py",
        "files.py",
        "embed/window_probe.py",
        "embed/server_fingerprint.py",
        "embed/server_noise.py",
        # #46.4: and every module of haystacks/, and these
        *(f"haystacks/{p.name}" for p in (REPO / "pytest_niah/haystacks").glob("[!_]*.py")),
        "measure/meaningful.py",
        "results/compatibility.py",
        "config/gate_expressions.py",
        "experiment/results_cache.py",
        "experiment/batch_budget.py",
        "experiment/shard_parts.py",
        "embed/gc_pause.py",
        "plugin/setting_checks.py",
        "benchmarks/gates_report.py",
    }
    assert rules <= set(mutate.TARGETS), sorted(rules - set(mutate.TARGETS))
    for module, tests in mutate.TARGETS.items():
        assert sys.modules["mutation_operators"].module_path(REPO, module).is_file(), module
        assert tests and all((REPO / test.split("::")[0]).is_file() for test in tests), module
        for test in tests:  # a node id names a test its file holds
            path, _, name = test.partition("::")
            name = name.partition("[")[0]  # a parametrized test's one case: test[case]
            assert not name or f"def {name}(" in (REPO / path).read_text(encoding="utf-8"), test


def test_the_report_gives_the_fresh_score_beside_the_rescored_one(mutate):
    one, two, three, four = (mutate.Mutant("a.py", i, i, "drop not") for i in (1, 2, 3, 4))
    samples = {"fresh, seed 9": {one, two}, "re-scored, seed 1": {two, three, four}}
    outcomes = {one: "killed", two: "survived", three: "timeout", four: "killed"}
    text = mutate.report(["a.py"], samples, outcomes)
    lines = text.splitlines()
    assert lines[0] == "| module | fresh, seed 9 | timed out | re-scored, seed 1 | timed out |"
    assert lines[2] == "| a.py | 1/2 (50%) | 0 | 1/3 (33%) | 1 |"
    assert lines[3] == "| **all** | **1/2 (50.0%)** | **0** | **1/3 (33.3%)** | **1** |"
    assert "- `a.py:2` drop not (fresh, seed 9, re-scored, seed 1)" in lines


def test_a_timeout_is_counted_apart_not_as_a_kill(mutate):
    # #46.4: a mutant whose tests ran past --timeout was scored as killed, though no test
    # failed; the report and the printed tally give timeouts a column of their own.
    killed, slow, kept = (mutate.Mutant("a.py", i, i, "drop not") for i in (1, 2, 3))
    outcomes = {killed: "killed", slow: "timeout", kept: "survived"}
    text = mutate.report(["a.py"], {"fresh, seed 9": {killed, slow, kept}}, outcomes)
    lines = text.splitlines()
    assert lines[2] == "| a.py | 1/3 (33%) | 1 |"
    assert (
        "- fresh, seed 9: 1 killed, 1 timed out, 1 survived of 3: 1/3 (33.3%) killed by a "
        "failing test"
    ) in lines
    timed_out = lines[lines.index("Timed out (not counted as killed):") + 1]
    assert timed_out == "- `a.py:2` drop not (fresh, seed 9)"
    assert "- `a.py:3` drop not (fresh, seed 9)" in lines[: lines.index(timed_out)]


def test_a_negative_sample_is_a_usage_error(mutate, capsys):
    with pytest.raises(SystemExit) as error:
        mutate.main(["--list", "--working-tree", "--sample", "-1"])
    assert error.value.code == 2 and "--sample=-1" in capsys.readouterr().err


def test_a_reviewed_equivalent_is_never_drawn_and_the_count_is_reported(
    mutate, tmp_path, monkeypatch, capsys
):
    # #34.6: a fresh sample must not draw a mutant no input can tell apart; the exclusion is
    # keyed by the line's source, so it follows the line when code above it moves.
    (tmp_path / "pytest_niah").mkdir()
    source = "def f(x):\n    return x > 1\n"
    (tmp_path / "pytest_niah" / "check.py").write_text(source, encoding="utf-8")
    every = {m.description for m, _ in mutate.enumerate_mutants("check.py", tmp_path)}
    assert {"Gt -> GtE", "Gt -> Lt"} <= every
    key = ("check.py", "return x > 1", "Gt -> GtE")
    monkeypatch.setitem(sys.modules["mutation_equivalents"].EQUIVALENT, key, "why")
    for text in (source, "# moved\n\n" + source):
        (tmp_path / "pytest_niah" / "check.py").write_text(text, encoding="utf-8")
        _, jobs, line = mutate.collect(["check.py"], tmp_path, {"fresh": 1}, 0)
        drawn = {mutant.description for _, mutant, _, _ in jobs}
        assert drawn == every - {"Gt -> GtE"}
        assert line.startswith("Left out as equivalent") and "1 mutants (check.py 1)" in line
    assert "1 mutants (check.py 1)" in capsys.readouterr().out


def test_each_reviewed_equivalent_names_one_mutant_per_line_and_says_why(mutate):
    # A stale key (its line edited) would exclude nothing and hide that; a key matching two
    # mutants of one line (two `or`s, one equivalent) would exclude one nobody reviewed.
    equivalent = sys.modules["mutation_equivalents"].EQUIVALENT
    for module in {module for module, _, _ in equivalent}:
        found = [m for m, _ in mutate.enumerate_mutants(module, REPO)]
        for key in [k for k in equivalent if k[0] == module]:
            lines = [m.line for m in found if (m.module, m.text, m.description) == key]
            assert lines and len(lines) == len(set(lines)), (key, lines)
            assert len(equivalent[key]) > 40, key  # a reason, not a label


def test_mutants_sharing_a_line_and_a_description_are_numbered_so_one_can_be_excluded(
    mutate, tmp_path, monkeypatch
):
    # Two `and`s on one line: the outer one's mutants may be equivalent while the inner
    # one's are killable; numbered in walk order (outer first), a key can name just one.
    (tmp_path / "pytest_niah").mkdir()
    source = "def f(a, b, c):\n    return a and not (b and c)\n"
    (tmp_path / "pytest_niah" / "two.py").write_text(source, encoding="utf-8")
    found = mutate.enumerate_mutants("two.py", tmp_path)
    described = {m.description: (m, spec) for m, spec in found}
    assert {"And -> Or [1/2]", "And -> Or [2/2]"} <= described.keys()
    assert "And -> Or" not in described and "drop not" in described  # a unique one: as it was
    outer, spec = described["And -> Or [1/2]"]
    assert "a or not (b and c)" in mutate.apply(source, outer.index, spec)
    key = ("two.py", "return a and not (b and c)", "And -> Or [1/2]")
    monkeypatch.setitem(sys.modules["mutation_equivalents"].EQUIVALENT, key, "why")
    _, jobs, _ = mutate.collect(["two.py"], tmp_path, {"fresh": 1}, 0)
    drawn = {mutant.description for _, mutant, _, _ in jobs}
    assert "And -> Or [2/2]" in drawn and "And -> Or [1/2]" not in drawn
