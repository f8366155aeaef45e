"""The run store's files: label folder names, saves that never replace by accident, temp files.

- Every label's file name is one-to-one even where file systems ignore case: ``Prod`` and
  ``prod``, and a label that looks like another label's hashed name, get names that differ
  after case folding.
- Two processes saving one run name at once: one saves, the other fails with the fix.
- Temporary files killed writes left in the run store and the snapshot folder are removed
  by the next write there, and readers never take them for runs.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pytest_niah.errors import OutputError
from pytest_niah.files import TMP_MARK
from pytest_niah.naming import label_file_name
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.saved_runs import read_runs
from pytest_niah.results.stale_temps import STALE_AFTER_S
from pytest_niah.results.storage import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import niah_synthetic as synthetic

SAVED_AT = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
GRID = {"lengths": (128, 256), "positions": 3}


@pytest.fixture(scope="module")
def results() -> NiahResults:
    cases, negatives = synthetic.scored(seed=0, **GRID)
    return synthetic.results(cases, negatives, **GRID)


def dead_pid() -> int:
    """The id of a process that cannot be running.

    Above the kernel's pid_max no process can have it; elsewhere, a process that has ended
    (and been reaped). A reaped pid alone can be reused at once on a busy machine whose
    pid_max is small (32,768 here), which made the stale-temp tests flaky under load.
    """
    limit = Path("/proc/sys/kernel/pid_max")
    if limit.exists():
        return int(limit.read_text()) + 1
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


# -- label file names ------------------------------------------------------------------------

# Pairs the old rule filed in one folder on a case-insensitive file system (macOS, Windows):
# both plain and equal but for case; a label spelled like the hashed name of another label
# ("lexical:tfidf" is filed as "lexical-tfidf-8d8f8c25c3") in other case.
COLLIDING = [
    ("Prod", "prod"),
    ("MiniLM", "minilm"),
    ("lexical:tfidf", "lexical-tfidf-8D8F8C25C3"),
    ("lexical:tfidf", "LEXICAL-TFIDF-8d8f8c25c3"),
]


@pytest.mark.parametrize(("one", "two"), COLLIDING)
def test_labels_differing_in_case_or_hash_lookalikes_get_names_apart_after_case_folding(one, two):
    assert label_file_name(one).casefold() != label_file_name(two).casefold()


def test_the_file_name_rule_is_one_to_one_under_case_folding():
    labels = [
        "prod",
        "Prod",
        "PROD",
        "prod.v2",
        "a-b",
        "a:b",
        "a b",
        "A-B",
        "模型",
        "型号",
        ".",
        "..",
        "x-0123456789",
        "X-0123456789",
        "x-abcdef0123",
        "x-ABCDEF0123",
        "l" * 100,
        "L" * 100,
        "l" * 101,
        "lexical:tfidf",
        "lexical-tfidf-8d8f8c25c3",
        "lexical-tfidf-8D8F8C25C3",
    ]
    names = {label: label_file_name(label) for label in labels}
    for one, two in itertools.combinations(labels, 2):
        assert names[one].casefold() != names[two].casefold(), (one, two)
    assert names["prod"] == "prod" and names["l" * 100] == "l" * 100, "plain labels kept"


@pytest.mark.parametrize(("one", "two"), COLLIDING[:1] + COLLIDING[2:3])
def test_a_store_on_a_case_insensitive_disk_keeps_both_labels_apart(results, tmp_path, one, two):
    # What a case-insensitive file system sees: the folder names folded to one case.
    folders = {
        str(RunStore(tmp_path).folder(label).relative_to(tmp_path)).casefold()
        for label in (one, two)
    }
    assert len(folders) == 2
    first = RunStore(tmp_path).save(results, "base", label=one, now=SAVED_AT)
    second = RunStore(tmp_path).save(results, "base", label=two, now=SAVED_AT)
    assert RunStore(tmp_path).resolve("base", one) == first
    assert RunStore(tmp_path).resolve("base", two) == second


# -- saves that race -------------------------------------------------------------------------


def _save_at_once(store: str, barrier: object, answers: object, index: int) -> None:
    cases, negatives = synthetic.scored(seed=index, **GRID)
    run = synthetic.results(cases, negatives, **GRID)
    barrier.wait()  # type: ignore[attr-defined]
    try:
        RunStore(Path(store)).save(run, "nightly", label="m", now=SAVED_AT, commit={})
        answers.put((index, "saved"))  # type: ignore[attr-defined]
    except OutputError as exc:
        answers.put((index, f"refused: {exc} | {exc.hint}"))  # type: ignore[attr-defined]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork")
def test_two_processes_saving_one_name_at_once_one_fails_with_the_fix(tmp_path):
    context = multiprocessing.get_context("fork")
    for round_ in range(6):
        store = tmp_path / f"round-{round_}"
        barrier, answers = context.Barrier(2), context.Queue()
        workers = [
            context.Process(target=_save_at_once, args=(str(store), barrier, answers, i))
            for i in range(2)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
            assert worker.exitcode == 0
        outcomes = dict(answers.get(timeout=10) for _ in workers)
        saved = [i for i, outcome in outcomes.items() if outcome == "saved"]
        assert len(saved) == 1, outcomes
        (refused,) = (o for o in outcomes.values() if o != "saved")
        assert "run 'nightly' of model 'm' exists already" in refused
        assert "--niah-save-overwrite" in refused
        (path,) = RunStore(store).files()
        _, loaded = load_run(path)
        cases, negatives = synthetic.scored(seed=saved[0], **GRID)
        assert loaded.to_json() == synthetic.results(cases, negatives, **GRID).to_json()
        assert sorted(p.name for p in path.parent.iterdir()) == ["nightly.json.gz"], "no temp"


def test_overwrite_still_replaces_and_a_refused_save_leaves_no_temp(results, tmp_path):
    first = RunStore(tmp_path).save(results, "b", label="m", now=SAVED_AT)
    with pytest.raises(OutputError):
        RunStore(tmp_path).save(results, "b", label="m", now=SAVED_AT.replace(year=2025))
    assert sorted(p.name for p in first.parent.iterdir()) == ["b.json.gz"]
    RunStore(tmp_path).save(
        results, "b", label="m", now=SAVED_AT.replace(year=2025), overwrite=True
    )
    assert load_run(first)[0]["saved_at"].startswith("2025")
    assert oct(first.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# -- temporary files of killed writes --------------------------------------------------------


def plant_temps(folder: Path, target: str) -> dict[str, Path]:
    """Temp files beside ``folder/target``: of a dead writer, of a live one (fresh and old)."""
    folder.mkdir(parents=True, exist_ok=True)
    live = os.getppid()  # pytest's parent: alive for the whole test
    temps = {
        "dead": folder / f".{target}{TMP_MARK}{dead_pid()}-abcd1234",
        "live": folder / f".{target}{TMP_MARK}{live}-abcd1234",
        "live but old": folder / f".other-{target}{TMP_MARK}{live}-ef567890",
    }
    for path in temps.values():
        path.write_text('{"run_schema_version": 2, "name": "half', encoding="utf-8")
    old = time.time() - STALE_AFTER_S - 60
    os.utime(temps["live but old"], (old, old))
    return temps


def test_the_next_save_removes_stale_temps_of_any_run_and_readers_ignore_them(results, tmp_path):
    folder = RunStore(tmp_path).folder("m")
    temps = plant_temps(folder, "killed-run.json.gz")
    before = RunStore(tmp_path).save(results, "before", label="m", now=SAVED_AT)
    assert not temps["dead"].exists() and not temps["live but old"].exists()
    assert temps["live"].exists(), "a live writer's temp file is left alone"
    temps["live"].unlink()
    # Readers never take a temp file for a run, even one named like a run's file.
    trap = folder / f".x.json.gz{TMP_MARK}{dead_pid()}-0.json.gz"
    trap.write_text("{", encoding="utf-8")
    assert RunStore(tmp_path).files() == [before]
    assert read_runs(tmp_path) == (read_runs(tmp_path)[0], [])
    assert RunStore(tmp_path).latest("m") == before
    RunStore(tmp_path).save(results, "after", label="m", now=SAVED_AT)
    assert sorted(p.name for p in folder.iterdir()) == ["after.json.gz", "before.json.gz"]


def test_the_next_snapshot_write_removes_stale_temps_of_any_snapshot_file(results, tmp_path):
    from syrupy.data import Snapshot, SnapshotCollection
    from syrupy.extensions.amber.serializer import AmberDataSerializer

    from pytest_niah.results.snapshots import extension_for, metric_table

    temps = plant_temps(tmp_path, "test_other_module.ambr")
    collection = SnapshotCollection(location=str(tmp_path / "test_niah.ambr"))
    data = AmberDataSerializer.serialize(metric_table(results))
    collection.add(Snapshot(name="test_metric_table[m]", data=data))
    extension_for(tmp_path).serializer_class.write_file(collection, merge=False)
    assert not temps["dead"].exists() and not temps["live but old"].exists()
    assert temps["live"].exists()
    temps["live"].unlink()
    # Under pytest-xdist syrupy locks the file it rewrites and leaves its ``.lock`` beside it.
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "test_niah.ambr.lock")
    assert left == ["test_niah.ambr"]


def test_without_hard_links_a_save_still_refuses_an_existing_run(results, tmp_path, monkeypatch):
    def no_links(source: object, target: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    first = RunStore(tmp_path).save(results, "b", label="m", now=SAVED_AT)
    assert load_run(first)[0]["name"] == "b"
    with pytest.raises(OutputError, match="exists already"):
        RunStore(tmp_path).save(results, "b", label="m", now=SAVED_AT.replace(year=2025))
    assert load_run(first)[0]["saved_at"].startswith("2024")
    assert sorted(p.name for p in first.parent.iterdir()) == ["b.json.gz"], "no temp file"


def test_a_temp_file_of_this_process_is_left_to_its_writer(results, tmp_path):
    # Another thread of this process may be writing it right now.
    folder = RunStore(tmp_path).folder("m")
    folder.mkdir(parents=True)
    mine = folder / f".other.json{TMP_MARK}{os.getpid()}-abcd1234"
    mine.write_text("{", encoding="utf-8")
    RunStore(tmp_path).save(results, "b", label="m", now=SAVED_AT)
    assert mine.exists()
