"""The report folder is written as a unit: after a kill it holds one run's report, never two.

``write_report`` writes every file into a hidden folder beside the target and then swaps
that folder in (pytest_niah/report/report_folder.py). The kill loop reuses the fork server
of tests/robustness/test_kill_each_output.py (kill_writer.py, kind ``report``: the real
``write_report`` of two small synthetic runs A and B): ``ROBUSTNESS_MIN_KILLS`` times (20
by default) a child starts writing the other version than the folder holds, over and over,
and is killed with SIGKILL, every other kill after a random delay (up to 1.2 writer calls)
and the others aimed into the k-th file write (the child announces each). After every kill
the folder holds every report file, each byte for byte of one and the same version, and no
temporary file; a file the user keeps beside it is untouched. The next complete write
leaves no hidden folder behind.

The unit tests show what a folder swap changes: a file of the previous report that the new
one does not write is gone, hidden folders of killed writes are removed, a folder holding
anything but report files (or the current folder) is refused with nothing changed, and a
kill between the two renames of the fallback (no ``renameat2`` exchange) leaves the
previous report in its ``-old-`` folder, which the next write puts back first.

Each test fails on the writer that replaced the files one by one in place: kills aimed
between two files leave a folder of both versions; a dropped file survives; a foreign file
is written beside; hidden folders are not known to it.
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import pytest_niah.report.report_folder as report_folder
from pytest_niah.errors import OutputError
from pytest_niah.files import TMP_MARK
from pytest_niah.report import write_report
from pytest_niah.results.niah_results import NiahResults

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fork and POSIX signals"
)

HERE = Path(__file__).resolve().parent
SEED = 23
USER_FILE = "notes-of-mine.txt"
USER_TEXT = "kept whatever the report does"


def _module(name: str, path: Path) -> ModuleType:
    """The module ``name`` from ``path``, as pytest imports it (the same one when it did)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# The kill loop's server and checks (its tests are not collected from this module), and
# the synthetic runs of the results tests.
each = _module("test_kill_each_output", HERE / "test_kill_each_output.py")
synthetic = _module("niah_synthetic", HERE.parent / "results" / "niah_synthetic.py")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    started = each.Server(tmp_path_factory.mktemp("kill-writer") / "writer.log")
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def runs() -> list[NiahResults]:
    """Two small distinct runs (seeds 0 and 1 of one grid)."""
    groups = synthetic.GROUPS[:2]
    grid: dict[str, Any] = {"lengths": (1024,), "positions": 3}
    made = []
    for seed in (0, 1):
        cases, negatives = synthetic.scored(
            seed=seed, groups=groups, negative_groups=groups, **grid
        )
        made.append(synthetic.results(cases, negatives, groups=groups, **grid))
    return made


@pytest.fixture(autouse=True)
def _quick_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """No step summary; no figures in this process: drawing them costs seconds a report."""
    import pytest_niah.report.figures

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setattr(pytest_niah.report.figures, "render_figures", lambda runs, names: [])


def hidden_beside(out: Path) -> list[str]:
    """The hidden folders of writes of ``out`` beside it (staging or previous reports)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def contents(folder: Path) -> dict[str, bytes | None]:
    """Each entry's bytes by name; None for a folder."""
    return {p.name: p.read_bytes() if p.is_file() else None for p in folder.iterdir()}


# --------------------------------------------------------------------------- the kill loop


def test_a_killed_report_write_leaves_one_whole_report(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    began = time.monotonic()
    rng = random.Random(SEED)
    timing = server.ask({"op": "reference", "kind": "report", "folder": str(tmp_path / "ref")})
    versions = each.versions_of(tmp_path / "ref")
    longest = max(0.3, 1.2 * timing["call_s"])
    work = tmp_path / "work"
    work.mkdir()
    (work / USER_FILE).write_text(USER_TEXT, encoding="utf-8")
    out = work / "out"
    done = server.ask(
        {"op": "once", "kind": "report", "out": str(out), "versions": [0], "start": 0}
    )
    assert done == {"signal": None, "exit": 0}, server.log_text()
    held, changed, inside, writes_seen = 0, 0, 0, 0

    for n in range(each.MIN_KILLS):
        if n % 2 == 0:
            plan = ("timed", rng.uniform(0.02, longest), 0)
        else:  # into a write: between two files (2..writes), or the next call's first
            plan = (
                "aimed",
                rng.uniform(0.0, timing["write_s"]),
                rng.randint(2, 1 + timing["writes"]),
            )
        # The child writes the other version first: a kill mid-write would mix the two.
        request = {"op": "loop", "kind": "report", "out": str(out), "first": 1 - held, "start": 0}
        writes_seen += each.kill_one(server, request, plan)
        when = f"after kill {n + 1} ({plan[0]}, {plan[1] * 1000:.1f} ms, write {plan[2]})"
        temps, mixed = each.check_files(out, versions, when)
        assert not mixed, f"{when}: the report folder holds files of both runs"
        assert temps == [], f"{when}: temporary files inside the report folder: {temps}"
        now = {versions[name].index(data) for name, data in each.listing(out)[0].items()}.pop()
        changed += now != held
        held = now
        beside = hidden_beside(out)
        inside += bool(beside)
        assert all(TMP_MARK in name for name in beside), f"{when}: {beside}"
        assert len(beside) <= 2, f"{when}: hidden folders of killed writes pile up: {beside}"
        assert (work / USER_FILE).read_text(encoding="utf-8") == USER_TEXT, when

    assert writes_seen > 0, "no kill came after a write had begun"
    done = server.ask(
        {"op": "once", "kind": "report", "out": str(out), "versions": [0, 1], "start": 0}
    )
    assert done == {"signal": None, "exit": 0}, server.log_text()
    assert each.listing(out) == ({name: v[1] for name, v in versions.items()}, [])
    assert sorted(p.name for p in work.iterdir()) == sorted(["out", USER_FILE])
    assert (work / USER_FILE).read_text(encoding="utf-8") == USER_TEXT
    with capsys.disabled():
        print(
            f"\n[kill report folder] {each.MIN_KILLS} SIGKILL, {changed} left the new report, "
            f"{inside} found a hidden folder beside it, {writes_seen} writes begun, "
            f"{time.monotonic() - began:.1f} s"
        )


# --------------------------------------------------------------------------- the folder swap


@pytest.mark.parametrize("through", ["folder", "link"])
def test_the_previous_report_is_replaced_whole(
    runs: list[NiahResults], tmp_path: Path, through: str
) -> None:
    real = tmp_path / "real"
    out = real if through == "folder" else tmp_path / "out"
    if through == "link":
        real.mkdir()
        out.symlink_to(real, target_is_directory=True)
    write_report(runs, out, labels=["a", "b"], step_summary=False)
    assert {"results.a.json", "results.b.json"} <= set(contents(real))
    written = write_report(runs[:1], out, labels=["a"], step_summary=False)
    assert sorted(contents(real)) == sorted(written)  # results.a.json and .b.json are gone
    assert "results.json" in written and written["results.json"] == out / "results.json"
    assert (through == "link") == out.is_symlink()  # a link the user made is kept
    assert hidden_beside(real) == []


def test_hidden_folders_of_killed_writes_are_removed_by_the_next(
    runs: list[NiahResults], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    write_report(runs[:1], out, step_summary=False)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid names no running process now
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = [f".out{TMP_MARK}{dead.pid}-0a1b2c3d", f".out{TMP_MARK}{dead.pid}-old-4e5f6a7b"]
        for name in stale:
            (tmp_path / name).mkdir()
            (tmp_path / name / "report.html").write_text("half", encoding="utf-8")
        busy = tmp_path / f".out{TMP_MARK}{live.pid}-8c9d0e1f"
        busy.mkdir()
        write_report(runs[1:], out, step_summary=False)
        assert hidden_beside(out) == [busy.name]  # a live writer's folder is left alone
    finally:
        live.kill()
        live.wait()
    write_report(runs[:1], out, step_summary=False)
    assert hidden_beside(out) == []


def test_a_folder_with_files_not_of_a_report_is_refused_and_kept(
    runs: list[NiahResults], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    write_report(runs[:1], out, step_summary=False)
    (out / USER_FILE).write_text(USER_TEXT, encoding="utf-8")
    (out / "data").mkdir()
    (out / "data" / "x.csv").write_text("1,2", encoding="utf-8")
    before = contents(out)
    with pytest.raises(OutputError) as caught:
        write_report(runs[1:], out, step_summary=False)
    assert str(out) in caught.value.problem
    assert f"(data/, {USER_FILE})" in caught.value.problem
    assert "move those files out, or choose a new or empty folder" in caught.value.hint
    assert contents(out) == before and (out / "data" / "x.csv").read_text() == "1,2"
    assert hidden_beside(out) == []


def test_a_report_of_an_older_version_is_replaced_and_the_current_folder_refused(
    runs: list[NiahResults], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("report.html", "results.old-label.json", f".summary.md{TMP_MARK}1-abc"):
        (out / name).write_text("of an older run", encoding="utf-8")
    written = write_report(runs[:1], out, step_summary=False)
    assert sorted(contents(out)) == sorted(written)  # report files only: a previous report
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    with pytest.raises(OutputError, match="is the current folder"):
        write_report(runs[:1], ".", step_summary=False)
    assert list(empty.iterdir()) == []


class Killed(BaseException):
    """Stands for SIGKILL: no ``except`` of the writer handles it."""


def test_a_kill_between_the_two_renames_keeps_the_previous_report(
    runs: list[NiahResults], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report_folder, "_exchange", lambda first, second: False)
    out = tmp_path / "out"
    write_report(runs[:1], out, step_summary=False)
    previous = contents(out)
    rename = os.rename

    def kill_before_the_new_one_is_in(src: Any, dst: Any) -> None:
        if Path(dst) == out:
            raise Killed
        rename(src, dst)

    monkeypatch.setattr(os, "rename", kill_before_the_new_one_is_in)
    with pytest.raises(Killed):
        write_report(runs[1:], out, step_summary=False)
    monkeypatch.setattr(os, "rename", rename)
    assert not out.exists()
    (old,) = [name for name in hidden_beside(out) if "-old-" in name]
    assert contents(tmp_path / old) == previous  # the last complete report, whole

    written = write_report(runs[1:], out, step_summary=False)  # puts it back, then replaces
    assert sorted(contents(out)) == sorted(written) and contents(out) != previous
    assert hidden_beside(out) == []
    write_report(runs[:1], out, step_summary=False)  # two renames without a kill
    assert contents(out) == previous and hidden_beside(out) == []
