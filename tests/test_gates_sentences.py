"""The calibration's sentences: generated from the bench JSON, per run beside per gate.

Found: the docs counted 36 correlated no-op gates as independent trials ("0 of 36, 95%
interval 0-10%"; per run it is 0 of 9, 0-34%), said nothing of how far the no-ops moved the
scores, and wrote that weight noise 0.1 "left AUC and ratio within the allowance" where 6 of
its 12 AUC verdicts were inconclusive. Every number of those sentences now comes from the
JSON, as the table's do.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import gates_report  # noqa: E402
import gates_sentences  # noqa: E402

SETTINGS = {
    "seeds": "1,2", "lengths": "128,256,512", "positions": 2, "groups": "",
    "orders": "default", "allowance": "auc:0.02,ratio:0.02", "small": False,
}  # fmt: skip


def gate(variant: str, kind: str, seed: int, length: int, auc: str, moved: float) -> dict:
    outcome = {"regressed": "fail", "within allowance": "pass", "inconclusive": "warn"}
    verdicts = {"auc": [auc, outcome[auc]], "comparative_ratio": ["within allowance", "pass"]}
    return {"variant": variant, "kind": kind, "seed": seed, "length": length,
            "max_change": moved, "verdicts": verdicts}  # fmt: skip


def payload() -> dict:
    gates = [
        gate("bfloat16-weights", "no-op", seed, n, "within allowance", 3e-3)
        for seed in (1, 2) for n in (128, 256, 512)
    ]  # fmt: skip
    gates[0]["verdicts"]["auc"] = ["regressed", "fail"]  # one run fails at two lengths
    gates[1]["verdicts"]["auc"] = ["inconclusive", "fail"]
    gates += [
        gate("noise-0.1", "regression", 1, n, state, 0.13)
        for n, state in ((128, "inconclusive"), (256, "within allowance"), (512, "inconclusive"))
    ]
    return {"settings": SETTINGS, "gates": gates}


def test_no_op_failures_are_counted_per_gate_and_per_run():
    text = "\n".join(gates_sentences.sentences(payload()))
    assert "failed: 2 of 6 (95% interval 4-78%)" in text
    assert "Those 6 gates are 2 runs" in text
    assert "per run, 1 of 2 (95% interval 1-99%) failed" in text
    assert (
        "bfloat16-weights 3.0e-03" in text
        and "an AUC drop of 0.02 (7 times the largest) and a ratio drop of 0.02" in text
    )
    assert "`--niah-compare-fail=auc:0.02,ratio:0.02`" in text


def test_a_missed_regression_says_how_its_verdicts_went():
    (line,) = [s for s in gates_sentences.sentences(payload()) if s.startswith("- noise-0.1")]
    assert "0 of 3 gates failed (0 of 1 runs)" in line
    assert "AUC: 2 inconclusive (warned), 1 within allowance" in line
    assert "moved by up to 1.3e-01" in line


@pytest.mark.parametrize("page", ["docs/gating.md", "docs/performance.md"])
def test_every_generated_block_of_a_page_is_what_its_json_generates(page):
    text = (REPO / page).read_text(encoding="utf-8")
    blocks = gates_report.current_blocks(text)
    assert blocks, f"{page} has no generated calibration block"
    for source, found in blocks:
        data = json.loads((REPO / source).read_text(encoding="utf-8"))
        assert gates_report.replace_blocks(found, data, source) == found, (
            f"regenerate: python benchmarks/gates_report.py {source} --docs {page}"
        )


def test_the_docs_count_runs_and_cover_the_recommended_gate():
    gating = (REPO / "docs" / "gating.md").read_text(encoding="utf-8")
    assert "left AUC and ratio within the allowance" not in gating
    assert "per run, 0 of 9 (95% interval 0-34%)" in gating
    sources = {s for s, _ in gates_report.current_blocks(gating)}
    recommended = [
        s for s in sources
        if json.loads((REPO / s).read_text())["settings"]["allowance"] == "auc:0.02,ratio:0.02"
    ]  # fmt: skip
    assert recommended, "no calibration block of the README's gate, auc:0.02,ratio:0.02"
    assert "two draws share none" in " ".join(gating.split())  # why no unpaired null


def test_a_block_at_the_very_start_of_a_page_is_found_with_its_source():
    """A page may open with a generated block: it is found like one further down."""
    # Found (mutation seed 1741474656, gates_report.py:219): a search that began past the
    # page's first character missed a block there.
    table = gates_report.BEGIN.format(source="a.json") + "\n|x|\n" + gates_report.END
    summary = (
        gates_report.SUMMARY_BEGIN.format(source="b.json") + "\ns\n" + gates_report.SUMMARY_END
    )
    page = f"{table}\n\nText.\n\n{summary}\n"
    assert gates_report.current_blocks(page) == [("a.json", table), ("b.json", summary)]
    assert gates_report.current_blocks(summary) == [("b.json", summary)]
