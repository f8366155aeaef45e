"""The stand-ins' sizes: the tests' tiny one and the MiniLM-sized one for speed work."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


def _builder() -> ModuleType:
    """``benchmarks/make_seed_standins.py``, imported as the benchmarks import it."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        return importlib.import_module("make_seed_standins")
    finally:
        sys.path.pop(0)


@pytest.mark.integration
def test_minilm_size_is_all_minilm_l6_v2s_compute(tmp_path: Path) -> None:
    make = _builder()
    assert make.main([str(tmp_path), "--only", "metaspace", "--size", "minilm"]) == 0
    config = json.loads((tmp_path / "metaspace" / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"]) == (6, 384)
    assert config["num_attention_heads"] == 12 and config["intermediate_size"] == 1536
    pooling = json.loads((tmp_path / "metaspace" / "1_Pooling" / "config.json").read_text())
    assert pooling.get("embedding_dimension", pooling.get("word_embedding_dimension")) == 384


@pytest.mark.integration
@pytest.mark.parametrize("name", ["v3", "v4"])
def test_large_size_is_xlm_roberta_larges_compute(tmp_path: Path, monkeypatch, name) -> None:
    # The GPU bench's stand-ins (performance.md): built on the meta device, nothing saved.
    import torch

    make = _builder()
    saved = {}
    monkeypatch.setattr(make, "_save", lambda out, model, fast, window: saved.update(
        config=model.config, window=window, parameters=sum(p.numel() for p in model.parameters())
    ))  # fmt: skip
    with torch.device("meta"):
        make.BUILDERS[name](tmp_path / name, make.training_lines(), make.SIZES["large"])
    config = saved["config"]
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (
        24, 1024, 16
    )  # fmt: skip
    assert config.intermediate_size == 4096
    # 314M (v3) and 358M (v4) parameters, as the H200 run printed
    assert saved["parameters"] // 1_000_000 == {"v3": 313, "v4": 357}[name]
    assert saved["window"] == {"v3": 8192, "v4": 32768}[name]
