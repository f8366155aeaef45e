"""``pytest-niah history``: three saved runs give the table, the drift line and the plot."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.cli import main
from pytest_niah.report.history_terminal import history_lines
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.provenance import machine_id
from pytest_niah.results.run_history import load_history
from pytest_niah.results.storage import RunStore

LABEL = "lexical:tfidf"
T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
# Three upgrades, saved in this order (names deliberately not in alphabetical order). At 128
# tokens each step loses 0.010 AUC: every step is small, the total (-0.020) is not: drift.
# At 256 one step of -0.040 was visible on its own, so the smaller total is no drift.
RUNS = (
    ("zeta-base", {128: 0.800, 256: 0.700}, "1111111aaaa", False),
    ("alpha-up", {128: 0.790, 256: 0.660}, "2222222bbbb", True),
    ("mid-up", {128: 0.780, 256: 0.680}, "3333333cccc", False),
)
NEW_MODEL = "f" * 64


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
    """``results`` with these per-length AUCs, each with the interval +-0.05."""
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


def fill(store: Path, measured: NiahResults, label: str = LABEL) -> list[Path]:
    paths = []
    for day, (name, auc, sha, dirty) in enumerate(RUNS):
        # The last run is a new model version: its identity changes.
        results = doctored(measured, auc, NEW_MODEL if day == 2 else "")
        commit = {"id": sha + "0" * 29, "branch": "main", "dirty": dirty}
        now = T0 + timedelta(days=30 * day)
        paths.append(RunStore(store).save(results, name, label=label, now=now, commit=commit))
    return paths


@pytest.fixture(scope="module")
def store(measured: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    fill(folder, measured)
    return folder


def history(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["history", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def table_rows(out: str, title: str) -> list[list[str]]:
    """The rows of the table under the line ``title``, split on runs of two spaces."""
    lines = out.splitlines()
    start = lines.index(title) + 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("  ") or line.startswith("  drift") or line.startswith("  no "):
            break
        rows.append([cell.strip() for cell in line.strip().split("  ") if cell.strip()])
    return rows


# -- the table -------------------------------------------------------------------------------


def test_history_prints_one_row_per_run_in_save_order(store, measured, capsys):
    code, out, err = history(capsys, "--storage", str(store))
    assert code == 0, err
    assert err == ""
    first = out.splitlines()[0]
    assert first == f"{LABEL}, arm onehop, scoring whole: 3 runs, 2024-01-02 to 2024-03-02"
    header, *body = table_rows(out, "AUC [95% CI] per length")
    assert header == ["#", "saved", "run", "commit", "model", "128", "256"]
    identity = measured.model.fingerprint[:8]
    a, b = "0.800 [0.75,0.85]", "0.700 [0.65,0.75]"
    assert body[0] == ["1", "2024-01-02", "zeta-base", "1111111", identity, a, b]
    a, b = "0.790 [0.74,0.84]", "0.660 [0.61,0.71]"
    assert body[1] == ["2", "2024-02-01", "alpha-up", "2222222+dirty", identity, a, b]
    a, b = "0.780 [0.73,0.83]", "0.680 [0.63,0.73]"
    assert body[2] == ["3", "2024-03-02", "mid-up", "3333333", "ffffffff", a, b]
    assert len(body) == 5
    assert body[3] == ["total change #1→#3", "-0.020", "-0.020"]
    assert body[4] == ["largest step", "-0.010", "-0.040"]


def test_history_flags_the_slow_drift_and_only_it(store, capsys):
    _, out, _ = history(capsys, "--storage", str(store))
    drift = [line for line in out.splitlines() if line.startswith("  drift:")]
    assert len(drift) == 1
    text = " ".join(line.strip() for line in out.split("  drift: ", 1)[1].splitlines()[:2])
    assert text.startswith(
        "AUC at 128 tokens moved -0.020 from run #1 (zeta-base) to run #3 (mid-up), the sum of "
        "2 steps none larger than 0.010"
    )
    assert "256 tokens" not in out.split("comparative ratio")[0].split("  drift: ")[1]
    # The ratio did not move: no drift there.
    ratio = out.split("comparative ratio")[1]
    assert "  no drift:" in ratio
    assert "the model identity changed at run #3 (mid-up)" in out


def test_history_shows_the_ratio_with_its_interval(store, measured, capsys):
    _, out, _ = history(capsys, "--storage", str(store))
    _, *body = table_rows(out, "comparative ratio [95% CI] per length")
    ratio = measured.row("onehop", 128).comparative_ratio
    interval = measured.interval("onehop", 128, "comparative_ratio")
    assert interval is not None
    assert body[0][5] == f"{ratio:.3f} [{interval.low:.2f},{interval.high:.2f}]"
    assert body[3][1:] == ["+0.000", "+0.000"]


def test_history_lines_fit_120_columns(store, capsys):
    _, out, _ = history(capsys, "--storage", str(store))
    assert max(len(line) for line in out.splitlines()) <= 120


def test_narrow_width_splits_length_columns_into_blocks(store):
    lines = history_lines(load_history(store), ["auc"], width=90)
    assert max(len(line) for line in lines) <= 90
    assert "  (continued)" in lines
    continued = lines[lines.index("  (continued)") + 1]
    assert continued.split() == ["#", "run", "256"]


def test_metric_option_chooses_the_tables(store, capsys):
    _, out, _ = history(capsys, "--storage", str(store), "--metric", "ratio")
    assert "comparative ratio [95% CI] per length" in out
    assert "AUC [95% CI]" not in out
    code, _, err = history(capsys, "--storage", str(store), "--metric", "auc,bogus")
    assert code == 4
    assert err.startswith("pytest-niah: error: --metric: unknown metric 'bogus'")


def test_label_and_machine_filters(store, measured, tmp_path, capsys):
    two = tmp_path / "runs"
    fill(two, measured)
    fill(two, measured, label="other")
    _, out, _ = history(capsys, "--storage", str(two))
    assert out.count("arm onehop, scoring whole: 3 runs") == 2
    _, out, _ = history(capsys, "--storage", str(two), "--label", "other")
    assert out.startswith("other, arm onehop")
    assert LABEL not in out
    code, out, _ = history(capsys, "--storage", str(two), "--machine", machine_id())
    assert code == 0
    assert out.count("3 runs") == 2
    code, _, err = history(capsys, "--storage", str(two), "--machine", "Nope-x-cp39")
    assert code == 4
    assert "no saved run of machine 'Nope-x-cp39'" in err
    assert f"other/{machine_id()}" in err
    code, _, err = history(capsys, "--storage", str(two), "--label", "missing")
    assert code == 4
    assert "of label 'missing'" in err


def test_other_arm_without_runs_is_an_error_naming_it(store, capsys):
    code, _, err = history(capsys, "--storage", str(store), "--arm", "literal")
    assert code == 4
    assert "with arm 'literal' and scoring 'whole'" in err
    assert len(err.splitlines()) == 1


def test_a_run_without_the_arm_is_left_out_with_a_note(measured, tmp_path, capsys):
    store = tmp_path / "runs"
    fill(store, measured)
    literal_only = dataclasses.replace(
        measured,
        tables=tuple(dataclasses.replace(t, arm="literal") for t in measured.tables),
        intervals=(),
    )
    RunStore(store).save(literal_only, "lit", label=LABEL, now=T0 + timedelta(days=200))
    code, out, err = history(capsys, "--storage", str(store))
    assert code == 0
    assert err == f"pytest-niah: note: left out run 'lit' of '{LABEL}' has no onehop/whole rows\n"
    assert "3 runs" in out


def test_long_run_names_are_shortened_and_kept_on_one_line(measured, tmp_path, capsys):
    store = tmp_path / "runs"
    name = "nightly-" + "x" * 40 + "\u2028tail"
    RunStore(store).save(measured, name, label=LABEL, now=T0, commit={})
    code, out, _ = history(capsys, "--storage", str(store))
    assert code == 0
    _, row = table_rows(out, "AUC [95% CI] per length")
    assert row[2] == "nightly-" + "x" * 15 + "…"
    assert row[3] == "-"
    assert "\u2028" not in out


# -- the files -------------------------------------------------------------------------------


def test_out_writes_the_plot_markdown_and_html(store, tmp_path, capsys):
    out_dir = tmp_path / "hist"
    code, out, err = history(capsys, "--storage", str(store), "--out", str(out_dir))
    assert code == 0, err
    names = ["history.html", "history.md", "history.png"]
    assert sorted(p.name for p in out_dir.iterdir()) == names
    assert sorted(Path(line).name for line in out.splitlines()[-3:]) == names
    png = (out_dir / "history.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(png) > 20_000
    md = (out_dir / "history.md").read_text(encoding="utf-8")
    assert "## lexical:tfidf, arm onehop, scoring whole: 3 runs, 2024-01-02 to 2024-03-02" in md
    assert "| 2   | 2024-02-01 | alpha-up" in md
    assert "0.790 [0.74,0.84]" in md
    assert "2222222+dirty" in md
    assert "- **Drift**: AUC at 128 tokens moved -0.020" in md
    html = (out_dir / "history.html").read_text(encoding="utf-8")
    assert '<section id="history">' in html
    assert "data:image/png;base64," in html
    assert "<td>alpha-up</td>" in html


def test_user_text_is_escaped_in_every_file(measured, tmp_path, capsys):
    store = tmp_path / "runs"
    label = "<b>x|y</b>"
    fill(store, measured, label=label)
    out_dir = tmp_path / "hist"
    code, out, err = history(capsys, "--storage", str(store), "--out", str(out_dir))
    assert code == 0, err
    assert out.startswith(label)
    md = (out_dir / "history.md").read_text(encoding="utf-8")
    assert "&lt;b&gt;x\\|y&lt;/b&gt;" in md
    assert "<b>x" not in md
    html = (out_dir / "history.html").read_text(encoding="utf-8")
    assert "&lt;b&gt;x|y&lt;/b&gt;" in html
    assert "<b>x|y" not in html


def test_missing_matplotlib_names_the_extra(store, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = history(capsys, "--storage", str(store), "--out", str(tmp_path / "h"))
    assert code == 1
    assert "pip install 'pytest-niah[report]'" in err
    assert len(err.splitlines()) == 1
    assert out == ""
    assert not (tmp_path / "h").exists()
    # Without --out no plot is drawn, so matplotlib is not needed.
    code, _, _ = history(capsys, "--storage", str(store))
    assert code == 0


# -- errors ----------------------------------------------------------------------------------


def test_empty_storage_names_the_folder_and_the_fix(tmp_path, capsys):
    code, out, err = history(capsys, "--storage", str(tmp_path))
    assert code == 4
    assert out == ""
    assert err == (
        f"pytest-niah: error: no saved runs in {tmp_path}. Fix: save runs with pytest "
        "--niah-model=... --niah-save=NAME (or point --storage at the folder --niah-storage "
        "names)\n"
    )


def test_missing_storage_names_the_folder_and_the_fix(tmp_path, capsys):
    code, _, err = history(capsys, "--storage", str(tmp_path / "nope"))
    assert code == 4
    assert f"the storage folder {tmp_path / 'nope'} does not exist" in err
    assert "--niah-save=NAME" in err
    assert len(err.splitlines()) == 1


def test_an_unreadable_run_is_skipped_with_a_warning_naming_it(measured, tmp_path, capsys):
    store = tmp_path / "runs"
    paths = fill(store, measured)
    bad = paths[0].with_name("broken.json")
    bad.write_text('{"run_schema_version": 2', encoding="utf-8")
    code, out, err = history(capsys, "--storage", str(store))
    assert code == 0
    (warning,) = err.splitlines()
    assert warning.startswith(f"pytest-niah: warning: skipped {bad}: ")
    assert "3 runs" in out


def test_only_unreadable_runs_is_an_error(tmp_path, capsys):
    folder = tmp_path / "lexical" / "Linux-x86_64-cp311"
    folder.mkdir(parents=True)
    (folder / "a.json").write_bytes(b"\xff\xfe")
    code, _, err = history(capsys, "--storage", str(tmp_path))
    assert code == 4
    lines = err.splitlines()
    assert lines[0].startswith(f"pytest-niah: warning: skipped {folder / 'a.json'}: ")
    assert lines[1].startswith(f"pytest-niah: error: no readable saved run in {tmp_path}")


def test_bad_min_drift_is_a_usage_error(store, capsys):
    code, _, err = history(capsys, "--storage", str(store), "--min-drift", "nan")
    assert code == 4
    assert "--min-drift" in err


def test_min_drift_raises_the_bar(store, capsys):
    _, out, _ = history(capsys, "--storage", str(store), "--min-drift", "0.05")
    assert "  drift:" not in out


def test_default_storage_is_found_from_a_subfolder(measured, tmp_path, monkeypatch, capsys):
    fill(tmp_path / ".niah" / "runs", measured)
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "sub" / "deeper")
    code, out, err = history(capsys)
    assert code == 0, err
    assert "3 runs" in out


@pytest.mark.integration
def test_the_command_runs_as_a_program(store):
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_niah", "history", "--storage", str(store)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "zeta-base" in done.stdout
    assert "drift: AUC at 128 tokens" in done.stdout


def test_history_ends_on_the_run_compare_previous_picks_when_saved_in_one_second(
    measured, tmp_path, capsys
):
    # Issue 21: two runs saved in one second; the file written last ("one-a", newer file
    # time) was "previous" while the history's last row was "one-b". One order now: by name.
    second = T0 + timedelta(days=1)
    RunStore(tmp_path).save(measured, "one-b", label=LABEL, now=second, commit={})
    last_written = RunStore(tmp_path).save(measured, "one-a", label=LABEL, now=second)
    later = datetime.now().timestamp() + 60
    os.utime(last_written, (later, later))
    code, out, err = history(capsys, "--storage", str(tmp_path))
    assert code == 0, err
    _, *body = table_rows(out, "AUC [95% CI] per length")
    previous = RunStore(tmp_path).resolve("previous", LABEL)
    assert [row[2] for row in body[:2]] == ["one-a", "one-b"]
    assert previous.name == f"{body[1][2]}.json.gz"


def test_a_storage_that_is_a_file_says_so(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not runs", encoding="utf-8")
    code, out, err = history(capsys, "--storage", str(afile))
    assert code == 4 and out == ""
    assert f"--storage: {afile} is a file, not a folder of saved runs" in err
    assert "does not exist" not in err and len(err.splitlines()) == 1
