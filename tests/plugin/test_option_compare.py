"""--niah-compare: a run against a saved run or a results file, paired on identical cells."""

from __future__ import annotations

import re

import pytest

from pytest_niah.results.provenance import machine_info
from pytest_niah.results.store_layout import run_key

# The literal arm alone: every case passes, every metric is defined at both lengths.
LITERAL = ("--niah-arms=literal",)
ZERO = {"+0.000", "+0.0000"}
HEADER = [
    "arm",
    "scoring",
    "length",
    "cells",
    "metric",
    "baseline",
    "current",
    "change",
    "95% CI",
    "verdict",
]
METRICS = {
    "normalized similarity",
    "comparative ratio",
    "AUC",
    "AUC (study)",
    "separation",
    "effect size",
}


def saved_file(niah, name: str, label: str | None = None):
    label = label or niah.label
    folder = niah.pytester.path / ".niah" / "runs" / run_key(label, machine_info())
    return folder / f"{name}.json.gz"


def gates(niah, result: pytest.RunResult, arm: str, label: str | None = None) -> dict[int, str]:
    return niah.gates(niah.without_comparisons(result), arm, label)


def comparison(result: pytest.RunResult, label: str) -> tuple[str, list[dict[str, str]]]:
    """The baseline named by ``LABEL versus SOURCE:`` and the table rows under it.

    A row's verdict is empty for a metric no ``--niah-compare-fail`` expression gates.
    """
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{label} versus "))
    source = lines[start].removeprefix(f"{label} versus ").removesuffix(":")
    table = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        table.append(line.strip())
    assert re.split(r"\s{2,}", table[0]) == HEADER
    rows = []
    for line in table[1:]:
        if line.startswith("note: "):  # the table's notes (n/m, accepted differences)
            continue
        cells = re.split(r"\s{2,}", line)
        cells += [""] * (len(HEADER) - len(cells))
        rows.append(dict(zip(HEADER, cells, strict=True)))
    return source, rows


def test_unknown_name_is_a_usage_error_listing_the_saved_runs(niah):
    niah.run(*LITERAL, "--niah-save=base").assert_outcomes(passed=niah.n_cases // 2 + 2)
    result = niah.run(*LITERAL, "--niah-compare=nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    machine = run_key(niah.label, machine_info()).split("/")[1]
    result.stderr.fnmatch_lines(
        [
            "*pytest-niah: --niah-compare: 'nope' is neither a results file nor a run saved "
            "for model 'lexical-tfidf'*",
        ]
    )
    result.stderr.fnmatch_lines(
        [f"*saved runs (model/machine/name): lexical-tfidf/{machine}/base*"]
    )
    assert "passed" not in result.stdout.str()


def test_unknown_name_with_an_empty_store_says_how_to_save(niah):
    result = niah.run(*LITERAL, "--niah-compare=base")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*Fix: no runs are saved there yet: save one with --niah-save=NAME*"]
    )


def test_run_compared_with_itself_by_name_passes_with_zero_deltas(niah):
    niah.run("--niah-save=base").assert_outcomes(
        passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2
    )
    result = niah.run("--niah-compare=base", "--niah-compare-fail=auc:0.02,ratio:5%")
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    assert result.ret == pytest.ExitCode.OK
    # A fail expression gates every length, and every gate passes.
    assert gates(niah, result, "literal") == {128: "pass", 256: "pass"}
    assert gates(niah, result, "onehop") == {128: "pass", 256: "pass"}
    source, rows = comparison(result, niah.label)
    assert source == str(saved_file(niah, "base"))
    # One row per arm, scoring, length and metric, each on every paired cell.
    assert len(rows) == 2 * 2 * len(METRICS)
    assert {(r["arm"], r["scoring"], r["length"]) for r in rows} == {
        (arm, "whole", length) for arm in ("literal", "onehop") for length in ("128", "256")
    }
    assert {r["metric"] for r in rows} == METRICS
    assert {r["cells"] for r in rows} == {str(2 * 2 * 3)}  # groups x orders x positions
    for row in rows:
        assert row["baseline"] == row["current"], row
        if row["baseline"] != "nan":
            assert row["change"] in ZERO, row
            assert row["95% CI"] in ("[+0.00, +0.00]", "[+0.000, +0.000]"), row
        # Only the gated metrics have a verdict: a change of zero is within any allowance.
        gated = row["metric"] in ("AUC", "comparative ratio")
        assert row["verdict"] == ("within allowance" if gated else ""), row
    auc = next(r for r in rows if (r["arm"], r["length"], r["metric"]) == ("literal", "128", "AUC"))
    assert (auc["baseline"], auc["change"]) == (
        gates_table_auc(niah, result, "literal", 128),
        "+0.000",
    )


def gates_table_auc(niah, result: pytest.RunResult, arm: str, length: int) -> str:
    """The AUC point of the summary table (without its interval)."""
    return niah.tables(niah.without_comparisons(result))[arm]["rows"][length]["AUC"].split()[0]


def test_compare_by_path_of_a_saved_run(niah):
    niah.run(*LITERAL, "--niah-save=base", "--niah-storage=store")
    path = niah.pytester.path / "store" / run_key(niah.label, machine_info()) / "base.json.gz"
    result = niah.run(*LITERAL, f"--niah-compare={path}", "--niah-compare-fail=auc:0")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    source, rows = comparison(result, niah.label)
    assert source == str(path)
    assert {r["change"] for r in rows} <= ZERO
    # An allowed drop of 0 holds an unchanged metric.
    assert {r["verdict"] for r in rows if r["metric"] == "AUC"} == {"within allowance"}
    assert gates(niah, result, "literal") == {128: "pass", 256: "pass"}


def test_compare_by_path_of_a_plain_json_file(niah):
    niah.run(*LITERAL, "--niah-json=out/results.json")
    result = niah.run(*LITERAL, "--niah-compare=out/results.json", "--niah-compare-fail=ratio:0%")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    source, rows = comparison(result, niah.label)
    assert source == "out/results.json"
    assert len(rows) == 2 * len(METRICS)
    assert {r["change"] for r in rows} <= ZERO


def test_without_a_fail_expression_the_gates_stay_ungated(niah):
    niah.run(*LITERAL, "--niah-save=base")
    result = niah.run(*LITERAL, "--niah-compare=base")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert gates(niah, result, "literal") == {128: "-", 256: "-"}
    rows = comparison(result, niah.label)[1]
    assert len(rows) == 2 * len(METRICS)
    assert {r["verdict"] for r in rows} == {""}


def test_a_baseline_of_another_grid_is_refused_naming_both_values(niah):
    niah.run(*LITERAL, "--niah-lengths=128", "--niah-save=short")
    result = niah.run(*LITERAL, "--niah-compare=short", "--niah-compare-fail=auc:0.02")
    cause = niah.stopped(result, niah.label)
    assert cause == (
        f"--niah-compare: the baseline ({saved_file(niah, 'short')}) measured something else: "
        "lengths: [128, 256] here, [128] in the baseline. Fix: compare with a run of the same "
        "lengths, or accept the difference (only the cells both runs measured are compared, "
        "and a length where fewer than half of this run's cells pair cannot pass its gate) "
        "with --niah-compare-allow=lengths"
    )
    assert not list(niah.pytester.path.rglob("report.html"))


def test_a_baseline_of_another_seed_is_refused(niah):
    niah.run(*LITERAL, "--niah-seed=7", "--niah-save=seven")
    result = niah.run(*LITERAL, "--niah-compare=seven")
    cause = niah.stopped(result, niah.label)
    assert "measured something else: seed: 42 here, 7 in the baseline." in cause
    assert cause.endswith("--niah-compare-allow=seed")
    # Several differences are all listed, and the fix allows them all.
    result = niah.run(*LITERAL, "--niah-compare=seven", "--niah-positions=2")
    cause = niah.stopped(result, niah.label)
    assert "seed: 42 here, 7 in the baseline; positions: 2 here, 3 in the baseline." in cause
    assert cause.endswith("--niah-compare-allow=seed,positions")
    # Allowing one of them is not enough.
    result = niah.run(
        *LITERAL, "--niah-compare=seven", "--niah-positions=2", "--niah-compare-allow=seed"
    )
    cause = niah.stopped(result, niah.label)
    assert "seed:" not in cause
    assert cause.endswith("--niah-compare-allow=positions")


def test_an_allowed_difference_compares_the_cells_both_runs_measured(niah):
    niah.run(*LITERAL, "--niah-lengths=128", "--niah-save=short")
    result = niah.run(
        *LITERAL,
        "--niah-compare=short",
        "--niah-compare-allow=lengths",
        "--niah-compare-fail=auc:0.02",
    )
    rows = comparison(result, niah.label)[1]
    assert {(r["length"], r["cells"]) for r in rows} == {("128", "12")}
    # TF-IDF fits its word weights on all of a run's documents, so the 256-token haystacks
    # move the cosines at 128 a little; the ranks (ratio, AUC) stay.
    ranks = {r["metric"]: r["change"] for r in rows if r["metric"] in ("AUC", "comparative ratio")}
    assert ranks == {"AUC": "+0.000", "comparative ratio": "+0.000"}
    # 256 tokens has no paired cell: nothing was compared there, an error, never a pass.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=niah.n_cases // 2 + 1, failed=1)
    assert gates(niah, result, "literal") == {128: "pass", 256: "FAIL"}
    [(outcome, message)] = niah.details(niah.without_comparisons(result), "literal")[256]
    assert outcome == "FAIL"
    assert message == (
        "--niah-compare-fail: AUC not compared (paired 0 of 12 cells): no paired cells (no "
        "cell of this arm, scoring "
        "and length is paired with the baseline: the two runs share no cell, e.g. they ran "
        "different --niah-lengths or --niah-groups; an error whatever --niah-inconclusive says; "
        "compare with a baseline that measured it)"
    )
    # The failure names the length.
    assert "model lexical-tfidf, arm literal, scoring whole, length 256:" in result.outlines
    # No inconclusive policy lets it pass, nor only warn.
    for policy in ("pass", "warn"):
        allowed = niah.run(
            *LITERAL,
            "--niah-compare=short",
            "--niah-compare-allow=lengths",
            "--niah-compare-fail=auc:0.02",
            f"--niah-inconclusive={policy}",
        )
        assert allowed.ret == pytest.ExitCode.TESTS_FAILED
        assert gates(niah, allowed, "literal") == {128: "pass", 256: "FAIL"}


def test_each_model_is_compared_with_its_own_run(niah):
    two = ("--niah-model=a=lexical:tfidf", "--niah-model=b=lexical:tfidf")
    niah.run(*LITERAL, *two, "--niah-save=base")
    result = niah.run(*LITERAL, *two, "--niah-compare=base", "--niah-compare-fail=auc:0.02")
    result.assert_outcomes(passed=2 * (niah.n_cases // 2 + 2))
    assert comparison(result, "a")[0] == str(saved_file(niah, "base", "a"))
    assert comparison(result, "b")[0] == str(saved_file(niah, "base", "b"))


def test_a_model_without_a_saved_run_is_a_usage_error(niah):
    niah.run(*LITERAL, "--niah-model=a=lexical:tfidf", "--niah-save=base")
    result = niah.run(
        *LITERAL,
        "--niah-model=a=lexical:tfidf",
        "--niah-model=b=lexical:tfidf",
        "--niah-compare=base",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*'base' is neither a results file nor a run saved for model 'b'*"]
    )


def test_compare_fail_without_compare_is_a_usage_error(niah):
    result = niah.run(*LITERAL, "--niah-compare-fail=auc:0.02")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--niah-compare-fail has nothing to compare with. Fix: add --niah-compare=NAME|PATH*"]
    )


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("auc", "*--niah-compare-fail*'auc' has no ':'*METRIC:AMOUNT*"),
        (
            "bogus:1",
            "*--niah-compare-fail*'bogus:1': unknown metric 'bogus'. Fix: choose from *auc*",
        ),
        ("auc:-1", "*--niah-compare-fail*'auc:-1': the allowed drop must be a finite number >= 0*"),
        ("auc:x", "*--niah-compare-fail*'auc:x'*'x' is not a number*"),
        ("ratio:150%", "*--niah-compare-fail*'ratio:150%'*cannot exceed 100%*"),
        (",", "*--niah-compare-fail*holds no expression*"),
    ],
)
def test_bad_fail_expression_is_a_usage_error_naming_it(niah, expression, says):
    niah.run(*LITERAL, "--niah-save=base")
    result = niah.run(*LITERAL, "--niah-compare=base", f"--niah-compare-fail={expression}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([says])


@pytest.mark.parametrize("content", ["not json", '{"a": 1}'], ids=["not-json", "not-results"])
def test_a_file_that_is_not_a_run_is_a_usage_error(niah, content):
    (niah.pytester.path / "bad.json").write_text(content, encoding="utf-8")
    result = niah.run(*LITERAL, "--niah-compare=bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pytest-niah: *bad.json*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_grid_allowed_to_differ_that_pairs_a_minority_of_cells_cannot_pass(niah):
    """Found: following the refusal's fix (--niah-compare-allow=positions), a run pairing a
    minority of its cells (here the needles at the start) passed on them. It says how many
    cells it paired, and cannot pass: inconclusive, which auto fails."""
    niah.run(*LITERAL, "--niah-positions=5", "--niah-save=five")
    args = (*LITERAL, "--niah-compare=five", "--niah-compare-fail=auc:0.02")
    refused = niah.run(*args)
    assert "(only the cells both runs measured are compared, and a length where fewer than " in (
        niah.stopped(refused, niah.label)
    )
    result = niah.run(*args, "--niah-compare-allow=positions")
    # Of 3 positions only p00 sits at the same depth in a 5-position grid: 4 of 12 cells.
    rows = comparison(result, niah.label)[1]
    assert {(r["length"], r["cells"]) for r in rows} == {("128", "4"), ("256", "4")}
    assert {r["verdict"] for r in rows if r["metric"] == "AUC"} == {"inconclusive"}
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert gates(niah, result, "literal") == {128: "FAIL", 256: "FAIL"}
    [(outcome, message)] = niah.details(niah.without_comparisons(result), "literal")[128]
    assert outcome == "FAIL"
    # TF-IDF weighs words over all of a run's haystacks: the shared cells move a little.
    assert re.match(
        r"--niah-compare-fail: AUC changed [+-]\d\.\d{3} \[\S+, \S+\] \(paired 4 of 12 cells\), "
        r"allowed drop 0\.020; ",
        message,
    ), message
    assert message.endswith(
        ": inconclusive (only 4 of this run's 12 cells at this length are paired with the "
        "baseline: the others may hold a regression; compare with a baseline of this run's grid "
        "(save one with --niah-save))"
    )
    # A policy that passes every inconclusive gate is the user's explicit choice.
    lenient = niah.run(*args, "--niah-compare-allow=positions", "--niah-inconclusive=pass")
    assert lenient.ret == pytest.ExitCode.OK


def test_without_a_bootstrap_every_comparison_gate_is_inconclusive(niah):
    """Found: --niah-bootstrap=0 still bootstrapped comparisons (1000 times) and gave settled
    verdicts; the README says every gate is then inconclusive."""
    niah.run(*LITERAL, "--niah-save=base")
    result = niah.run(
        *LITERAL, "--niah-compare=base", "--niah-compare-fail=auc:0.02", "--niah-bootstrap=0"
    )
    rows = comparison(result, niah.label)[1]
    assert {r["95% CI"] for r in rows} == {"(no CI: bootstrap off)"}
    assert {r["verdict"] for r in rows if r["metric"] == "AUC"} == {"inconclusive"}
    # No change, so auto warns (a point gate would pass it); nothing is settled.
    assert result.ret == pytest.ExitCode.OK
    assert gates(niah, result, "literal") == {128: "warn", 256: "warn"}
    [(outcome, message)] = niah.details(niah.without_comparisons(result), "literal")[128]
    assert outcome == "WARN"
    assert message == (
        "--niah-compare-fail: AUC changed +0.000 (paired 12 of 12 cells), allowed drop 0.020: "
        "inconclusive (no interval: bootstrap off; turn the bootstrap on (--niah-bootstrap))"
    )
