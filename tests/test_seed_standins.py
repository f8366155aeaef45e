"""The stand-ins' sizes: the tests' tiny one and the MiniLM-sized one for speed work."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.integration
def test_minilm_size_is_all_minilm_l6_v2s_compute(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        make = importlib.import_module("make_seed_standins")
    finally:
        sys.path.pop(0)
    assert make.main([str(tmp_path), "--only", "metaspace", "--size", "minilm"]) == 0
    config = json.loads((tmp_path / "metaspace" / "config.json").read_text())
    assert (config["num_hidden_layers"], config["hidden_size"]) == (6, 384)
    assert config["num_attention_heads"] == 12 and config["intermediate_size"] == 1536
    pooling = json.loads((tmp_path / "metaspace" / "1_Pooling" / "config.json").read_text())
    assert pooling.get("embedding_dimension", pooling.get("word_embedding_dimension")) == 384
