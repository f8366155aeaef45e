"""Saved runs are gzip-compressed JSON, the same bytes for the same run (issue 22, item 11).

Runs that earlier versions saved as plain ``<name>.json`` still load, resolve (by name and
as ``previous``) and appear in the history beside the compressed ones.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from pytest_niah.cli import main
from pytest_niah.config.niah import NiahConfig
from pytest_niah.errors import CompareError, OutputError, ResultsError
from pytest_niah.experiment import run_experiment
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.run_file import run_name_of
from pytest_niah.results.run_history import load_history
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.saved_runs import read_runs
from pytest_niah.results.storage import RunStore

LABEL = "lexical:tfidf"
SAVED_AT = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
COMMIT = {"id": "a" * 40, "branch": "main", "dirty": False}


@pytest.fixture(scope="module")
def results(shared_corpus_dir: Path) -> NiahResults:
    """A small real grid: three groups, every arm, two lengths, three positions."""
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01", "medical-02", "vehicle-03"),
        lengths=(128, 256),
        positions=3,
        bootstrap=0,
    )
    return run_experiment(config)


def save(results: NiahResults, name: str, store: Path, **kwargs: object) -> Path:
    kwargs = {"now": SAVED_AT, "commit": COMMIT, **kwargs}
    return RunStore(store).save(results, name, label=LABEL, **kwargs)  # type: ignore[arg-type]


def as_saved_by_an_earlier_version(path: Path) -> Path:
    """Turn a saved run into the plain ``<name>.json`` earlier versions wrote (same text)."""
    plain = path.with_name(path.name.removesuffix(".gz"))
    plain.write_bytes(gzip.decompress(path.read_bytes()))
    path.unlink()
    return plain


def test_a_saved_run_is_gzip_json_eight_times_smaller_and_loads_equal(results, tmp_path, frozen):
    path = save(results, "base", tmp_path)
    raw = path.read_bytes()
    assert path.name == "base.json.gz"
    assert raw[:2] == b"\x1f\x8b", "gzip"
    document = json.loads(gzip.decompress(raw))
    # What earlier versions wrote for this run: the same document as plain JSON.
    plain = json.dumps(document, indent=1, sort_keys=True, allow_nan=False).encode()
    assert len(plain) >= 8 * len(raw), (len(plain), len(raw))
    assert document["results"] == json.loads(results.to_json()), "the same schema"
    meta, loaded = load_run(path)
    assert frozen(loaded) == frozen(results)
    assert loaded.to_json() == results.to_json()
    assert (meta["name"], meta["label"], meta["commit"]) == ("base", LABEL, COMMIT)


def test_the_same_run_saved_twice_gives_identical_bytes(results, tmp_path):
    first = save(results, "base", tmp_path / "a")
    second = save(results, "base", tmp_path / "b")
    assert first.read_bytes()[4:8] == b"\0\0\0\0", "no time in the gzip header"
    assert first.read_bytes() == second.read_bytes()
    before = first.read_bytes()
    save(results, "base", tmp_path / "a", overwrite=True)
    assert first.read_bytes() == before


def test_an_old_plain_json_run_loads_resolves_and_is_listed(results, tmp_path, frozen):
    old = as_saved_by_an_earlier_version(save(results, "old", tmp_path))
    new = save(results, "new", tmp_path, now=SAVED_AT.replace(year=2025))
    assert old.name == "old.json" and run_name_of(old) == "old"
    assert frozen(load_run(old)[1]) == frozen(results)
    assert RunStore(tmp_path).resolve("old", LABEL) == old
    assert RunStore(tmp_path).resolve("new", LABEL) == new
    assert RunStore(tmp_path).files() == [new, old]
    runs, skipped = read_runs(tmp_path)
    assert [r.name for r in runs] == ["old", "new"] and skipped == []
    assert [r.name for r in load_history(tmp_path).series[0].runs] == ["old", "new"]
    # previous: the newest by save time, whichever format it was saved in.
    assert RunStore(tmp_path).latest(LABEL) == new
    started = SAVED_AT.replace(year=2025)
    assert RunStore(tmp_path).resolve("previous", LABEL, before=started) == old


def test_a_missing_name_lists_old_and_new_runs_by_name(results, tmp_path):
    as_saved_by_an_earlier_version(save(results, "old", tmp_path))
    save(results, "new", tmp_path)
    with pytest.raises(CompareError, match="saved runs") as info:
        RunStore(tmp_path).resolve("missing", LABEL)
    listed = str(info.value).split("(model/machine/name): ", 1)[1]
    assert [Path(run).name for run in listed.split(", ")] == ["new", "old"]


def test_the_history_command_shows_an_old_plain_json_run(results, tmp_path, capsys):
    as_saved_by_an_earlier_version(save(results, "old-format", tmp_path))
    save(results, "new-format", tmp_path, now=SAVED_AT.replace(year=2025))
    code = main(["history", "--storage", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "2 runs" in out.splitlines()[0]
    named = [line for line in out.splitlines() if "-format" in line]
    assert named, out
    for first, second in zip(named[::2], named[1::2], strict=True):  # one pair per table
        assert "old-format" in first and "new-format" in second, out


def test_saving_over_an_old_plain_run_needs_overwrite_and_replaces_it(results, tmp_path):
    old = as_saved_by_an_earlier_version(save(results, "base", tmp_path))
    with pytest.raises(OutputError, match="exists already") as info:
        save(results, "base", tmp_path, now=SAVED_AT.replace(year=2025))
    assert str(old) in str(info.value)
    assert RunStore(tmp_path).files() == [old], "the old run is left alone"
    new = save(results, "base", tmp_path, now=SAVED_AT.replace(year=2025), overwrite=True)
    assert RunStore(tmp_path).files() == [new], "one run of one name"
    assert load_run(new)[0]["saved_at"].startswith("2025")


def test_a_cut_off_compressed_run_is_a_results_error_naming_it(results, tmp_path):
    path = save(results, "base", tmp_path)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ResultsError, match="damaged gzip file") as info:
        load_run(path)
    assert str(path) in str(info.value)
    assert "write it again" in str(info.value)
    runs, skipped = read_runs(tmp_path)
    assert runs == [] and [s.path for s in skipped] == [path]
