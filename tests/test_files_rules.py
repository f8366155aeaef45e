"""Rules of files.py beside tests/test_files.py: the path length limit, this process's temps."""

from __future__ import annotations

import errno
import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_niah.bounded_reads import ReadRefused, gunzip_bounded, read_bounded
from pytest_niah.files import (
    TMP_MARK,
    create_whole,
    remove_stale_temps,
    remove_temp,
    temp_prefix,
    write_atomic,
)
from pytest_niah.output_paths import output_problem

PATH_MAX = 4096  # Linux's, as output_paths.py checks it


def _path_of(root: Path, size: int) -> Path:
    """A path under ``root`` whose absolute form is ``size`` bytes, each name under 255."""
    path = root.absolute()
    while size - len(os.fsencode(str(path))) > 201:
        path = path / ("d" * 200)
    return path / ("f" * (size - len(os.fsencode(str(path))) - 1))


def test_a_path_of_exactly_the_limit_is_usable_one_byte_more_is_not(tmp_path: Path):
    # Found (mutation seed 981343202, files.py:187): the limit is inclusive.
    at_limit, over = _path_of(tmp_path, PATH_MAX), _path_of(tmp_path, PATH_MAX + 1)
    assert len(os.fsencode(str(at_limit))) == PATH_MAX
    assert "longer than" not in output_problem(at_limit)
    assert f"the path is longer than {PATH_MAX} bytes" in output_problem(over)


def test_this_processs_own_leftover_temp_is_removed(tmp_path: Path):
    # Found (mutation seed 981343202, files.py:228): a live writer's temps are kept, but this
    # process is not "another" writer: a temp it left (an earlier write of it that failed) goes.
    target = tmp_path / "results.json"
    own = tmp_path / (temp_prefix(target) + "abc")
    own.write_bytes(b"half")
    remove_stale_temps(target)
    assert not own.exists()


def test_where_proc_shows_no_umask_a_write_leaves_the_processs_umask_as_it_was(
    tmp_path: Path, monkeypatch
):
    # Found (mutation, files.py:170 the umask's restore deleted): off Linux the umask is read
    # by setting it, and must be set back, or every later file of the process gets 0o022's.
    real_read = Path.read_text

    def no_proc(self: Path, *args, **kwargs) -> str:
        if str(self) == "/proc/self/status":
            raise OSError("no /proc here")
        return real_read(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", no_proc)
    before = os.umask(0o077)
    try:
        written = write_atomic(tmp_path / "report.md", "x")
        after = os.umask(before)
    finally:
        os.umask(before)
    assert after == 0o077
    assert written.stat().st_mode & 0o777 == 0o600


def test_a_file_of_exactly_the_limit_is_read_one_byte_more_is_not(tmp_path: Path):
    # Found (mutation, files.py:62 `len(data) > limit` -> `>=`): the limit is inclusive,
    # for a file and for what a gzip file holds.
    exact, over = tmp_path / "exact", tmp_path / "over"
    exact.write_bytes(b"x" * 64)
    over.write_bytes(b"x" * 65)
    assert read_bounded(exact, 64, "run file") == b"x" * 64
    with pytest.raises(ReadRefused):
        read_bounded(over, 64, "run file")
    assert gunzip_bounded(gzip.compress(b"y" * 64), 64, "run file") == b"y" * 64
    with pytest.raises(ReadRefused):
        gunzip_bounded(gzip.compress(b"y" * 65), 64, "run file")


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="Linux's /proc")
def test_a_file_longer_than_its_stated_size_is_still_cut_at_the_limit():
    # A file may hold more than its size said (it grew since, or /proc's size-0 files): the
    # bytes read are counted too, not only the size.
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(ReadRefused, match="larger than"):
        read_bounded("/proc/self/status", 16, "run file")


def test_a_left_staging_folder_is_removed_and_a_link_to_a_folder_only_unlinked(tmp_path: Path):
    # Found (mutation, files.py:236 `not entry.is_symlink()` -> `entry.is_symlink()`): a
    # report staged in a folder is removed whole; a link named like one goes, never what it
    # points to.
    staged = tmp_path / "staged"
    (staged / "sub").mkdir(parents=True)
    (staged / "sub" / "index.html").write_text("x")
    remove_temp(staged)
    assert not staged.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "run.json").write_text("{}")
    link = tmp_path / "link"
    link.symlink_to(kept, target_is_directory=True)
    remove_temp(link)
    assert not link.exists() and not link.is_symlink()
    assert (kept / "run.json").read_text() == "{}"


SYS_FILE = Path("/sys/kernel/uevent_seqnum")  # sysfs: a stated size of 4096, a few bytes held


@pytest.mark.skipif(not SYS_FILE.is_file(), reason="Linux's sysfs")
def test_a_file_whose_stated_size_is_over_the_limit_is_refused_before_it_is_read():
    # Found (mutation, files.py:60 the size check's raise deleted): the file's size refuses
    # it before a byte is read (a huge file is never read in), whatever reading would give.
    assert SYS_FILE.stat().st_size > 64 >= len(SYS_FILE.read_bytes())
    with pytest.raises(ReadRefused, match="larger than"):
        read_bounded(SYS_FILE, 64, "run file")


def test_looking_for_a_live_writer_never_signals_it(tmp_path: Path):
    # Found (mutation, files.py:253 `os.kill(pid, 0)` -> `os.kill(pid, 1)`): the check only
    # asks whether the writer runs; it must not send it a signal (1 = SIGHUP ends it).
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        target = tmp_path / "report.html"
        busy = tmp_path / (f".{target.name}{TMP_MARK}{live.pid}-xyz")
        busy.write_text("being written")
        write_atomic(target, "whole")
        assert busy.exists()
        time.sleep(0.2)
        assert live.poll() is None, "the live writer was signalled"
    finally:
        live.kill()
        live.wait()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux's /proc")
def test_writing_leaves_no_descriptor_open(tmp_path: Path):
    # Found (mutation, files.py:274 the folder's descriptor never closed): a run writes
    # thousands of files; each must give its descriptors back.
    before = len(os.listdir("/proc/self/fd"))
    for n in range(20):
        write_atomic(tmp_path / f"{n}.json", "{}")
    assert len(os.listdir("/proc/self/fd")) == before


def test_where_the_file_system_has_no_hard_links_a_name_is_still_created_once(
    tmp_path: Path, monkeypatch
):
    # Found (mutation, files.py:144-146, the fallback's check and rename): on a file system
    # without hard links (FAT, some network mounts: link() fails with EPERM) the file is
    # created by a rename, and an existing one is never replaced.
    def no_links(src, dst, *args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    target = tmp_path / "run-1.json"
    assert create_whole(target, b"first") is True
    assert create_whole(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["run-1.json"]  # no temp left


def test_a_temp_named_with_a_pid_too_large_for_the_system_is_removed_not_a_crash(
    tmp_path: Path,
):
    # Found while reading files.py:259 for mutants: os.kill() raises OverflowError (not an
    # OSError) for a pid past a C long, so one odd file name beside an output makes every
    # write of that output fail with a traceback. It is no live process's temp: remove it.
    target = tmp_path / "results.json"
    odd = tmp_path / f".results.json{TMP_MARK}{'9' * 30}-abc"
    odd.write_text("x")
    write_atomic(target, "{}")
    assert target.read_text() == "{}" and not odd.exists()


READ_ONLY = Path("/proc/sys")  # mounted read-only in most containers: unwritable even to root


@pytest.mark.skipif(
    not READ_ONLY.is_dir() or os.access(READ_ONLY, os.W_OK),
    reason="needs a read-only folder (tests/test_files.py checks a locked one as non-root)",
)
def test_a_read_only_folder_is_a_problem_even_for_root():
    # Found (mutation, files.py:194 and :202, the access checks deleted): where the suite
    # runs as root, chmod cannot lock a folder; a read-only mount still refuses everyone.
    assert (
        output_problem(READ_ONLY / "x.json") == f"cannot be created: no write access to {READ_ONLY}"
    )
    assert output_problem(READ_ONLY, folder=True) == "is not writable"


def test_an_existing_file_is_a_writable_output_unless_a_folder_is_asked(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("{}")
    assert output_problem(target) == ""
    assert output_problem(target, folder=True) == "is not a folder"
    assert output_problem(tmp_path) == "is a folder, not a file"


def test_a_name_of_exactly_255_bytes_is_usable_one_more_is_named(tmp_path: Path):
    assert output_problem(tmp_path / ("n" * 255)) == ""
    long_name = "a" * 40 + "b" * 216
    assert output_problem(tmp_path / long_name / "x.json") == (
        f"the name {'a' * 40}... is longer than 255 bytes"
    )
    assert "longer than 255" in output_problem(tmp_path / ("é" * 128))  # 256 bytes in UTF-8


@pytest.mark.parametrize("kind", ["device", "pipe"])
def test_a_device_or_a_pipe_is_refused_as_not_a_regular_file(tmp_path: Path, kind: str):
    """Refused for what it is, before a byte is read: /dev/zero would pass the size check
    only by filling the limit, and a pipe with no writer reads as empty."""
    path = Path("/dev/zero")
    if kind == "pipe":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    with pytest.raises(ReadRefused, match="not a regular file"):
        read_bounded(path, 64, "run file")
