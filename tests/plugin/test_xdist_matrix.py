"""Every output of pytest-niah is the same with -n 0, -n 1 and -n 2: outcomes, files, bytes.

Each (workers, mode) pair runs once on the smallest grid and is checked against one
reference computed in this process with the Python API; equal to the reference means equal
to each other. Runs with workers start a fresh interpreter (xdist's controller); -n 0 runs
in this process, as the plugin's other pytester tests do.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.results.provenance import machine_info
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.store_layout import run_key

pytest.importorskip("xdist")
pytest.importorskip("syrupy")

TINY_CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus" / "tiny"
LABEL = "lexical-tfidf"
# 1 group x 2 arms x 1 order x 1 length x 2 positions: 2 literal finds, 2 one-hop misses.
GRID = {
    "corpus": str(TINY_CORPUS),
    "groups": "dietary-01",
    "arms": "literal,onehop",
    "orders": "default",
    "lengths": "128",
    "positions": "2",
}
CONFIG = NiahConfig(
    model="lexical:tfidf",
    corpus=str(TINY_CORPUS),
    groups=("dietary-01",),
    arms=("literal", "onehop"),
    orders=("default",),
    lengths=(128,),
    positions=2,
)
# The JSON file and the saved run in one run: each is checked on its own below. The report
# is a run of its own: it names the other outputs a run wrote.
MODES = {
    "plain": (),
    "files": ("--niah-json=out/results.json", "--niah-save=base"),
    "report": ("--niah-report=report",),
    "snapshot": ("--niah-snapshot",),
}
REPORT_FILES = ("report.html", "results.json", "cases.csv", "summary.md")
# Plugins these runs do not need, left out so that the 12 runs stay quick.
LEAN = ("-p", "no:hypothesispytest", "-p", "no:anyio")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """What any run of the grid must produce, from the Python API in this process."""
    from pytest_niah.report import write_report

    results = run_experiment(CONFIG)
    folder = tmp_path_factory.mktemp("reference-report")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        write_report([results], folder, labels=[LABEL])
    found = sum(c.found for c in results.cases)
    return {
        "results": results,
        "json": results.to_json(),
        "report": {name: (folder / name).read_bytes() for name in REPORT_FILES},
        "outcomes": {
            "passed": found + len(CONFIG.arms) * len(CONFIG.lengths),
            "xfailed": len(results.cases) - found,
        },
    }


@pytest.fixture(scope="module")
def mpl_config_dir(tmp_path_factory) -> Path:
    """One matplotlib cache for every run (pytester points HOME at the project folder)."""
    return tmp_path_factory.mktemp("matplotlib")


def outputs(root: Path) -> list[str]:
    """Files a run left in the project folder (pytester's basetemp and captured output aside)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file()
        and not p.relative_to(root).parts[0].startswith("runpytest-")
        and p.relative_to(root).as_posix() not in ("stdout", "stderr")
    )


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("workers", ["0", "1", "2"])
def test_same_outputs_with_any_number_of_workers(
    niah, monkeypatch, reference, mpl_config_dir, workers, mode
):
    niah.grid = dict(GRID)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("MPLCONFIGDIR", str(mpl_config_dir))
    # Run from an xdist worker, the runs would inherit its variables, and syrupy would take
    # their controller for a worker (no snapshot report).
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    root = niah.pytester.path
    if mode == "snapshot":
        update = niah.run("--snapshot-update", *LEAN)
        assert update.ret == pytest.ExitCode.OK
    before = outputs(root)
    snapshot_bytes = {p: (root / p).read_bytes() for p in before}

    result = niah.run("-n", workers, *LEAN, *MODES[mode], subprocess=workers != "0")

    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    expected = dict(reference["outcomes"])
    if mode == "snapshot":
        expected["passed"] += 1
    result.assert_outcomes(**expected)
    if workers != "0":
        result.stdout.fnmatch_lines([f"*created: {workers}/{workers} worker*"])
    else:
        assert "created:" not in result.stdout.str()
    # The summary table (printed by the controller only) holds the reference's counts.
    tables = niah.tables(result)
    assert list(tables) == list(CONFIG.arms)
    for arm, table in tables.items():
        row = reference["results"].row(arm, 128)
        cells = table["rows"][128]
        assert (cells["found"], cells["missed"]) == (str(row.found), str(row.missed))

    new = sorted(set(outputs(root)) - set(before))
    if mode == "plain":
        assert new == []
    elif mode == "files":
        saved = f".niah/runs/{run_key(LABEL, machine_info())}/base.json.gz"
        assert new == sorted(["out/results.json", saved])
        assert (root / "out" / "results.json").read_text(encoding="utf-8") == reference["json"]
        meta, results = load_run(root / saved)
        assert results.to_json() == reference["json"]
        document = json.loads(gzip.decompress((root / saved).read_bytes()))
        assert document["results"] == json.loads(reference["json"])
        assert meta["label"] == LABEL
    elif mode == "report":
        assert new == sorted(f"report/{name}" for name in REPORT_FILES)
        for name in REPORT_FILES:
            assert (root / "report" / name).read_bytes() == reference["report"][name], name
    elif mode == "snapshot":
        assert new == []
        result.stdout.fnmatch_lines(["*1 snapshot passed*"])
        assert {p: (root / p).read_bytes() for p in before} == snapshot_bytes
    # Only the controller writes: no worker left a file of its own.
    assert not [p for p in new if os.sep + "gw" in p]
