"""--niah-compare: a run against a saved run or a results file, paired on identical cells."""

from __future__ import annotations

import re

import pytest

from pytest_niah.results.storage import machine_info, run_key

# The literal arm alone: every case passes, every metric is defined at both lengths.
LITERAL = ("--niah-arms=literal",)
ZERO = {"+0.000", "+0.0000"}


def saved_file(niah, name: str, label: str | None = None):
    label = label or niah.label
    return niah.pytester.path / ".niah" / "runs" / run_key(label, machine_info()) / f"{name}.json"


def gates(niah, result: pytest.RunResult, arm: str, label: str | None = None) -> dict[int, str]:
    return niah.gates(niah.without_comparisons(result), arm, label)


def comparison(result: pytest.RunResult, label: str) -> tuple[str, list[dict[str, str]]]:
    """The baseline named by ``LABEL versus SOURCE:`` and the table rows under it."""
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{label} versus "))
    source = lines[start].removeprefix(f"{label} versus ").removesuffix(":")
    table = []
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        table.append(line.strip())
    header = re.split(r"\s{2,}", table[0])
    assert header == [
        "arm",
        "scoring",
        "length",
        "metric",
        "baseline",
        "current",
        "delta",
        "95% CI",
    ]
    rows = []
    for line in table[1:]:
        cells = re.split(r"\s{2,}", line)
        rows.append(dict(zip(header, cells, strict=True)))
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
    # One row per arm, scoring, length and metric.
    assert len(rows) == 2 * 2 * 5
    assert {(r["arm"], r["scoring"], r["length"]) for r in rows} == {
        (arm, "whole", length) for arm in ("literal", "onehop") for length in ("128", "256")
    }
    assert {r["metric"] for r in rows} == {
        "normalized similarity",
        "comparative ratio",
        "AUC",
        "separation",
        "effect size",
    }
    for row in rows:
        assert row["baseline"] == row["current"], row
        if row["baseline"] != "nan":
            assert row["delta"] in ZERO, row
    auc = next(r for r in rows if (r["arm"], r["length"], r["metric"]) == ("literal", "128", "AUC"))
    assert (auc["baseline"], auc["delta"]) == ("1.000", "+0.000")


def test_compare_by_path_of_a_saved_run(niah):
    niah.run(*LITERAL, "--niah-save=base", "--niah-storage=store")
    path = niah.pytester.path / "store" / run_key(niah.label, machine_info()) / "base.json"
    result = niah.run(*LITERAL, f"--niah-compare={path}", "--niah-compare-fail=auc:0")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    source, rows = comparison(result, niah.label)
    assert source == str(path)
    assert {r["delta"] for r in rows} <= ZERO


def test_compare_by_path_of_a_plain_json_file(niah):
    niah.run(*LITERAL, "--niah-json=out/results.json")
    result = niah.run(*LITERAL, "--niah-compare=out/results.json", "--niah-compare-fail=ratio:0%")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    source, rows = comparison(result, niah.label)
    assert source == "out/results.json"
    assert len(rows) == 2 * 5
    assert {r["delta"] for r in rows} <= ZERO


def test_without_a_fail_expression_the_gates_stay_ungated(niah):
    niah.run(*LITERAL, "--niah-save=base")
    result = niah.run(*LITERAL, "--niah-compare=base")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert gates(niah, result, "literal") == {128: "-", 256: "-"}
    assert comparison(result, niah.label)[1]


def test_only_the_cells_both_runs_measured_are_compared(niah):
    niah.run(*LITERAL, "--niah-lengths=128", "--niah-save=short")
    result = niah.run(*LITERAL, "--niah-compare=short", "--niah-compare-fail=auc:0.02")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    rows = comparison(result, niah.label)[1]
    assert {r["length"] for r in rows} == {"128"}
    assert gates(niah, result, "literal") == {128: "pass", 256: "pass"}


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
