"""The history of saved runs as data: order, series, points, drift, reading a store, latest_run."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import time
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.errors import ConfigError, NiahWarning
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.provenance import machine_id
from pytest_niah.results.run_file import parse_saved_at, run_header
from pytest_niah.results.run_history import build_history, load_history, metric_names
from pytest_niah.results.saved_runs import SavedRun, read_runs
from pytest_niah.results.storage import RunStore

LABEL = "lexical:tfidf"
T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def measured() -> NiahResults:
    config = NiahConfig(
        model="lexical:tfidf",
        lengths=(128, 256),
        positions=3,
        groups=("dietary-01", "location-01"),
        bootstrap=50,
    )
    return run_experiment(config)


def doctored(results: NiahResults, auc: dict[int, float], fingerprint: str = "") -> NiahResults:
    """``results`` with these per-length AUCs (interval: +-0.05) and, if given, fingerprint."""
    tables = tuple(
        dataclasses.replace(t, auc=auc[t.length]) if t.by == "length" else t for t in results.tables
    )
    intervals = tuple(
        dataclasses.replace(
            i, point=auc[i.length], low=auc[i.length] - 0.05, high=auc[i.length] + 0.05
        )
        if i.metric == "auc"
        else i
        for i in results.intervals
    )
    model = results.model.model_copy(update={"fingerprint": fingerprint}) if fingerprint else None
    return dataclasses.replace(
        results, tables=tables, intervals=intervals, model=model or results.model
    )


def run(
    results: NiahResults,
    name: str,
    days: int,
    *,
    label: str = LABEL,
    commit: dict[str, object] | None = None,
    machine: str = "Linux-x86_64-cp311",
) -> SavedRun:
    return SavedRun(
        path=Path(f"/store/{label}/{machine}/{name}.json"),
        name=name,
        label=label,
        saved_at=T0 + timedelta(days=days),
        machine=machine,
        commit=commit if commit is not None else {"id": f"{days:02d}" + "a" * 38, "dirty": False},
        results=results,
    )


# -- order and series ------------------------------------------------------------------------


def test_runs_are_ordered_by_save_time_then_name(measured):
    runs = [
        run(measured, "zeta", 0),
        run(measured, "mid", 20),
        run(measured, "beta", 10),
        run(measured, "alpha", 10),
    ]
    (series,) = build_history(runs).series
    assert [r.name for r in series.runs] == ["zeta", "alpha", "beta", "mid"]
    assert series.lengths == (128, 256)
    assert (series.arm, series.scoring) == ("onehop", "whole")


def test_one_series_per_label_in_order_of_first_run(measured):
    runs = [run(measured, "b1", 5, label="b"), run(measured, "a1", 1, label="a")]
    runs.append(run(measured, "b0", 0, label="b"))
    history = build_history(runs)
    assert [s.label for s in history.series] == ["b", "a"]
    assert [r.name for r in history.series[0].runs] == ["b0", "b1"]


def test_points_hold_value_and_interval(measured):
    results = doctored(measured, {128: 0.8, 256: 0.7})
    (series,) = build_history([run(results, "one", 0)]).series
    point = series.point(0, "auc", 128)
    assert point is not None
    assert (point.value, point.low, point.high) == (0.8, pytest.approx(0.75), pytest.approx(0.85))
    assert point.has_interval
    ratio = series.point(0, "comparative_ratio", 256)
    assert ratio is not None
    assert ratio.value == measured.row("onehop", 256).comparative_ratio


@pytest.mark.parametrize(
    ("low", "high", "has"),
    [(0.7, 0.9, True), (math.nan, 0.9, False), (0.7, math.nan, False), (-math.inf, 0.9, False)],
)
def test_a_point_has_an_interval_only_where_both_ends_are_known(low, high, has):
    from pytest_niah.results.history_series import Point

    assert Point(0.8, low, high).has_interval is has
    assert Point(0.8).has_interval is False


def test_a_length_a_run_did_not_measure_has_no_point(measured):
    short = dataclasses.replace(
        measured, tables=tuple(t for t in measured.tables if t.length == 128)
    )
    (series,) = build_history([run(short, "short", 0), run(measured, "both", 1)]).series
    assert series.lengths == (128, 256)
    assert series.point(0, "auc", 256) is None
    assert series.point(1, "auc", 256) is not None


def test_runs_without_the_arm_are_left_out_and_said_so(measured):
    history = build_history([run(measured, "one", 0)], arm="literal")
    assert history.series == ()
    (skipped,) = history.skipped
    assert "no literal/whole rows" in skipped.reason
    assert "'one'" in skipped.reason


def test_commit_text_and_identity(measured):
    dirty = run(measured, "d", 0, commit={"id": "0123456789abcdef", "dirty": True})
    clean = run(measured, "c", 0, commit={"id": "fedcba9876543210", "dirty": False})
    none = run(measured, "n", 0, commit={})
    assert dirty.commit_text == "0123456+dirty"
    assert clean.commit_text == "fedcba9"
    assert none.commit_text == "-"
    assert dirty.identity == measured.model.fingerprint[:8]
    assert dirty.date == "2024-01-02"


def test_identity_changes_mark_the_first_run_and_each_change(measured):
    other = doctored(measured, {128: 0.8, 256: 0.7}, fingerprint="f" * 64)
    runs = [run(measured, "a", 0), run(measured, "b", 1), run(other, "c", 2), run(other, "d", 3)]
    (series,) = build_history(runs).series
    assert series.identity_changes() == [0, 2]
    assert series.runs[2].identity == "ffffffff"


# -- drift -------------------------------------------------------------------------------------


def series_of(measured, *aucs: dict[int, float]):
    runs = [run(doctored(measured, auc), f"r{i}", i) for i, auc in enumerate(aucs)]
    (series,) = build_history(runs).series
    return series


def test_small_steps_that_add_up_are_drift(measured):
    series = series_of(
        measured, {128: 0.80, 256: 0.70}, {128: 0.79, 256: 0.66}, {128: 0.78, 256: 0.68}
    )
    at128, at256 = series.drift("auc")
    # 128: two steps of -0.01 add up to -0.02, more than either: a slow drift.
    assert at128.total == pytest.approx(-0.02)
    assert at128.steps == pytest.approx((-0.01, -0.01))
    assert at128.largest == pytest.approx(-0.01)
    assert (at128.first, at128.last) == (0, 2)
    assert at128.flagged
    # 256: one step of -0.04 was already visible; the total -0.02 is smaller.
    assert at256.total == pytest.approx(-0.02)
    assert at256.largest == pytest.approx(-0.04)
    assert not at256.flagged


def test_a_total_below_the_minimum_is_not_drift(measured):
    series = series_of(
        measured, {128: 0.8, 256: 0.7}, {128: 0.797, 256: 0.7}, {128: 0.794, 256: 0.7}
    )
    at128, at256 = series.drift("auc")
    assert at128.total == pytest.approx(-0.006)
    assert not at128.flagged
    assert series.drift("auc", min_change=0.005)[0].flagged
    assert at256.total == 0.0
    assert not at256.flagged


def test_two_runs_show_one_step_so_never_drift(measured):
    series = series_of(measured, {128: 0.8, 256: 0.7}, {128: 0.5, 256: 0.7})
    at128, _ = series.drift("auc")
    assert at128.total == pytest.approx(-0.3)
    assert at128.steps == pytest.approx((-0.3,))
    assert not at128.flagged


def test_drift_passes_over_runs_without_a_value(measured):
    short = dataclasses.replace(
        doctored(measured, {128: 0.9, 256: 0.0}),
        tables=tuple(t for t in doctored(measured, {128: 0.9, 256: 0.0}).tables if t.length == 128),
    )
    runs = [
        run(doctored(measured, {128: 0.80, 256: 0.70}), "a", 0),
        run(short, "b", 1),
        run(doctored(measured, {128: 0.80, 256: 0.69}), "c", 2),
        run(doctored(measured, {128: 0.80, 256: 0.68}), "d", 3),
    ]
    (series,) = build_history(runs).series
    _, at256 = series.drift("auc")
    assert at256.steps == pytest.approx((-0.01, -0.01))
    assert (at256.first, at256.last) == (0, 3)
    assert at256.flagged


def test_drift_of_nan_values_is_nan_and_not_flagged(measured):
    nan = {128: math.nan, 256: math.nan}
    series = series_of(measured, nan, nan, nan)
    for drift in series.drift("auc"):
        assert math.isnan(drift.total)
        assert not drift.flagged
        assert drift.first == -1


# -- metric names ----------------------------------------------------------------------------


def test_metric_names_accept_aliases_and_drop_repeats():
    assert metric_names("auc,ratio") == ("auc", "comparative_ratio")
    assert metric_names(" AUC , comparative-ratio, auc ") == ("auc", "comparative_ratio")
    assert metric_names(["norm", "sep", "effect"]) == ("normalized", "separation", "effect_size")


@pytest.mark.parametrize("text", ["auc,bogus", "", " , "])
def test_unknown_or_no_metric_is_a_config_error(text):
    with pytest.raises(ConfigError, match="--metric"):
        metric_names(text)


# -- reading a store -------------------------------------------------------------------------


def save(results, name, store, days, *, label=LABEL, dirty=False) -> Path:
    commit = {"id": f"{days:02d}" + "b" * 38, "branch": "main", "dirty": dirty}
    return RunStore(store).save(
        results, name, label=label, now=T0 + timedelta(days=days), commit=commit
    )


def test_read_runs_orders_them_and_keeps_provenance(measured, tmp_path):
    save(measured, "zeta", tmp_path, 0)
    save(measured, "alpha", tmp_path, 2, dirty=True)
    save(measured, "mid", tmp_path, 1)
    runs, skipped = read_runs(tmp_path)
    assert skipped == []
    assert [r.name for r in runs] == ["zeta", "mid", "alpha"]
    assert runs[2].commit_text == "02bbbbb+dirty"
    assert runs[0].machine == machine_id()
    assert runs[0].saved_at == T0
    assert runs[0].label == LABEL


def test_one_bad_file_is_skipped_and_named_not_fatal(measured, tmp_path):
    good = save(measured, "good", tmp_path, 0)
    bad = good.with_name("bad.json")
    bad.write_text('{"run_schema_version": 2, "name": ', encoding="utf-8")
    bare = good.with_name("bare.json")
    measured.save(bare)
    runs, skipped = read_runs(tmp_path)
    assert [r.name for r in runs] == ["good"]
    reasons = {s.path.name: s.reason for s in skipped}
    assert set(reasons) == {"bad.json", "bare.json"}
    assert str(bad) in reasons["bad.json"]
    assert "not a saved run" in reasons["bare.json"]
    history = load_history(tmp_path)
    assert [r.name for r in history.series[0].runs] == ["good"]
    assert {s.path.name for s in history.skipped} == {"bad.json", "bare.json"}


def test_filters_by_label_and_machine(measured, tmp_path):
    save(measured, "a", tmp_path, 0, label="one")
    save(measured, "b", tmp_path, 1, label="two")
    moved = save(measured, "c", tmp_path, 2, label="two")
    elsewhere = moved.parent.parent / "Other-arm64-cp312" / moved.name
    elsewhere.parent.mkdir()
    shutil.move(moved, elsewhere)
    assert [r.name for r in read_runs(tmp_path, labels=["two"])[0]] == ["b", "c"]
    assert [r.name for r in read_runs(tmp_path, machine="Other-arm64-cp312")[0]] == ["c"]
    assert [r.name for r in read_runs(tmp_path, labels=["one"], machine=machine_id())[0]] == ["a"]
    history = load_history(tmp_path)
    assert [s.label for s in history.series] == ["one", "two"]
    assert history.series[1].machines == (machine_id(), "Other-arm64-cp312")


def test_labels_sharing_a_folder_stay_apart(measured, tmp_path):
    save(measured, "colon", tmp_path, 0, label="a:b")
    save(measured, "dash", tmp_path, 1, label="a-b")
    assert len(RunStore(tmp_path).files()) == 2
    assert [r.name for r in read_runs(tmp_path, labels=["a:b"])[0]] == ["colon"]
    assert RunStore(tmp_path).latest("a:b").name == "colon.json.gz"


def test_an_empty_or_missing_store_has_no_runs(tmp_path):
    assert read_runs(tmp_path) == ([], [])
    assert read_runs(tmp_path / "missing") == ([], [])
    assert load_history(tmp_path).series == ()


# -- saved_at, headers and latest_run --------------------------------------------------------


def test_parse_saved_at_reads_utc_times():
    assert parse_saved_at("2024-01-02T03:04:05+00:00") == T0
    assert parse_saved_at("2024-01-02T03:04:05Z") == T0
    assert parse_saved_at("2024-01-02T03:04:05") == T0
    assert parse_saved_at("2024-01-02T04:04:05+01:00") == T0
    with pytest.raises(ValueError):
        parse_saved_at("yesterday")


def test_run_header_reads_without_validating_results(measured, tmp_path):
    path = save(measured, "base", tmp_path, 3)
    header = run_header(path)
    assert (header.name, header.label, header.machine) == ("base", LABEL, machine_id())
    assert header.saved_at == T0 + timedelta(days=3)


def test_latest_run_is_the_newest_by_save_time_not_by_name_or_file_time(measured, tmp_path):
    assert RunStore(tmp_path).latest(LABEL) is None
    assert RunStore(tmp_path / "missing").latest(LABEL) is None
    newest = save(measured, "aaa", tmp_path, 5)
    save(measured, "zzz", tmp_path, 1)  # written last, saved_at older
    save(measured, "other", tmp_path, 9, label="someone-else")
    assert RunStore(tmp_path).latest(LABEL) == newest


def test_latest_run_breaks_ties_by_name(measured, tmp_path):
    # One second: "b" is written first and has the older file time, so a tie broken by file
    # time (or by the order of writing) would pick "a".
    b = save(measured, "b", tmp_path, 1)
    a = save(measured, "a", tmp_path, 1)
    os.utime(b, ns=(1_000_000_000, 1_000_000_000))
    os.utime(a, ns=(2_000_000_000, 2_000_000_000))
    assert RunStore(tmp_path).latest(LABEL) == b


def test_latest_run_is_the_run_the_history_ends_on_within_one_second(measured, tmp_path):
    # Issue 21: saved in one second, "--niah-compare=previous" picked the file written last
    # ("nightly-a") while the history ended on the name sorted last ("nightly-b").
    second = T0 + timedelta(days=3)
    RunStore(tmp_path).save(measured, "nightly-b", label=LABEL, now=second, commit={})
    written_last = RunStore(tmp_path).save(measured, "nightly-a", label=LABEL, now=second)
    later = time.time() + 10
    os.utime(written_last, (later, later))
    runs, _ = read_runs(tmp_path, labels=[LABEL])
    (series,) = build_history(runs).series
    assert [r.name for r in series.runs] == ["nightly-a", "nightly-b"]
    assert RunStore(tmp_path).latest(LABEL) == series.runs[-1].path
    assert RunStore(tmp_path).resolve("previous", LABEL) == series.runs[-1].path


def test_previous_while_saving_is_the_newest_run_saved_before_this_session(measured, tmp_path):
    # The plugin notes when the session started, and saves this run at its end: "previous"
    # must still be the run before, not the one this session just saved.
    before = save(measured, "nightly-41", tmp_path, 0)
    started = T0 + timedelta(days=1)
    # This session saved 300 microseconds after it started: not "before" it.
    saved = started + timedelta(microseconds=300)
    this = RunStore(tmp_path).save(measured, "nightly-42", label=LABEL, now=saved, commit={})
    assert RunStore(tmp_path).latest(LABEL) == this
    assert RunStore(tmp_path).latest(LABEL, before=started) == before
    assert RunStore(tmp_path).latest(LABEL, before=saved) == before  # strictly before
    assert RunStore(tmp_path).latest(LABEL, before=started.replace(tzinfo=None)) == before
    assert RunStore(tmp_path).latest(LABEL, before=T0) is None


def test_runs_saved_in_one_second_sort_by_time_not_by_name(measured, tmp_path):
    # CI found it: "two" then "three" saved in one second, and "previous" took "two"
    # because whole seconds tied and "two" sorts after "three" by name.
    first = RunStore(tmp_path).save(measured, "two", label=LABEL, now=T0, commit={})
    later = T0 + timedelta(microseconds=400_000)
    second = RunStore(tmp_path).save(measured, "three", label=LABEL, now=later, commit={})
    assert RunStore(tmp_path).latest(LABEL) == second
    assert RunStore(tmp_path).resolve("previous", LABEL) == second
    assert RunStore(tmp_path).latest(LABEL, before=later) == first
    runs, _ = read_runs(tmp_path, labels=[LABEL])
    (series,) = build_history(runs).series
    assert [r.name for r in series.runs] == ["two", "three"]


def test_latest_run_of_one_machine(measured, tmp_path):
    here = save(measured, "here", tmp_path, 0)
    moved = save(measured, "there", tmp_path, 1)
    there = moved.parent.parent / "Other-arm64-cp312" / moved.name
    there.parent.mkdir()
    shutil.move(moved, there)
    assert RunStore(tmp_path).latest(LABEL) == there
    assert RunStore(tmp_path).latest(LABEL, machine_id()) == here
    assert RunStore(tmp_path).latest(LABEL, "Other-arm64-cp312") == there
    assert RunStore(tmp_path).latest(LABEL, "No-such-machine") is None


def test_latest_run_skips_an_unreadable_file_with_a_warning(measured, tmp_path):
    good = save(measured, "good", tmp_path, 0)
    broken = good.with_name("broken.json")
    broken.write_text("{not json", encoding="utf-8")
    odd = good.with_name("odd.json")
    odd.write_text(
        json.dumps({"run_schema_version": 2, "name": "odd", "label": LABEL, "saved_at": "soon"}),
        encoding="utf-8",
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert RunStore(tmp_path).latest(LABEL) == good
    messages = sorted(str(w.message) for w in caught if issubclass(w.category, NiahWarning))
    assert len(messages) == 2
    assert str(broken) in messages[0]
    assert "not an ISO 8601 time" in messages[1]
