"""benchmarks/bench_static_load.py: the figure behind "a static model folder is read once".

The script runs in this interpreter (tests/conftest.py's ``bench_script``).
"""

from __future__ import annotations

import json


def test_the_bench_times_a_read_and_a_load_from_the_memo(
    tmp_path, bench_script, capsys, tiny_static_model
):
    out = tmp_path / "load.json"
    argv = [f"--model={tiny_static_model}", "--repeat=2", f"--json={out}"]
    assert bench_script("bench_static_load").main(argv) == 0
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["read"] > 0 and row["again"] > 0
    assert row["ratio"] == row["again"] / row["read"] and row["repeat"] == 2
    shown = capsys.readouterr().out
    assert f"{tiny_static_model}: read " in shown and "(fastest of 2)" in shown


def test_a_model_that_is_not_a_static_folder_is_refused(bench_script, capsys):
    assert bench_script("bench_static_load").main(["--model=packaged-minilm"]) == 2
    assert "--model=packaged-minilm: not a model2vec folder" in capsys.readouterr().err
