"""The ``pytest-niah`` command line: report and summary from saved results files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.cli import main
from pytest_niah.results.niah_results import NiahResults


@pytest.fixture(scope="module")
def results(shared_corpus_dir: Path) -> NiahResults:
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128, 512),
        positions=3,
        arms=("onehop", "literal"),
        bootstrap=50,
        groups=("dietary", "location"),
    )
    return run_experiment(config)


@pytest.fixture(scope="module")
def results_file(results: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return results.save(tmp_path_factory.mktemp("results") / "lexical.json")


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_niah", *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
        check=False,
    )


def test_report_writes_the_files(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert main(["report", str(results_file), "--out", str(out)]) == 0
    names = ["cases.csv", "report.html", "results.json", "summary.md"]
    assert sorted(p.name for p in out.iterdir()) == names
    printed = capsys.readouterr().out.splitlines()
    assert sorted(Path(line).name for line in printed) == names


def test_report_of_several_files_is_a_comparison(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp"
    argv = ["report", str(results_file), str(results_file), "--out", str(out)]
    assert main([*argv, "--label", "before", "--label", "after"]) == 0
    assert (out / "results.before.json").is_file()
    assert (out / "results.after.json").is_file()
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'alt="AUC: before, after"' in html


def test_report_defaults_to_niah_report_folder(
    results_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(results_file)]) == 0
    assert (tmp_path / "niah-report" / "report.html").is_file()


def test_summary_prints_the_table(results_file: Path, results: NiahResults) -> None:
    done = run_module("summary", str(results_file))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# pytest-niah report\n")
    assert "| length | norm.sim |" in done.stdout
    assert done.stdout.count("| length |") == len(results.variants)
    assert "### lexical:tfidf: arm literal, scoring whole" in done.stdout
    assert done.stderr == ""


def test_summary_in_process(results_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(results_file), "--label", "mine"]) == 0
    assert "## mine" in capsys.readouterr().out


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "results.json"
    done = run_module("report", str(missing), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert str(missing) in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json", "not valid JSON"),
        ('{"schema_version": 1}', "not a pytest-niah results file"),
        ('{"schema_version": 99}', "schema version"),
        ("[1, 2]", "not a results object"),
    ],
)
def test_invalid_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, reason: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert main(["summary", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pytest-niah: error: ")
    assert str(bad) in err and reason in err
    assert len(err.strip().splitlines()) == 1


def test_wrong_label_count_is_a_usage_error(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", str(results_file), "--label", "a", "--label", "b"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert "2 labels for 1 results" in capsys.readouterr().err


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: pytest-niah" in capsys.readouterr().err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--help"]) == 0
    assert "--out DIR" in capsys.readouterr().out


def test_console_script(results_file: Path) -> None:
    script = shutil.which("pytest-niah")
    if script is None:
        pytest.skip("the pytest-niah console script is not installed (pip install -e .)")
    done = subprocess.run(
        [script, "summary", str(results_file)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "| length |" in done.stdout
