"""The ``pytest-niah`` command line: report and summary from saved results files.

Comparing with a baseline (``--compare``) is tested in test_cli_compare.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_niah.cli import main
from pytest_niah.results.niah_results import NiahResults


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
    assert done.stdout.startswith("# ⚠️ pytest-niah: nothing gated (1 model measured")
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
    assert done.returncode == 4
    assert str(missing) in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "where", "reason", "fix"),
    [
        ("not json", "at $,", "invalid JSON", "write the file again"),
        ('{"schema_version": 1}', "at $.schema_version,", "schema version 1 is not 2", "again"),
        ('{"schema_version": 99}', "at $.schema_version,", "schema version 99 is not", "again"),
        ("[1, 2]", "at $,", "input should be an object", "write the file again"),
        ('{"schema_version": 2}', "at $.config,", "required key missing", "is required"),
        ('{"run_schema_version": 2}', "at $.name,", "not a valid pytest-niah saved run", "is"),
        ("[" * 100_000, "", "", "write the file again"),
        ("\ufeff\x00\udcff", "", "", ""),
    ],
    ids=["not-json", "old-version", "new-version", "list", "empty", "empty-run", "deep", "bytes"],
)
def test_invalid_file_is_a_one_line_error(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    where: str,
    reason: str,
    fix: str,
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert main(["summary", str(bad)]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"pytest-niah: error: {bad}: ")
    # The file, the JSON path inside it, what is wrong, and the fix.
    assert where in err and reason in err
    assert ". Fix: " in err and fix in err.split(". Fix: ", 1)[1]
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_a_folder_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summary", str(tmp_path)]) == 4
    err = capsys.readouterr().err
    assert err == f"pytest-niah: error: {tmp_path}: is a folder, not a results file. Fix: " + (
        "give a results file inside it, e.g. its results.json\n"
    )


def test_a_path_with_a_line_break_is_still_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "two\nlines.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["summary", str(bad)]) == 4
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "two lines.json" in err


def test_a_saved_run_is_read_like_a_results_file(
    results: NiahResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_niah.results.storage import RunStore

    saved = RunStore(tmp_path / "runs").save(results, "base", label="lexical")
    assert main(["summary", str(saved), "--label", "saved"]) == 0
    out = capsys.readouterr().out
    assert "## saved\n" in out and "| length |" in out


def test_wrong_label_count_is_a_usage_error(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["report", str(results_file), "--label", "a", "--label", "b"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 4
    assert "--label: got 2 labels for 1 results" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_niah import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"pytest-niah {__version__}\n"
    done = run_module("--version")
    assert done.returncode == 0 and done.stdout == f"pytest-niah {__version__}\n"


def test_top_level_help_lists_commands_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for text in ("report", "summary", "options", "--version", "Exit codes"):
        assert text in out


def test_options_prints_the_option_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["options"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| option | ini | env | default | meaning |\n")
    assert "`--niah-report`" in out


def test_an_unwritable_out_folder_is_a_one_line_error(
    results_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("mine", encoding="utf-8")
    assert main(["report", str(results_file), "--out", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pytest-niah: error: cannot create the report folder ")
    assert str(blocker / "out") in err and len(err.strip().splitlines()) == 1
    assert blocker.read_text(encoding="utf-8") == "mine"


def test_an_unwritable_step_summary_is_a_one_line_error(
    results_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder
    out = tmp_path / "out"
    assert main(["report", str(results_file), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "GITHUB_STEP_SUMMARY" in err and f"the report itself was written to {out}" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["report", str(results_file), "--out", str(out), "--no-step-summary"]) == 0


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 4
    assert "usage: pytest-niah" in capsys.readouterr().err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--help"]) == 0
    assert "--out DIR" in capsys.readouterr().out


def test_console_script(results_file: Path) -> None:
    # This interpreter's script, whether its environment is activated or not.
    script = shutil.which("pytest-niah", path=str(Path(sys.executable).parent))
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


class ClosedPipe:
    """A stdout whose reader went away (``pytest-niah summary r.json | head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise OSError("no file descriptor")


def test_a_closed_pipe_ends_quietly(
    results_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["summary", str(results_file)]) == 1
    assert capsys.readouterr().err == ""
