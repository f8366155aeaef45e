"""--niah-save and --niah-storage: each model's results filed as a named run with provenance."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_niah.results.provenance import machine_info
from pytest_niah.results.results_schema import RUN_SCHEMA_VERSION
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.store_layout import run_key

# The tiny grid with the literal arm only: every case passes, quickly.
LITERAL = ("--niah-arms=literal", "--niah-lengths=128,256")


def saved_file(store: Path, label: str, name: str) -> Path:
    """Where a run of ``label`` saved on this machine lives."""
    return store / run_key(label, machine_info()) / f"{name}.json.gz"


def store_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.json.gz"))


def test_save_writes_a_run_under_the_rootdir(niah):
    before = datetime.now(timezone.utc).replace(microsecond=0)
    result = niah.run("--niah-save=base", "--niah-json=plain.json")
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    store = niah.pytester.path / ".niah" / "runs"
    path = saved_file(store, niah.label, "base")
    # <rootdir>/.niah/runs/<label>/<machine>/base.json.gz, and nothing else in the store.
    assert path.relative_to(store).parts[0] == "lexical-tfidf"
    assert path.parent.name == run_key(niah.label, machine_info()).split("/")[1]
    assert store_files(store) == [path]

    raw = json.loads(gzip.decompress(path.read_bytes()))
    assert set(raw) == {
        "run_schema_version",
        "name",
        "label",
        "saved_at",
        "machine",
        "commit",
        "results",
    }
    meta, results = load_run(path)
    assert meta["run_schema_version"] == RUN_SCHEMA_VERSION
    assert (meta["name"], meta["label"]) == ("base", "lexical-tfidf")
    assert meta["machine"] == machine_info()
    assert meta["commit"] == {}  # the pytester folder is not a git checkout
    saved_at = datetime.fromisoformat(meta["saved_at"])
    assert saved_at.tzinfo is not None
    assert before <= saved_at <= datetime.now(timezone.utc) + timedelta(seconds=1)
    # The saved results are the run's results, the same the --niah-json file holds.
    assert results.model.name == "lexical:tfidf"
    assert results.config.lengths == (128, 256)
    assert len(results.cases) == niah.n_cases
    assert results.to_json() == (niah.pytester.path / "plain.json").read_text(encoding="utf-8")


def test_saving_a_name_again_needs_save_overwrite(niah):
    niah.run(*LITERAL, "--niah-save=base").assert_outcomes(passed=niah.n_cases // 2 + 2)
    store = niah.pytester.path / ".niah" / "runs"
    path = saved_file(store, niah.label, "base")
    refused = niah.run(*LITERAL, "--niah-save=base", "--niah-seed=7")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines([f"*run 'base' of model*exists already ({path})*"])
    refused.stderr.fnmatch_lines(["*--niah-save-overwrite*"])
    assert load_run(path)[1].config.seed != 7  # checked before the run: nothing was replaced
    niah.run(
        *LITERAL, "--niah-save=base", "--niah-seed=7", "--niah-save-overwrite"
    ).assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert store_files(store) == [path]
    assert load_run(path)[1].config.seed == 7


def test_an_empty_save_name_is_a_usage_error_not_a_silent_skip(niah):
    result = niah.run(*LITERAL, "--niah-save=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*argument --niah-save: '' is empty*Fix: give a value, or leave --niah-save out*"]
    )
    assert "passed" not in result.stdout.str()  # refused before any test ran


def test_the_summary_ends_with_the_files_written(niah, tmp_path, monkeypatch):
    step = tmp_path / "step_summary.md"
    step.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    result = niah.run(*LITERAL, "--niah-save=base", "--niah-json=out.json", "--niah-report=rep")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    lines = result.outlines
    start = lines.index(next(line for line in lines if "pytest-niah: files written" in line))
    section = [line for line in lines[start + 1 :] if line.startswith("/")]
    # The step summary is listed too, marked as appended to (earlier steps' text is kept).
    assert f"{step} (appended: GITHUB_STEP_SUMMARY)" in section
    listed = {Path(line.removesuffix(" (appended: GITHUB_STEP_SUMMARY)")) for line in section}
    store = niah.pytester.path / ".niah" / "runs"
    assert saved_file(store, niah.label, "base") in listed
    assert niah.pytester.path / "out.json" in listed
    assert niah.pytester.path / "rep" / "report.html" in listed
    assert step in listed and step.read_text(encoding="utf-8").startswith("earlier step\n")
    assert all(path.is_file() for path in listed)


def test_compare_previous_takes_the_newest_earlier_run(niah):
    niah.run(*LITERAL, "--niah-save=one", "--niah-seed=7")
    niah.run(*LITERAL, "--niah-save=two")
    result = niah.run(*LITERAL, "--niah-compare=previous", "--niah-save=three")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    store = niah.pytester.path / ".niah" / "runs"
    result.stdout.fnmatch_lines([f"*versus {saved_file(store, niah.label, 'two')}*"])
    # The run saved in this session is not its own "previous": the next run compares with it.
    again = niah.run(*LITERAL, "--niah-compare=previous")
    again.stdout.fnmatch_lines([f"*versus {saved_file(store, niah.label, 'three')}*"])


def test_compare_previous_without_a_saved_run_is_a_usage_error(niah):
    result = niah.run(*LITERAL, "--niah-compare=previous")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--niah-compare=previous: no run of model*--niah-save=NAME*"])


def test_other_names_sit_beside_each_other(niah):
    niah.run(*LITERAL, "--niah-save=first")
    niah.run(*LITERAL, "--niah-save=second")
    store = niah.pytester.path / ".niah" / "runs"
    assert store_files(store) == [
        saved_file(store, niah.label, "first"),
        saved_file(store, niah.label, "second"),
    ]


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_storage_option_moves_the_store(niah, tmp_path, where):
    target = "my-store" if where == "relative" else str(tmp_path / "elsewhere" / "store")
    result = niah.run(*LITERAL, "--niah-save=base", f"--niah-storage={target}")
    result.assert_outcomes(passed=niah.n_cases // 2 + 2)
    store = niah.pytester.path / target if where == "relative" else Path(target)
    assert store_files(store) == [saved_file(store, niah.label, "base")]
    assert not (niah.pytester.path / ".niah").exists()


def test_two_models_save_two_files(niah):
    result = niah.run(
        *LITERAL, "--niah-model=a=lexical:tfidf", "--niah-model=b=lexical:tfidf", "--niah-save=x"
    )
    result.assert_outcomes(passed=2 * (niah.n_cases // 2 + 2))
    store = niah.pytester.path / ".niah" / "runs"
    a, b = saved_file(store, "a", "x"), saved_file(store, "b", "x")
    assert store_files(store) == [a, b]
    assert load_run(a)[0]["label"] == "a"
    assert load_run(b)[0]["label"] == "b"
    assert load_run(a)[1].to_json() == load_run(b)[1].to_json()


def test_nothing_is_saved_without_results(niah):
    niah.run(*LITERAL, "--niah-save=base", "--collect-only")
    niah.run(*LITERAL, "--niah-save=base", "-k", "no-such-test")
    assert not (niah.pytester.path / ".niah").exists()


def test_no_store_without_the_option(niah):
    niah.run(*LITERAL).assert_outcomes(passed=niah.n_cases // 2 + 2)
    assert not (niah.pytester.path / ".niah").exists()


@pytest.mark.parametrize("name", ["a/b", ".."])
def test_a_name_that_is_not_a_file_name_is_a_usage_error(niah, name):
    result = niah.run(*LITERAL, f"--niah-save={name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*run name {name!r}*plain file name*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (niah.pytester.path / ".niah").exists()


requires_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _clean_checkout(path: Path) -> str:
    _git(path, "init", "-q")
    _git(path, "commit", "-q", "--allow-empty", "-m", "start")
    return _git(path, "rev-parse", "HEAD")


@requires_git
def test_the_commit_of_a_git_checkout_is_recorded(niah):
    head = _clean_checkout(niah.pytester.path)
    niah.run(*LITERAL, "--niah-save=base")
    meta, _ = load_run(saved_file(niah.pytester.path / ".niah" / "runs", niah.label, "base"))
    assert meta["commit"]["id"] == head
    assert meta["commit"]["branch"] == _git(niah.pytester.path, "rev-parse", "--abbrev-ref", "HEAD")
    assert meta["commit"]["dirty"] is False


@requires_git
def test_earlier_saved_runs_do_not_make_the_checkout_dirty(niah):
    _clean_checkout(niah.pytester.path)
    niah.run(*LITERAL, "--niah-save=first")
    niah.run(*LITERAL, "--niah-save=second")
    store = niah.pytester.path / ".niah" / "runs"
    assert load_run(saved_file(store, niah.label, "first"))[0]["commit"]["dirty"] is False
    assert load_run(saved_file(store, niah.label, "second"))[0]["commit"]["dirty"] is False


def test_ini_storage_is_relative_to_the_ini_file(niah, monkeypatch):
    niah.pytester.makeini("[pytest]\nniah_storage = ini-store\n")
    sub = niah.pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    niah.run(*LITERAL, "--niah-save=base").assert_outcomes(passed=niah.n_cases // 2 + 2)
    store = niah.pytester.path / "ini-store"
    assert store_files(store) == [saved_file(store, niah.label, "base")]
    assert not (sub / "ini-store").exists()
