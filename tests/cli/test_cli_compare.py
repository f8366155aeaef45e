"""The command line's ``--compare``: the same comparison, gates and refusals as the plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.cli import main
from pytest_niah.results.niah_results import NiahResults

# -- --compare ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def worse_file(results: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results with every 512-token haystack scoring 3% lower."""
    import dataclasses

    cases = tuple(
        dataclasses.replace(c, cos_qh=c.cos_qh * 0.97) if c.length == 512 else c
        for c in results.cases
    )
    worse = dataclasses.replace(results, cases=cases)
    return worse.save(tmp_path_factory.mktemp("worse") / "worse.json")


def test_summary_with_compare_prints_the_comparison(
    worse_file: Path, results_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["summary", str(worse_file), "--compare", str(results_file)]
    assert main([*argv, "--compare-fail", "sep:0.001"]) == 1  # regressed: the gate fails
    out = capsys.readouterr().out
    assert out.startswith("# ❌ pytest-niah: ")
    assert f"\n\n## Comparison: lexical:tfidf versus {results_file}\n" in out
    header = "| arm     | scoring | length | cells | metric"
    assert header in out
    assert "| regressed |" in out or "regressed |" in out
    assert "Verdicts (separation:0.001): " in out


@pytest.mark.parametrize("command", ["summary", "report"])
def test_compare_fail_exits_1_on_a_regression_like_the_plugin(
    command: str,
    worse_file: Path,
    results_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = ["--out", str(tmp_path / "rep")] if command == "report" else []
    argv = [command, str(worse_file), "--compare", str(results_file), *out]
    assert main([*argv, "--compare-fail", "sep:0.001"]) == 1
    captured = capsys.readouterr()
    assert "regressed" in (
        captured.out + (tmp_path / "rep" / "summary.md").read_text()
        if command == "report"
        else captured.out
    )
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "fail --compare-fail (" in err[0] and "regressed" in err[0]
    if command == "report":  # the report is written before the verdict is returned
        assert (tmp_path / "rep" / "comparison.json").is_file()
    # A generous allowance: every change within it, exit 0; no allowance: nothing gated.
    assert main([*argv, "--compare-fail", "sep:0.5"]) == 0
    assert main(argv) == 0
    assert capsys.readouterr().err == ""


@pytest.fixture(scope="module")
def short_file(results: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same run measured at 128 tokens only: its 512-token length pairs with nothing."""
    import dataclasses

    config = dataclasses.replace(results.config, lengths=(128,))
    short = dataclasses.replace(
        results,
        config=config,
        cases=tuple(c for c in results.cases if c.length == 128),
        negatives=tuple(n for n in results.negatives if n.length == 128),
        tables=tuple(r for r in results.tables if r.length == 128),
        intervals=tuple(r for r in results.intervals if r.length == 128),
    )
    return short.save(tmp_path_factory.mktemp("short") / "short.json")


@pytest.mark.parametrize("command", ["summary", "report"])
def test_compare_fail_fails_a_gated_length_with_no_paired_cells_like_the_plugin(
    command: str,
    short_file: Path,
    results_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Found (issue 21): the exit code and headline counted paired lengths only."""
    out = ["--out", str(tmp_path / "rep")] if command == "report" else []
    argv = [command, str(results_file), "--compare", str(short_file), *out]
    allowed = ["--compare-allow", "lengths", "--compare-fail", "sep:0.5"]
    assert (
        main([*argv, *allowed]) == 1
    )  # 128 within the allowance (both arms); 512 compared nothing
    captured = capsys.readouterr()
    summary = (
        (tmp_path / "rep" / "summary.md").read_text(encoding="utf-8")
        if command == "report"
        else captured.out
    )
    assert summary.startswith("# ❌ pytest-niah: 2 of 4 gates failed (lexical:tfidf)")
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "2 of 4 gated changes fail" in err[0] and "no paired cells" in err[0]


def test_compare_fail_inconclusive_policy_comes_from_the_option_table(
    worse_file: Path, results_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["summary", str(worse_file), "--compare", str(results_file), "--compare-fail"]
    assert main([*argv, "sep:0.001", "--inconclusive", "pass"]) == 1  # regressed still fails
    assert main([*argv, "sep:0.001", "--inconclusive", "maybe"]) == 4
    assert "--inconclusive: " in capsys.readouterr().err


def test_shared_options_take_help_and_default_from_the_option_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pytest_niah.config.options import BY_NAME

    assert main(["summary", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in ("compare-fail", "compare-allow", "inconclusive"):
        option = BY_NAME[name]
        assert f"--{name} {option.metavar}" in out
        assert " ".join(option.help.split()[:6]) in out
        assert f"Default: {option.shown_default()}." in out


def test_report_with_compare_writes_comparison_json(
    worse_file: Path, results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rep"
    assert main(["report", str(worse_file), "--compare", str(results_file), "--out", str(out)]) == 0
    assert (out / "comparison.json").is_file()
    assert 'id="comparison"' in (out / "report.html").read_text(encoding="utf-8")
    assert "comparison.json" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--compare-fail", "auc:0.02"], "--compare-fail and --compare-allow need --compare"),
        (["--compare", "{base}", "--compare", "{base}"], "got 2 baselines for 1 results files"),
        (["--compare", "{base}", "--compare-fail", "auc"], "--compare-fail: 'auc' has no ':'"),
        (["--compare", "{base}", "--compare-allow", "colour"], "--compare-allow: unknown value"),
        (["--compare", "{missing}"], "no such file"),
    ],
)
def test_compare_usage_errors_are_one_line(
    worse_file: Path,
    results_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    args = [a.format(base=results_file, missing=tmp_path / "missing.json") for a in extra]
    assert main(["summary", str(worse_file), *args]) == 4
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_an_incomparable_baseline_is_a_one_line_error(
    results_file: Path, shared_corpus_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128,),
        positions=2,
        bootstrap=0,
        groups=("dietary",),
        seed=7,
    )
    other = run_experiment(config, progress=False).save(tmp_path / "other.json")
    assert main(["summary", str(results_file), "--compare", str(other)]) == 4
    err = capsys.readouterr().err
    assert "measured something else" in err and "seed: 42 here, 7 in the baseline" in err
    assert "Fix: " in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["summary", "report"])
def test_a_refused_comparison_names_this_commands_own_flags(
    command: str,
    short_file: Path,
    results_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Found (issue 31): the offline CLI's refusal named the pytest flag --niah-compare-allow."""
    out = ["--out", str(tmp_path / "rep")] if command == "report" else []
    assert main([command, str(results_file), "--compare", str(short_file), *out]) == 4
    err = capsys.readouterr().err
    assert "--compare: the baseline" in err and "with --compare-allow=lengths" in err
    assert "--niah-" not in err
