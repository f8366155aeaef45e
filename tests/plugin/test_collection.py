"""What --niah-model adds to the collection: how many tests, their ids, -k, and speed."""

from __future__ import annotations

import re

from pytest_niah.inputs.needles import builtin_needle_set

CASE_ID = re.compile(r"^[a-z]+-\d\d-(onehop|literal)-(default|inverted)-L\d+-d\d+$")
GATE_ID = re.compile(r"^gate-(onehop|literal)-L\d+$")
IMPORT_PROBE = """
import json, sys
from pathlib import Path

def pytest_collection_finish(session):
    heavy = sorted(
        m for m in sys.modules
        if m.split(".")[0] in {"torch", "sentence_transformers", "transformers", "sklearn", "numpy"}
    )
    Path("heavy_modules.json").write_text(json.dumps(heavy))
"""


def test_tiny_grid_counts_cases_and_gates(niah):
    result = niah.run("--collect-only", "-q")
    ids = niah.ids(result)
    cases = [i for i in ids if CASE_ID.match(i)]
    gates = [i for i in ids if GATE_ID.match(i)]
    assert len(cases) == niah.n_cases == 48
    assert gates == [
        "gate-literal-L128",
        "gate-literal-L256",
        "gate-onehop-L128",
        "gate-onehop-L256",
    ]
    assert len(ids) == len(cases) + len(gates)
    result.stdout.fnmatch_lines([f"{niah.n_cases + niah.n_gates} tests collected in *"])


def test_count_is_groups_x_orders_x_lengths_x_positions_plus_gates(niah):
    groups = len(builtin_needle_set().groups)
    result = niah.run(
        "--collect-only",
        "-q",
        "--niah-lengths=128,512,2048",
        "--niah-positions=4",
        "--niah-arms=onehop",
        omit=["groups"],
    )
    ids = niah.ids(result)
    assert sum(bool(CASE_ID.match(i)) for i in ids) == groups * 2 * 3 * 4
    assert sum(bool(GATE_ID.match(i)) for i in ids) == 1 * 3
    assert len(ids) == groups * 2 * 3 * 4 + 3


def test_ids_read_like_the_case(niah):
    result = niah.run("--collect-only", "-q")
    ids = set(niah.ids(result))
    assert "dietary-01-onehop-inverted-L128-d100" in ids
    assert "location-01-literal-default-L256-d0" in ids
    assert "dietary-01-onehop-inverted-L128-d25" not in ids  # only 3 positions
    # Node ids name the shipped module and its two test functions.
    lines = set(result.outlines)
    assert "test_niah.py::test_needle[dietary-01-literal-default-L128-d0]" in lines
    assert "test_niah.py::test_gate[gate-onehop-L256]" in lines
    assert all(CASE_ID.match(i) or GATE_ID.match(i) for i in ids)


def test_ids_are_stable_across_runs(niah):
    first = niah.ids(niah.run("--collect-only", "-q"))
    second = niah.ids(niah.run("--collect-only", "-q"))
    assert first == second


def test_k_selects_one_case_by_id(niah):
    result = niah.run("--collect-only", "-q", "-k", "dietary-01-onehop-inverted-L128-d100")
    assert niah.ids(result) == ["dietary-01-onehop-inverted-L128-d100"]


def test_k_runs_only_the_selected_cases(niah):
    result = niah.run("-k", "location-01-literal and L256")
    result.assert_outcomes(passed=2 * 3)  # 2 orders x 3 positions
    assert "deselected" in result.outlines[-1]


def test_full_default_grid_collects_fast_without_heavy_imports(niah):
    """7 lengths x 10 positions x every builtin group x 2 orders: >= 3,360 cases, quickly.

    Collection with a real model named must not import torch (nor numpy, the model's
    tokenizer or scikit-learn): a subprocess, so the parent's imports do not count.
    """
    # A plugin, not a conftest: a run of the grid alone loads no conftest of the project.
    niah.pytester.makepyfile(import_probe=IMPORT_PROBE)
    groups = len(builtin_needle_set().groups)
    result = niah.pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "import_probe",
        "--niah-model=packaged-minilm",
        "--collect-only",
        "-q",
    )
    assert result.ret == 0, result.stdout.str()
    ids = niah.ids(result)
    cases = [i for i in ids if CASE_ID.match(i)]
    assert len(cases) == groups * 2 * 7 * 10
    assert len(cases) >= 3360
    assert [i for i in ids if GATE_ID.match(i)] == [
        f"gate-onehop-L{n}" for n in (128, 256, 512, 1024, 2048, 4096, 8192)
    ]
    collected = re.search(r"(\d+) tests collected in ([\d.]+)s", result.stdout.str())
    assert collected is not None
    assert int(collected.group(1)) == len(ids)
    assert (niah.pytester.path / "heavy_modules.json").read_text() == "[]"


def test_a_node_id_pasted_from_the_output_runs_exactly_that_case(niah):
    listed = niah.run("--collect-only", "-q").outlines
    case = next(line for line in listed if "test_needle[" in line and "literal" in line)
    assert case.startswith("test_niah.py::")
    result = niah.run(case, "-v")
    result.assert_outcomes(passed=1)
    assert f"::{case.split('::', 1)[1]} PASSED" in result.stdout.str()
    gate = next(line for line in listed if "test_gate[" in line)
    niah.run(gate).assert_outcomes(passed=1)


def test_last_failed_reruns_only_the_failed_gates(niah):
    # --lf needs the cache provider, which the niah fixture's runs turn off: drop that.
    args = niah.args("--niah-min-auc=0.99")
    assert args[:2] == ["-p", "no:cacheprovider"]
    first = niah.pytester.runpytest(*args[2:])
    failed = first.parseoutcomes()["failed"]
    assert failed > 0
    again = niah.pytester.runpytest(*args[2:], "--lf")
    outcomes = again.parseoutcomes()
    assert outcomes["failed"] == failed and "passed" not in outcomes
    assert outcomes["deselected"] == niah.n_cases + niah.n_gates - failed
