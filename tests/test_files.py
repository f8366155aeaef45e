"""Writing files: whole or not at all, never replacing what is not ours, checked up front."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_niah.files import remove_stale_temps, write_atomic
from pytest_niah.output_paths import output_problem


def test_a_regular_file_is_replaced_whole(tmp_path):
    target = tmp_path / "sub" / "out.json"
    write_atomic(target, "first")
    write_atomic(target, "second")
    assert target.read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.json"]


def test_a_device_is_written_in_place_not_replaced():
    before = os.stat("/dev/null")
    write_atomic("/dev/null", "into the void")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_a_pipe_gets_the_bytes(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(
        [sys.executable, "-c", f"print(open({str(fifo)!r}).read(), end='')"],
        stdout=subprocess.PIPE,
        text=True,
    )
    write_atomic(fifo, "through the pipe")
    assert reader.communicate(timeout=30)[0] == "through the pipe"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_symlink_is_kept_and_its_target_written(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("old")

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_temps_of_a_killed_writer_are_removed_on_the_next_write(tmp_path):
    target = tmp_path / "report.html"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".report.html.niah-tmp-{dead.stdout.strip()}-abc"
    stale.write_text("half a report")
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        busy = tmp_path / f".report.html.niah-tmp-{live.pid}-xyz"
        busy.write_text("being written by a live process")
        other = tmp_path / ".other.niah-tmp-1-abc"
        other.write_text("another file's temp")
        write_atomic(target, "whole")
        assert not stale.exists()
        assert busy.exists() and other.exists()
    finally:
        live.kill()
        live.wait()
    remove_stale_temps(target)  # its writer is gone now
    assert not busy.exists()
    assert target.read_text() == "whole"


@pytest.mark.parametrize(
    ("make", "folder", "expected"),
    [
        (lambda p: p / "new" / "deeper" / "x.json", False, ""),
        (lambda p: p, True, ""),
        (lambda p: p / "file" / "x.json", False, "is not a folder"),
        (lambda p: p / "file", True, "is not a folder"),
        (lambda p: p, False, "is a folder, not a file"),
        (lambda p: p / ("n" * 300) / "x.json", False, "longer than 255 bytes"),
        (lambda p: p / "bad\0name", False, "not a usable path"),
    ],
)
def test_output_problems_are_found_before_the_run(tmp_path, make, folder, expected):
    (tmp_path / "file").write_text("in the way")
    problem = output_problem(make(tmp_path), folder=folder)
    assert (expected in problem) if expected else problem == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_folder_is_a_problem(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert "no write access" in output_problem(locked / "x.json")
    finally:
        locked.chmod(0o700)


def test_the_plugin_writes_json_to_stdout_without_replacing_it(pytester):
    """--niah-json=/dev/stdout streams the results; the device node stays a device."""
    corpus = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "tiny"
    before = os.stat("/dev/null")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--niah-model=lexical:tfidf",
        f"--niah-corpus={corpus}",
        "--niah-lengths=128",
        "--niah-positions=2",
        "--niah-groups=dietary-01",
        "--niah-arms=literal",
        "--niah-json=/dev/null",
    )
    assert result.ret == 0, result.stdout.str()
    assert os.stat("/dev/null").st_ino == before.st_ino
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("mode", [0o644, 0o600, 0o640])
def test_a_replaced_file_keeps_its_permissions(tmp_path, mode):
    target = tmp_path / "report.html"
    target.write_text("old")
    target.chmod(mode)
    write_atomic(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == mode


def test_a_new_file_gets_the_mode_open_would_give_it(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", "{}")
        with open(tmp_path / "plain.json", "w") as plain:
            plain.write("{}")
    finally:
        os.umask(old)
    modes = {stat.S_IMODE((tmp_path / name).stat().st_mode) for name in ("new.json", "plain.json")}
    assert modes == {0o640}


def test_a_temp_whose_name_holds_no_pid_is_removed_without_error(tmp_path: Path) -> None:
    """A hand-made or foreign temp name (no pid after the mark) is stale: removed, no crash."""
    target = tmp_path / "report.html"
    odd = tmp_path / ".report.html.niah-tmp-notapid-1"
    odd.write_text("left by something else")
    remove_stale_temps(target)
    assert not odd.exists()
