"""report.html's History section: the saved runs of the report's labels, table and plot."""

from __future__ import annotations

import base64
import dataclasses
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_niah.report import write_report
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.storage import RunStore

LABEL = "lex"
T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
# name, AUC at 128 tokens, commit, a new model identity
RUNS = (
    ("zeta-base", 0.800, "1111111aaaa", ""),
    ("alpha-up", 0.790, "2222222bbbb", ""),
    ("mid-up", 0.780, "3333333cccc", "f" * 64),
)
SECTION = '<section id="history">'
PLOT = re.compile(r'<figure id="history-plot"><img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def doctored(results: NiahResults, auc: float, fingerprint: str) -> NiahResults:
    """``results`` whose onehop/whole AUC at 128 tokens is ``auc``, interval +-0.05."""

    def at_128(length: int, arm: str, scoring: str) -> bool:
        return (length, arm, scoring) == (128, "onehop", "whole")

    tables = tuple(
        dataclasses.replace(t, auc=auc)
        if t.by == "length" and at_128(t.length, t.arm, t.scoring)
        else t
        for t in results.tables
    )
    intervals = tuple(
        dataclasses.replace(i, point=auc, low=auc - 0.05, high=auc + 0.05)
        if i.metric == "auc" and at_128(i.length, i.arm, i.scoring)
        else i
        for i in results.intervals
    )
    model = results.model.model_copy(update={"fingerprint": fingerprint}) if fingerprint else None
    return dataclasses.replace(
        results, tables=tables, intervals=intervals, model=model or results.model
    )


@pytest.fixture(scope="module")
def store(results: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    for day, (name, auc, sha, fingerprint) in enumerate(RUNS):
        RunStore(folder).save(
            doctored(results, auc, fingerprint),
            name,
            label=LABEL,
            now=T0 + timedelta(days=30 * day),
            commit={"id": sha + "0" * 29, "branch": "main", "dirty": day == 1},
        )
    # Another label's run is never shown in this label's report.
    RunStore(folder).save(results, "other-run", label="other", now=T0)
    return folder


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def html(written: dict[str, Path]) -> str:
    return written["report.html"].read_text(encoding="utf-8")


def history_part(page: str) -> str:
    start = page.index(SECTION)
    return page[start : page.index("</section>", start)]


def test_three_saved_runs_give_the_history_section_and_its_plot(
    results: NiahResults, store: Path, tmp_path: Path
) -> None:
    written = write_report([results], tmp_path, labels=[LABEL], storage=store)
    page = html(written)
    assert page.count(SECTION) == 1
    assert '<a href="#history">History</a>' in page
    section = history_part(page)
    assert f"{LABEL}, arm onehop, scoring whole: 3 runs, 2024-01-02 to 2024-03-02" in section
    assert "<h4>AUC [95% CI] per length</h4>" in section
    assert "<h4>comparative ratio" in section.lower()
    # One row per run, oldest first, labelled by name, commit and model identity.
    identity = results.model.fingerprint[:8]
    rows = re.findall(r"<tr><td>(\d)</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td>", section)
    assert rows[:3] == [
        ("1", "zeta-base", "1111111"),
        ("2", "alpha-up", "2222222+dirty"),
        ("3", "mid-up", "3333333"),
    ]
    assert f"<td>{identity}</td>" in section and "<td>ffffffff</td>" in section
    for cell in ("0.800 [0.75,0.85]", "0.790 [0.74,0.84]", "0.780 [0.73,0.83]"):
        assert cell in section
    assert "other-run" not in page
    (data,) = PLOT.findall(section)
    png = base64.b64decode(data, validate=True)
    assert png.startswith(PNG_SIGNATURE) and len(png) > 5_000
    assert sorted(written) == ["cases.csv", "report.html", "results.json", "summary.md"]


def test_history_labels_pick_the_saved_runs_shown(
    results: NiahResults, store: Path, tmp_path: Path
) -> None:
    # The report's labels may name models (a baseline, say) whose runs are not wanted.
    written = write_report(
        [results, results],
        tmp_path,
        labels=[LABEL, "other"],
        storage=store,
        history_labels=[LABEL],
    )
    section = history_part(html(written))
    assert section.count("<h3>") == 1 and "mid-up" in section
    assert "other-run" not in section
    both = write_report(
        [results, results], tmp_path / "both", labels=[LABEL, "other"], storage=store
    )
    assert history_part(html(both)).count("<h3>") == 2 and "other-run" in html(both)


@pytest.mark.parametrize("case", ["no storage", "missing folder", "empty folder", "other label"])
def test_no_saved_runs_of_the_label_give_no_history(
    results: NiahResults, store: Path, tmp_path: Path, case: str
) -> None:
    storage: Path | None = {
        "no storage": None,
        "missing folder": tmp_path / "nowhere",
        "empty folder": tmp_path,
        "other label": store,
    }[case]
    label = "unsaved" if case == "other label" else LABEL
    written = write_report([results], tmp_path / "out", labels=[label], storage=storage)
    page = html(written)
    assert 'id="history' not in page and 'href="#history"' not in page
    assert "History of saved runs" not in page
