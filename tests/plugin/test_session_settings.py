"""The run's settings come from the option table; its run report is typed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.options import OPTIONS
from pytest_niah.config.run_settings import RunSettings
from pytest_niah.embed.runner import EmbeddingStats
from pytest_niah.experiment import CachePolicy, RunReport
from pytest_niah.plugin.session import NiahSession
from pytest_niah.results.shared_files import results_file, run_report_file

# Options the settings turn into another value (not a field of their own name).
DERIVED = {"cache_dir": "cache", "no_cache": "cache", "storage": "store_dir"}


def test_every_run_option_is_a_settings_field_of_its_own_name_and_default():
    fields = {f.name for f in dataclasses.fields(RunSettings)}
    settings = NiahSession(configs={}).settings
    for option in OPTIONS:
        if option.experiment or option.field == "model":  # the model makes the configs
            continue
        if option.field in DERIVED:
            assert DERIVED[option.field] in fields, option.field
            continue
        assert option.field in fields, f"{option.flag_name} has no RunSettings field"
        if option.field != "snapshot_dir":  # a path derived from the option's text
            assert getattr(settings, option.field) == option.default, option.field


def test_the_default_cache_policy_is_the_options_default(monkeypatch, tmp_path):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path))
    assert NiahSession(configs={}).settings.cache == CachePolicy(tmp_path, True)


def test_the_run_report_is_written_whole_and_read_back_typed(tmp_path):
    session = NiahSession.create(
        [ModelSpec(label="m", name="lexical:tfidf")], NiahConfig(model="lexical:tfidf")
    )
    assert session.run_report("m") is None  # no shared folder yet
    session.state.shared_dir = tmp_path
    assert session.run_report("m") is None
    report = RunReport(
        reused=True,
        cached_results=tmp_path / "entry.json",
        embedding=EmbeddingStats(embedded=3, read=4, dropped=1, tokens=50, seconds=0.5),
        notes=["a note"],
        seconds={"total": 1.5},
        cache=tmp_path,
    )
    path = run_report_file(results_file(tmp_path, "m", session.configs["m"]))
    report.save(path)
    assert session.run_report("m") == report
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    path.write_text("{not json", encoding="utf-8")
    assert session.run_report("m") is None  # damaged: no report, not a crash


def test_a_report_measured_from_shards_round_trips(tmp_path):
    report = RunReport(from_shards=Path("parts"))
    assert RunReport.from_dict(report.to_dict()) == report
    assert report.to_dict()["cache"] is None
