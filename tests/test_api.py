"""The Python API from the top-level import: caches and progress by default, compare, report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import pytest_niah
from pytest_niah import NiahConfig, NiahResults, compare, run_experiment, write_report
from pytest_niah.experiment import RunReport

PYTHON_API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def tiny(shared_corpus_dir: Path) -> NiahConfig:
    return NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01", "medical-02", "location-03"),
        lengths=(64, 256),
        positions=2,
        arms=("onehop",),
    )


def test_caches_by_default_where_the_plugin_does_and_reuses(
    shared_corpus_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "cache"))
    first_report, second_report = RunReport(), RunReport()
    first = run_experiment(tiny(shared_corpus_dir), progress=False, report=first_report)
    kept = list((tmp_path / "cache" / "results").glob("*.json"))
    assert len(kept) == 1
    assert first_report.cache == tmp_path / "cache"
    assert not first_report.reused
    second = run_experiment(tiny(shared_corpus_dir), progress=False, report=second_report)
    assert second_report.reused
    assert second_report.cached_results == kept[0]
    assert second.to_json() == first.to_json()


def test_use_cache_false_keeps_nothing(shared_corpus_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "cache"))
    report = RunReport()
    run_experiment(tiny(shared_corpus_dir), use_cache=False, progress=False, report=report)
    assert not (tmp_path / "cache" / "results").exists()
    assert report.cache is None


def test_progress_goes_to_stderr_by_default(shared_corpus_dir, capfd):
    run_experiment(tiny(shared_corpus_dir))
    out, err = capfd.readouterr()
    assert "pytest-niah: lexical:tfidf: loading inputs and the model" in err
    assert "building and embedding haystacks" in err
    assert "pytest-niah" not in out


def test_a_cached_run_says_so(shared_corpus_dir, capfd):
    run_experiment(tiny(shared_corpus_dir), progress=False)
    capfd.readouterr()
    run_experiment(tiny(shared_corpus_dir))
    assert "reused" in capfd.readouterr().err


@pytest.mark.parametrize("off", [False, None, "no-progress"])
def test_progress_can_be_turned_off(shared_corpus_dir, capfd, off):
    from pytest_niah.progress import NoProgress

    run_experiment(tiny(shared_corpus_dir), progress=NoProgress() if off == "no-progress" else off)
    assert "pytest-niah" not in capfd.readouterr().err


@pytest.mark.integration
def test_compare_and_write_report_from_the_top_level(shared_corpus_dir, tmp_path):
    assert "compare" in pytest_niah.__all__ and "write_report" in pytest_niah.__all__
    results = run_experiment(tiny(shared_corpus_dir), progress=False)
    baseline = run_experiment(tiny(shared_corpus_dir).replace(seed=1), progress=False)
    comparison = compare(results, baseline, allow=("seed",))
    assert comparison.paired  # every cell pairs
    assert comparison.unpaired_current == comparison.unpaired_baseline == 0
    assert {d.length for d in comparison.deltas} == {64, 256}
    written = write_report(results, tmp_path / "report", comparisons=[comparison])
    assert {"report.html", "results.json", "summary.md", "comparison.json"} <= set(written)
    assert NiahResults.load(written["results.json"]).to_json() == results.to_json()
    sections = json.loads(written["comparison.json"].read_text())
    assert len(sections) == 1


def test_write_report_refuses_more_comparisons_than_results(shared_corpus_dir, tmp_path):
    results = run_experiment(tiny(shared_corpus_dir), progress=False)
    comparison = compare(results, results)
    with pytest.raises(ValueError, match="2 comparisons for 1 results"):
        write_report([results], tmp_path / "r", comparisons=[comparison, comparison])


def test_docs_python_api_example_uses_only_exported_names():
    section = PYTHON_API_PAGE.read_text(encoding="utf-8").split("# Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    imported = re.search(r"from pytest_niah import ([^\n]+)", code.group(1))
    assert imported is not None
    for name in imported.group(1).split(","):
        assert hasattr(pytest_niah, name.strip()), name
    compile(code.group(1), "docs/python-api.md", "exec")


@pytest.mark.slow
def test_docs_python_api_example_runs_as_written(tmp_path, monkeypatch):
    section = PYTHON_API_PAGE.read_text(encoding="utf-8").split("# Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(code.group(1), "docs/python-api.md", "exec"), {})
    assert (tmp_path / "minilm.json").is_file()
    assert (tmp_path / "niah-report" / "report.html").is_file()
