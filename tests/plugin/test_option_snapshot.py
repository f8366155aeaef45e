"""--niah-snapshot and --snapshot-update: each model's rounded metric table as a syrupy snapshot."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("syrupy")

# The smallest useful grid: both arms (so the table holds a NaN column), one length.
SMALL = ("--niah-lengths=128", "--niah-positions=2", "--niah-orders=default")
SNAPSHOT_TEST = "test_niah_snapshot.py::test_metric_table"


@pytest.fixture(autouse=True)
def _not_an_xdist_worker(monkeypatch):
    """Under ``pytest -n N`` this test runs in a worker, and the runs it starts inherit
    PYTEST_XDIST_WORKER; syrupy then takes them for workers too and prints no snapshot report.
    """
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


def ambr(niah, label: str = "lexical-tfidf", root: str = "__snapshots__/niah"):
    return niah.pytester.path / root / label / "test_niah_snapshot.ambr"


def expected(niah) -> dict[str, int]:
    """2 groups x 2 arms x 1 order x 1 length x 2 positions; a gate per arm; the snapshot."""
    cases = niah.n_groups * niah.n_arms * 1 * 1 * 2
    return {"passed": cases // 2 + niah.n_arms + 1, "xfailed": cases // 2}


def floats(text: str) -> list[str]:
    return re.findall(r": (-?\d+\.\d+),$", text, flags=re.MULTILINE)


def test_update_writes_one_file_per_model_label(niah):
    result = niah.run(*SMALL, "--snapshot-update")
    result.assert_outcomes(**expected(niah))
    result.stdout.fnmatch_lines(["*1 snapshot generated*"])
    path = ambr(niah)
    assert [p.relative_to(niah.pytester.path) for p in niah.pytester.path.rglob("*.ambr")] == [
        path.relative_to(niah.pytester.path)
    ]
    text = path.read_text(encoding="utf-8")
    assert "# name: test_metric_table[lexical-tfidf]" in text
    # The metric table under the label only: no model name or path, so a candidate model
    # can be checked against a snapshot taken with another one under the same label.
    assert "'model'" not in text
    assert "lexical:tfidf" not in text
    for arm in ("literal", "onehop"):
        assert f"'{arm}/whole': dict({{" in text
    assert text.count("'L128': dict({") == 2
    row = text.split("'onehop/whole': dict({")[1].split("}),")[0]
    keys = re.findall(r"^\s+'(\w+)': ", row, flags=re.MULTILINE)
    assert keys == [
        "L128",
        "auc",
        "comparative_ratio",
        "effect_size",
        "found",
        "missed",
        "normalized",
        "separation",
        "truncated",
        "unread",
    ]
    assert "'unread': 0," in row  # the lexical baseline reads every token
    assert "'missed': 4," in row
    assert "'L256'" not in text
    assert "'normalized': 'nan'" in text  # onehop: the lexical query is empty
    # Three digits by default.
    assert floats(text)
    assert all(len(f.split(".")[1]) <= 3 for f in floats(text))
    assert any(len(f.split(".")[1]) == 3 for f in floats(text))


def test_check_after_update_passes_and_leaves_the_file(niah):
    niah.run(*SMALL, "--snapshot-update")
    before = ambr(niah).read_bytes()
    result = niah.run(*SMALL, "--niah-snapshot")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(**expected(niah))
    result.stdout.fnmatch_lines(["*1 snapshot passed*"])
    assert ambr(niah).read_bytes() == before


def test_snapshot_test_is_collected_only_when_asked_for(niah):
    plain = niah.run(*SMALL, "--collect-only", "-q")
    assert not any(SNAPSHOT_TEST in line for line in plain.outlines)
    asked = niah.run(*SMALL, "--collect-only", "-q", "--niah-snapshot")
    assert f"{SNAPSHOT_TEST}[lexical-tfidf]" in asked.outlines
    update = niah.run(*SMALL, "--collect-only", "-q", "--snapshot-update")
    assert f"{SNAPSHOT_TEST}[lexical-tfidf]" in update.outlines


def test_another_seed_fails_the_snapshot(niah):
    niah.run(*SMALL, "--snapshot-update")
    before = ambr(niah).read_bytes()
    result = niah.run(*SMALL, "--niah-snapshot", "--niah-seed=7")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = expected(niah)
    result.assert_outcomes(failed=1, passed=outcomes["passed"] - 1, xfailed=outcomes["xfailed"])
    result.stdout.fnmatch_lines(
        ["*1 snapshot failed*", "FAILED *test_metric_table[[]lexical-tfidf[]]*"]
    )
    assert ambr(niah).read_bytes() == before


def test_another_label_misses_only_its_own_snapshot(niah):
    niah.run(*SMALL, "--snapshot-update")
    first = ambr(niah).read_bytes()
    result = niah.run(*SMALL, "--niah-model=other=lexical:tfidf", "--niah-snapshot")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*Snapshot 'test_metric_table[[]other[]]' does not exist!*", "*1 snapshot failed*"]
    )
    text = result.stdout.str()
    assert "unused" not in text
    assert "lexical-tfidf" not in text.split("snapshot report summary")[1]
    # Writing the other label's snapshot leaves the first one alone.
    update = niah.run(*SMALL, "--niah-model=other=lexical:tfidf", "--snapshot-update")
    update.stdout.fnmatch_lines(["*1 snapshot generated*"])
    assert "deleted" not in update.stdout.str()
    assert ambr(niah).read_bytes() == first
    assert ambr(niah, "other").is_file()
    both = niah.run(
        *SMALL, "--niah-model=lexical:tfidf", "--niah-model=other=lexical:tfidf", "--niah-snapshot"
    )
    assert both.ret == pytest.ExitCode.OK
    both.stdout.fnmatch_lines(["*2 snapshots passed*"])


def test_digits_round_the_stored_numbers(niah):
    niah.run(*SMALL, "--snapshot-update", "--niah-snapshot-digits=1")
    text = ambr(niah).read_text(encoding="utf-8")
    assert floats(text)
    assert all(len(f.split(".")[1]) == 1 for f in floats(text))
    # The same numbers with three digits are another snapshot ...
    three = niah.run(*SMALL, "--niah-snapshot")
    assert three.ret == pytest.ExitCode.TESTS_FAILED
    # ... and with one digit the same.
    one = niah.run(*SMALL, "--niah-snapshot", "--niah-snapshot-digits=1")
    assert one.ret == pytest.ExitCode.OK


def test_zero_digits_keep_whole_numbers(niah):
    niah.run(*SMALL, "--snapshot-update", "--niah-snapshot-digits=0")
    values = floats(ambr(niah).read_text(encoding="utf-8"))
    assert values
    assert all(v.endswith(".0") for v in values)


def test_snapshot_dir_option(niah, tmp_path):
    target = tmp_path / "snaps"
    niah.run(*SMALL, "--snapshot-update", f"--niah-snapshot-dir={target}")
    assert (target / "lexical-tfidf" / "test_niah_snapshot.ambr").is_file()
    assert not (niah.pytester.path / "__snapshots__").exists()
    result = niah.run(*SMALL, "--niah-snapshot", f"--niah-snapshot-dir={target}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*1 snapshot passed*"])


def test_snapshot_without_syrupy_is_a_usage_error(niah):
    result = niah.run(*SMALL, "--niah-snapshot", "-p", "no:syrupy")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "pytest-niah: --niah-snapshot needs syrupy. Fix: pip install 'pytest-niah[snapshot]'"
        in result.stderr.str()
    )


def test_update_then_check_under_xdist(niah):
    pytest.importorskip("xdist")
    args = (*SMALL, "-n", "2", "-p", "no:hypothesispytest")
    update = niah.run(*args, "--snapshot-update", subprocess=True)
    assert update.ret == pytest.ExitCode.OK, update.stdout.str()
    update.stdout.fnmatch_lines(["*1 snapshot generated*"])
    written = ambr(niah).read_bytes()
    check = niah.run(*args, "--niah-snapshot", subprocess=True)
    assert check.ret == pytest.ExitCode.OK, check.stdout.str()
    check.assert_outcomes(**expected(niah))
    check.stdout.fnmatch_lines(["*1 snapshot passed*"])
    assert ambr(niah).read_bytes() == written
    # The file is the one a run without workers writes.
    niah.run(*SMALL, "--snapshot-update")
    assert ambr(niah).read_bytes() == written


def test_update_adds_no_warning_to_the_users_run(niah):
    result = niah.run(*SMALL, "--snapshot-update", "-W", "default")
    result.assert_outcomes(**expected(niah))
    assert "Can not relate snapshot" not in result.stdout.str()


# -- keyed by role: the table under the label, the identity shown when it differs --------------

STATIC = "packaged-static"
# A small grid for the static model: 2 groups x 1 arm x 2 orders x 1 length x 2 positions.
STATIC_GRID = ("--niah-arms=literal", "--niah-lengths=128", "--niah-positions=2")


def test_a_role_is_checked_by_its_table_and_a_changed_table_names_the_model(niah, monkeypatch):
    static_model = pytest.importorskip("static_model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    import shutil
    from pathlib import Path

    update = niah.run(*STATIC_GRID, f"--niah-model=prod={STATIC}", "--snapshot-update")
    assert update.ret == pytest.ExitCode.OK, update.stdout.str()
    update.stdout.fnmatch_lines(["*1 snapshot generated*"])
    written = ambr(niah, "prod").read_bytes()
    assert b"packaged-static" not in written and b"static_model" not in written
    # The same weights copied to another folder: another model spec, the same table.
    copy = niah.pytester.path / "copied-model"
    shutil.copytree(Path(static_model.__file__).resolve().parent / "model", copy)
    same = niah.run(*STATIC_GRID, f"--niah-model=prod={copy}", "--niah-snapshot")
    assert same.ret == pytest.ExitCode.OK, same.stdout.str()
    same.stdout.fnmatch_lines(["*1 snapshot passed*"])
    # Another model in the role: its table differs, and the failure says which model made it.
    other = niah.run(
        *STATIC_GRID, "--niah-model=prod=lexical:tfidf", "--niah-snapshot", "--niah-json=other.json"
    )
    assert other.ret == pytest.ExitCode.TESTS_FAILED
    other.stdout.fnmatch_lines(["*1 snapshot failed*", "FAILED *test_metric_table[[]prod[]]*"])
    identity = niah.load("other.json").model
    assert identity.name == "lexical:tfidf"
    text = other.stdout.str()
    assert (
        "the metric table of 'prod' differs from its snapshot; this table came from model "
        f"lexical:tfidf (identity fingerprint {identity.fingerprint}, reads every token)"
    ) in text
    assert ambr(niah, "prod").read_bytes() == written


def test_a_changed_table_reads_as_one_block_of_changed_cells_without_a_traceback(niah):
    niah.run(*SMALL, "--snapshot-update")
    result = niah.run(*SMALL, "--niah-snapshot", "--niah-seed=7")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = result.stdout.str()
    # Cells named by arm, length and metric, old -> new, and the fix.
    assert re.search(r"literal/whole L128 auc: \d\.\d+ -> \d\.\d+", text), text
    assert re.search(r"differs from its snapshot; .*\(\d+ changed cells?\)", text)
    assert "Fix: if the change is intended, accept it with --snapshot-update" in text
    # No traceback of the plugin's own test function or of syrupy's internals.
    assert "def test_metric_table" not in text
    assert "assertion = snapshot(" not in text
    assert "syrupy/assertion.py" not in text


def _killed_update_left(root, label: str):
    """What a ``--snapshot-update`` killed mid-write leaves: a staging file of a dead process."""
    folder = root / label
    folder.mkdir(parents=True, exist_ok=True)
    stale = folder / ".test_niah_snapshot.ambr.niah-tmp-999999999-abcd1234"
    stale.write_text("half a snapshot", encoding="utf-8")
    return stale


@pytest.mark.parametrize(
    "options",
    [("--niah-snapshot",), ("--niah-json=out.json",), ("--snapshot-update",)],
    ids=["snapshot check", "results file", "another label's update"],
)
def test_a_killed_updates_temporary_file_is_removed_by_any_later_writing_run(niah, options):
    """Another label's file, a check-only run, a results-only run: each cleans the folder."""
    root = niah.pytester.path / "__snapshots__" / "niah"
    stale = _killed_update_left(root, "some-other-label")
    mine = _killed_update_left(root, niah.label)
    niah.run(*SMALL, *options)
    assert not stale.exists() and not mine.exists()
    assert not any(".niah-tmp-" in p.name for p in root.rglob("*"))
