from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.errors import CompareError, ConfigError, OutputError, ResultsError
from pytest_niah.experiment import run_experiment
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.provenance import commit_info, machine_info
from pytest_niah.results.results_schema import RUN_SCHEMA_VERSION
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.storage import RunStore, default_store_dir
from pytest_niah.results.store_layout import run_key

LABEL = "lexical:tfidf"
SAVED_AT = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def results(shared_corpus_dir) -> NiahResults:
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01", "medical-02", "vehicle-03"),
        lengths=(128,),
        positions=3,
        arms=("literal",),
        bootstrap=0,
    )
    return run_experiment(config)


@pytest.fixture
def no_outer_repo(tmp_path, monkeypatch) -> Path:
    """tmp_path, with git kept from finding a checkout above it."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    return tmp_path


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(path: Path) -> str:
    """A git repo at ``path`` on branch ``trunk`` with one commit; returns the commit id."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    git(path, "symbolic-ref", "HEAD", "refs/heads/trunk")
    (path / "README").write_text("hello\n")
    git(path, "add", "README")
    git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "first")
    return git(path, "rev-parse", "HEAD")


# -- machine and commit ----------------------------------------------------------------------


def test_machine_info_names_this_machine_as_strings():
    info = machine_info()
    for key in ("node", "system", "release", "machine", "python_implementation"):
        assert key in info
    assert info["python_version"].count(".") == 2
    assert int(info["cpu_count"]) >= 1
    assert all(isinstance(v, str) for v in info.values())


def test_run_key_is_a_safe_model_folder_then_machine_folder():
    machine = {
        "system": "Linux",
        "machine": "x86_64",
        "python_implementation": "CPython",
        "python_version": "3.11.7",
    }
    assert run_key("packaged-minilm", machine) == "packaged-minilm/Linux-x86_64-cp311"
    assert run_key("lexical:tfidf", machine) == "lexical-tfidf-8d8f8c25c3/Linux-x86_64-cp311"
    # A hub name's slash must not add a folder level.
    assert run_key("org/My Model", machine) == "org-My-Model-8b8b0af204/Linux-x86_64-cp311"
    pypy = {**machine, "python_implementation": "PyPy", "python_version": "3.10.14"}
    assert run_key("m", pypy) == "m/Linux-x86_64-pp310"
    assert run_key("m", {}) == "m/unknown-unknown-py"


def test_default_store_dir(tmp_path):
    assert default_store_dir(tmp_path) == tmp_path / ".niah" / "runs"


def test_commit_info_in_a_git_repo(no_outer_repo):
    repo = no_outer_repo / "repo"
    sha = make_repo(repo)
    info = commit_info(repo)
    assert info == {"id": sha, "branch": "trunk", "dirty": False}
    assert re.fullmatch(r"[0-9a-f]{40}", str(info["id"]))
    # Untracked files (saved runs, reports) do not count; a changed tracked file does.
    (repo / "new.txt").write_text("untracked\n")
    assert commit_info(repo)["dirty"] is False
    (repo / "README").write_text("changed\n")
    assert commit_info(repo)["dirty"] is True
    # From a subfolder, git finds the checkout above it.
    (repo / "sub").mkdir()
    assert commit_info(repo / "sub")["id"] == sha


def test_commit_info_is_empty_outside_a_repo_and_never_raises(no_outer_repo, monkeypatch):
    assert commit_info(no_outer_repo) == {}
    assert commit_info(no_outer_repo / "missing-folder") == {}
    empty = no_outer_repo / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert commit_info(empty) == {}, "a repo without a commit has no commit to record"
    monkeypatch.setenv("PATH", str(no_outer_repo / "no-bin"))
    assert commit_info(no_outer_repo) == {}, "git missing"


# -- save, resolve, load -----------------------------------------------------------------------


def test_save_resolve_load_round_trip(results, tmp_path):
    store = tmp_path / "runs"
    path = RunStore(store).save(results, "baseline", label=LABEL, now=SAVED_AT)
    assert path == store / run_key(LABEL, machine_info()) / "baseline.json.gz"
    assert sorted(p.name for p in path.parent.iterdir()) == ["baseline.json.gz"], "no temp files"
    assert RunStore(store).resolve("baseline", LABEL) == path

    meta, loaded = load_run(path)
    assert loaded.to_json() == results.to_json()
    assert meta["run_schema_version"] == RUN_SCHEMA_VERSION
    assert (meta["name"], meta["label"]) == ("baseline", LABEL)
    assert meta["saved_at"] == "2024-01-02T03:04:05+00:00"
    assert meta["machine"] == machine_info()
    assert "commit" in meta and "results" not in meta


def test_saving_a_name_again_is_refused_unless_overwrite_is_asked_for(results, tmp_path):
    first = RunStore(tmp_path).save(results, "b", label=LABEL, now=SAVED_AT)
    later = datetime(2025, 6, 1, tzinfo=timezone.utc)
    with pytest.raises(OutputError, match=r"exists already.*--niah-save-overwrite") as caught:
        RunStore(tmp_path).save(results, "b", label=LABEL, now=later)
    assert str(first) in str(caught.value)
    assert load_run(first)[0]["saved_at"].startswith("2024-01-02")  # the old run is intact
    second = RunStore(tmp_path).save(results, "b", label=LABEL, now=later, overwrite=True)
    assert first == second
    assert load_run(second)[0]["saved_at"].startswith("2025-06-01")


@pytest.mark.parametrize(
    "labels", [("模型", "型号"), (".", ".."), ("a/b", "a-b"), ("a b", "a_b", "a-b")]
)
def test_labels_that_sanitise_alike_get_folders_of_their_own_inside_the_store(
    results, tmp_path, labels
):
    paths = [RunStore(tmp_path).save(results, "base", label=label) for label in labels]
    assert len({p.parent for p in paths}) == len(labels)
    for label, path in zip(labels, paths, strict=True):
        assert path.resolve().is_relative_to(tmp_path.resolve())
        assert RunStore(tmp_path).resolve("base", label) == path
        assert load_run(path)[0]["label"] == label


def test_previous_is_the_newest_run_saved_before_this_session(results, tmp_path):
    RunStore(tmp_path).save(results, "first", label=LABEL, now=SAVED_AT)
    newer = RunStore(tmp_path).save(results, "second", label=LABEL, now=SAVED_AT.replace(year=2025))
    RunStore(tmp_path).save(results, "other", label="other-model", now=SAVED_AT.replace(year=2026))
    assert RunStore(tmp_path).resolve("previous", LABEL) == newer
    started = SAVED_AT.replace(month=6)
    older = RunStore(tmp_path).resolve("previous", LABEL, before=started)
    assert older.name == "first.json.gz"
    with pytest.raises(CompareError, match=r"no run of model 'nobody'.*--niah-save"):
        RunStore(tmp_path).resolve("previous", "nobody")


def test_saved_run_records_the_commit_of_the_project_it_lives_in(
    results, no_outer_repo, monkeypatch
):
    repo = no_outer_repo / "project"
    sha = make_repo(repo)
    monkeypatch.chdir(no_outer_repo)  # the commit comes from the store, not the cwd
    path = RunStore(default_store_dir(repo)).save(results, "base", label=LABEL)
    commit = load_run(path)[0]["commit"]
    assert commit["id"] == sha
    assert commit["branch"] == "trunk"


def test_saved_at_defaults_to_now_in_utc(results, tmp_path):
    path = RunStore(tmp_path).save(results, "now", label=LABEL)
    saved = datetime.fromisoformat(load_run(path)[0]["saved_at"])
    assert saved.utcoffset().total_seconds() == 0
    assert abs((datetime.now(timezone.utc) - saved).total_seconds()) < 60


@pytest.mark.parametrize("name", ["", "   ", "a/b", "../up", "a\\b", "..", "."])
def test_names_with_path_separators_or_empty_are_rejected(results, tmp_path, name):
    with pytest.raises(ConfigError, match="run name") as info:
        RunStore(tmp_path).save(results, name, label=LABEL)
    assert repr(name) in str(info.value)
    assert not any(tmp_path.rglob("*.json*"))


def test_resolve_prefers_this_machine_then_the_newest_other(results, tmp_path):
    store = tmp_path / "runs"
    mine = RunStore(store).save(results, "baseline", label=LABEL, now=SAVED_AT)
    model_dir = store / run_key(LABEL, machine_info()).split("/")[0]
    # The newest by save time, not by file time or folder name ("cp312" sorts before "cp39").
    newer, older = model_dir / "Other-arm64-cp312", model_dir / "Other-arm64-cp39"
    for folder, year, mtime in ((newer, 2026, 1_000_000), (older, 2025, 2_000_000)):
        folder.mkdir()
        data = json.loads(gzip.decompress(mine.read_bytes()))
        data["saved_at"] = SAVED_AT.replace(year=year).isoformat()
        (folder / "baseline.json").write_text(json.dumps(data))
        os.utime(folder / "baseline.json", (mtime, mtime))

    assert RunStore(store).resolve("baseline", LABEL) == mine, "this machine's first"
    mine.unlink()
    assert RunStore(store).resolve("baseline", LABEL) == newer / "baseline.json"


def test_resolve_looks_only_at_this_models_runs(results, tmp_path):
    RunStore(tmp_path).save(results, "baseline", label="other-model")
    with pytest.raises(CompareError, match="other-model/"):
        RunStore(tmp_path).resolve("baseline", LABEL)


def test_resolve_accepts_an_existing_file_path(results, tmp_path):
    bare = results.save(tmp_path / "elsewhere" / "niah.json")
    assert RunStore(tmp_path / "runs").resolve(str(bare), LABEL) == bare


def test_not_found_lists_the_available_runs(results, tmp_path):
    store = tmp_path / "runs"
    with pytest.raises(CompareError) as info:
        RunStore(store).resolve("baseline", LABEL)
    assert "'baseline'" in str(info.value)
    assert "no runs are saved" in str(info.value)

    RunStore(store).save(results, "v1", label=LABEL)
    RunStore(store).save(results, "v2", label=LABEL)
    for ref in ("baseline", "missing/file.json"):
        with pytest.raises(CompareError) as info:
            RunStore(store).resolve(ref, LABEL)
        message = str(info.value)
        assert repr(ref) in message
        key = run_key(LABEL, machine_info())
        assert f"{key}/v1" in message and f"{key}/v2" in message


def test_a_bare_niah_json_file_loads_with_empty_metadata(results, tmp_path):
    path = results.save(tmp_path / "niah.json")
    meta, loaded = load_run(path)
    assert meta == {}
    assert loaded.to_json() == results.to_json()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{not json", r"at \$, invalid JSON"),
        ("[1, 2]", r"results file: at \$, input should be an object"),
        ('{"hello": 1}', r"at \$\.schema_version, required key missing"),
        ('{"run_schema_version": 99, "results": {}}', r"saved-run schema version 99 is not 2"),
        ('{"run_schema_version": 1, "results": {}}', r"saved-run schema version 1 is not 2"),
        ('{"run_schema_version": 2, "name": "x"}', r"saved run: at \$\.label, required key"),
        (
            '{"run_schema_version": 2, "results": {"schema_version": 1}}',
            r"at \$\.results\.schema_version, results schema version 1 is not 2",
        ),
        ('{"run_schema_version": "2"}', r"at \$\.run_schema_version, input should be a valid"),
    ],
)
def test_a_bad_file_is_a_results_error_naming_it(tmp_path, text, why):
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(ResultsError, match=why) as info:
        load_run(path)
    assert str(path) in str(info.value)


def test_a_bad_saved_run_names_the_json_path_inside_its_results(results, tmp_path):
    path = RunStore(tmp_path).save(results, "base", label=LABEL)
    data = json.loads(gzip.decompress(path.read_bytes()))
    data["results"]["cases"][2]["cos_qh"] = "high"
    data["commit"]["when"] = float("nan")
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError) as info:
        load_run(path)
    message = str(info.value)
    assert message.startswith(f"{path}: not a valid pytest-niah saved run: at ")
    assert "$.commit" in message or "$.results.cases[2].cos_qh" in message
    assert "(and 1 more problems)" in message


def test_a_saved_run_round_trips_every_bit(results, tmp_path, frozen):
    _, loaded = load_run(RunStore(tmp_path).save(results, "exact", label=LABEL))
    assert frozen(loaded) == frozen(results)


def test_a_missing_file_is_a_results_error_naming_it(tmp_path):
    path = tmp_path / "gone.json"
    with pytest.raises(ResultsError, match="cannot read") as info:
        load_run(path)
    assert str(path) in str(info.value)


def test_a_saved_run_is_strict_json_without_nan(results, tmp_path):
    path = RunStore(tmp_path).save(results, "strict", label=LABEL)
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in file"))
    assert data["results"] == json.loads(results.to_json())


def test_the_store_has_one_api_its_methods():
    # Found (#34.3): save_run, run_path, resolve_run, run_files and latest_run repeated
    # RunStore's methods as functions. Reading any run file (run_reading.load_run) and naming
    # a folder (store_layout.run_key, default_store_dir) are not the store's: nothing a
    # method does, so no function stands beside the class.
    import inspect

    from pytest_niah.results import storage

    functions = {
        name
        for name, value in vars(storage).items()
        if inspect.isfunction(value)
        and value.__module__ == storage.__name__
        and not name.startswith("_")
    }
    assert functions == set()
    methods = {name for name in vars(RunStore) if not name.startswith("_")}
    assert {"save", "target", "resolve", "files", "headers", "latest"} <= methods
    assert not {f"{m}_run" for m in methods} & set(vars(storage))
