"""Rules of report/report_folder.py beside its kill tests: which previous report comes back."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

import pytest

from pytest_niah.errors import OutputError
from pytest_niah.files import TMP_MARK, temp_prefix
from pytest_niah.report.report_folder import (
    OLD_MARK,
    foreign_entries,
    replaced_folder,
    report_folder_problem,
)


def test_a_missing_report_comes_back_as_the_newest_one_renamed_aside(tmp_path: Path):
    # Found (mutation seed 981343202, report_folder.py:184): after kills between the
    # fallback's two renames, two previous reports may wait beside the folder: the newest
    # is the one the folder held last.
    target = tmp_path / "niah-report"
    for n, (name, mtime) in enumerate([("older", 1_000_000), ("newer", 2_000_000)]):
        aside = tmp_path / f"{temp_prefix(target)}{OLD_MARK}{n:08x}"
        aside.mkdir()
        (aside / "summary.md").write_text(name, encoding="utf-8")
        os.utime(aside, ns=(mtime * 10**9, mtime * 10**9))
    with pytest.raises(RuntimeError), replaced_folder(target):
        raise RuntimeError("the new report failed: the previous one stays")
    assert (target / "summary.md").read_text(encoding="utf-8") == "newer"


def _refused(folder: Path) -> str:
    with pytest.raises(OutputError) as caught, replaced_folder(folder):
        pass
    return caught.value.problem


def test_a_refusal_names_three_foreign_entries_and_counts_the_rest(tmp_path: Path):
    # Found (mutation, report_folder.py:46 _SHOWN and :106 the count): the message names at
    # most three entries, then says how many more.
    folder = tmp_path / "out"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (folder / name).write_text("mine")
    assert "(a.txt, b.txt, c.txt); the report" in _refused(folder)
    for name in ("d.txt", "e.txt"):
        (folder / name).write_text("mine")
    assert "(a.txt, b.txt, c.txt and 2 more); the report" in _refused(folder)
    assert report_folder_problem(folder).startswith("holds files that are not")


def test_the_root_folder_is_never_replaced():
    # Found (mutation, report_folder.py:91): "/" has no name; a report cannot take its place.
    assert report_folder_problem("/") == "is the root folder, which a report cannot replace"


def test_the_new_report_folder_keeps_the_replaced_ones_mode_or_gets_a_plain_mkdirs(
    tmp_path: Path,
):
    # Found (mutation, report_folder.py:190-207): a report replacing a folder of mode 0o750
    # keeps 0o750; a new one gets what a plain mkdir gives (0o777 less the umask).
    kept = tmp_path / "kept"
    kept.mkdir()
    kept.chmod(0o750)
    with replaced_folder(kept) as staging:
        (staging / "summary.md").write_text("new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o750
    before = os.umask(0o027)
    try:
        with replaced_folder(tmp_path / "new") as staging:
            (staging / "summary.md").write_text("new")
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o750  # 0o777 & ~0o027


def test_where_the_new_folder_cannot_be_renamed_in_the_previous_report_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Found (mutation, report_folder.py:222-224): without the exchange (not Linux), the old
    # folder is renamed aside first; if the new one then cannot take its name, the old one
    # goes back, and the error says the previous report was kept.
    monkeypatch.setattr(sys, "platform", "darwin")
    target = tmp_path / "out"
    with replaced_folder(target) as staging:
        (staging / "summary.md").write_text("previous")
    rename = os.rename

    def refuse_the_new_one(src, dst) -> None:
        if Path(dst) == target and TMP_MARK in Path(src).name and OLD_MARK not in str(src):
            raise PermissionError(13, "Permission denied")
        rename(src, dst)

    monkeypatch.setattr(os, "rename", refuse_the_new_one)
    with pytest.raises(OutputError) as caught, replaced_folder(target) as staging:
        (staging / "summary.md").write_text("new")
    monkeypatch.setattr(os, "rename", rename)
    assert caught.value.problem == f"cannot replace the report folder {target}: Permission denied"
    assert "the previous report was kept" in caught.value.hint
    assert (target / "summary.md").read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # nothing left beside it


def test_a_folder_name_too_long_to_stage_beside_is_refused_naming_the_system_error(
    tmp_path: Path,
):
    # Found (mutation, report_folder.py:202 `exc.strerror or exc` -> `and`): the hidden
    # staging folder's name is the target's plus a mark, a pid and a random part; a target
    # name of 240 bytes leaves it past the 255-byte limit of a name.
    target = tmp_path / ("r" * 240)
    with pytest.raises(OutputError) as caught, replaced_folder(target):
        pass
    assert caught.value.problem == (
        f"cannot write the report folder {target}: cannot create a folder in {tmp_path} "
        "(File name too long)"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_report_folder_is_made_with_its_missing_parents_or_refused_naming_why(tmp_path: Path):
    # Found (mutation, report_folder.py:128 `parents=True` -> False, :132 `exc.strerror or
    # exc` -> `and`): missing folders above the report are created; a file in their place
    # is refused with the system's reason.
    deep = tmp_path / "a" / "b" / "report"
    with replaced_folder(deep) as staging:
        (staging / "summary.md").write_text("new")
    assert (deep / "summary.md").read_text() == "new"
    (tmp_path / "file.txt").write_text("not a folder")
    target = tmp_path / "file.txt" / "sub" / "report"
    with pytest.raises(OutputError) as caught, replaced_folder(target):
        pass
    assert caught.value.problem == f"cannot create the report folder {target}: Not a directory"


def test_a_file_where_the_report_folder_should_be_is_not_a_folder(tmp_path: Path):
    # Found (mutation, report_folder.py:95 the check deleted): a file at the report's path is
    # named as such, not as a folder that cannot be read.
    (tmp_path / "report").write_text("a file")
    assert report_folder_problem(tmp_path / "report") == "is not a folder"


def test_a_missing_folder_has_no_foreign_entries(tmp_path: Path):
    # Found (mutation, report_folder.py:67 `return []` -> None): asked of a folder that is
    # not there, the answer is an empty list (callers iterate and count it).
    assert foreign_entries(tmp_path / "missing") == []


def test_a_link_named_like_a_report_file_is_foreign(tmp_path: Path):
    # Found (mutation, report_folder.py:72 `entry.is_symlink()` dropped): a link is the
    # user's, whatever its name: the folder is refused, not dropped with it.
    (tmp_path / "mine.md").write_text("the user's")
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "summary.md").symlink_to(tmp_path / "mine.md")
    assert foreign_entries(folder) == ["summary.md"]
    assert report_folder_problem(folder).startswith("holds files that are not a pytest-niah")


def test_a_deleted_working_folder_is_no_current_folder_to_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Found (mutation, report_folder.py:168 `return False` -> True): where the working
    # folder was deleted under the process, no report folder is "the current folder".
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    (tmp_path / "report").mkdir()
    assert report_folder_problem(tmp_path / "report") == ""


def test_only_this_folders_renamed_aside_report_comes_back(tmp_path: Path):
    # Found (mutation, report_folder.py:179, each clause of the filter dropped): another
    # folder's old report, this folder's staging folder (not "-old-") and a file named like
    # an old report are never put in the report's place.
    target = tmp_path / "niah-report"
    other = tmp_path / f"{temp_prefix(tmp_path / 'another')}{OLD_MARK}00000001"
    staging = tmp_path / f"{temp_prefix(target)}00000002"
    a_file = tmp_path / f"{temp_prefix(target)}{OLD_MARK}00000003"
    for folder in (other, staging):
        folder.mkdir()
        (folder / "summary.md").write_text("not this report's")
    a_file.write_text("a file")
    with pytest.raises(RuntimeError), replaced_folder(target):
        raise RuntimeError("the new report failed")
    assert not target.exists()


def test_a_folder_that_cannot_be_listed_is_refused_naming_why(tmp_path: Path, monkeypatch):
    # Found (mutation, report_folder.py:102 the refusal's `return` -> None): a report folder
    # the process may not list cannot be checked for foreign files, so it is refused with
    # the system's reason. Root may list any folder: the refusal is the one the operating
    # system gives a user without read access, made here.
    target = tmp_path / "niah-report"
    target.mkdir()
    real_iterdir = Path.iterdir

    def iterdir(self: Path):
        if self == target:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    assert report_folder_problem(target) == "cannot be read (Permission denied)"
    with (
        pytest.raises(OutputError, match=r"cannot be read \(Permission denied\)"),
        replaced_folder(target),
    ):
        pass


def test_the_longest_folder_name_whose_staging_folder_fits_is_written(tmp_path: Path):
    # Found (mutation, report_folder.py:194 the random part's 4 bytes -> 5): the staging
    # folder's name is the target's plus 1 + len(mark) + the pid + 1 + 8 hex characters;
    # a target name that leaves exactly 255 bytes for it is written, one byte more is not.
    room = 255 - len(f".{TMP_MARK}{os.getpid()}-") - 8
    target = tmp_path / ("r" * room)
    with replaced_folder(target) as staging:
        assert len(staging.name) == 255
        (staging / "summary.md").write_text("new", encoding="utf-8")
    assert (target / "summary.md").read_text(encoding="utf-8") == "new"
    with (
        pytest.raises(OutputError, match="File name too long"),
        replaced_folder(tmp_path / ("r" * (room + 1))),
    ):
        pass


def test_without_the_exchange_the_longest_name_whose_aside_name_fits_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Found (mutation, report_folder.py:218 the renamed-aside name's 4 random bytes -> 5):
    # where folders cannot be exchanged (not Linux), the previous report is renamed aside
    # under the staging name's form plus "old-"; a target name that leaves exactly 255
    # bytes for that name is still replaced.
    monkeypatch.setattr(sys, "platform", "darwin")
    room = 255 - len(f".{TMP_MARK}{os.getpid()}-{OLD_MARK}") - 8
    target = tmp_path / ("r" * room)
    for text in ("previous", "new"):
        with replaced_folder(target) as staging:
            (staging / "summary.md").write_text(text, encoding="utf-8")
    assert (target / "summary.md").read_text(encoding="utf-8") == "new"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


# -- the exchange and its fallback, on any system: the C library faked where it must fail ------


def write_report(target: Path, text: str) -> None:
    with replaced_folder(target) as staging:
        (staging / "summary.md").write_text(text, encoding="utf-8")


class FakeLibrary:
    """A C library whose ``renameat2`` fails with ``code`` (or is missing: ``code`` None)."""

    def __init__(self, code: int | None) -> None:
        self.code = code

    def __getattr__(self, name: str):
        if name != "renameat2" or self.code is None:
            raise AttributeError(name)
        code = self.code

        def renameat2(*args: object) -> int:
            import ctypes

            ctypes.set_errno(code)
            return -1

        return renameat2


def fake_library(monkeypatch: pytest.MonkeyPatch, code: int | None) -> None:
    import ctypes

    monkeypatch.setattr(ctypes, "CDLL", lambda *args, **kwargs: FakeLibrary(code))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the exchange is Linux's")
def test_on_linux_a_report_is_replaced_in_one_step_the_folder_never_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    target = tmp_path / "niah-report"
    write_report(target, "first")
    renames, rename = [], os.rename

    def recording_rename(src, dst, *args, **kwargs):
        renames.append((Path(src), Path(dst)))
        return rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", recording_rename)
    write_report(target, "second")
    assert (target / "summary.md").read_text(encoding="utf-8") == "second"
    assert not any(src == target for src, _ in renames), renames  # never renamed away
    assert sorted(p.name for p in tmp_path.iterdir()) == ["niah-report"]


@pytest.mark.parametrize(
    "code",
    [None, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV],
    ids=["no-renameat2", "EINVAL", "ENOSYS", "EOPNOTSUPP", "EXDEV"],
)
def test_where_the_system_cannot_exchange_the_report_is_still_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int | None
):
    # None: a C library without renameat2 (musl); EINVAL, ENOSYS, EOPNOTSUPP, EXDEV: a
    # kernel or file system without the exchange. The two-rename fallback replaces it.
    monkeypatch.setattr(sys, "platform", "linux")
    target = tmp_path / "niah-report"
    write_report(target, "first")
    fake_library(monkeypatch, code)
    write_report(target, "second")
    assert (target / "summary.md").read_text(encoding="utf-8") == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["niah-report"]


def test_an_exchange_that_fails_otherwise_is_refused_naming_why_the_previous_report_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(sys, "platform", "linux")
    target = tmp_path / "niah-report"
    write_report(target, "first")
    fake_library(monkeypatch, errno.EIO)
    with pytest.raises(OutputError) as caught:
        write_report(target, "second")
    assert os.strerror(errno.EIO) in caught.value.problem
    assert (target / "summary.md").read_text(encoding="utf-8") == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["niah-report"]


def test_a_leftover_that_cannot_be_removed_does_not_fail_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # Root removes any folder: the removal's refusal is made here, as rmtree reports one.
    import shutil

    removed = []

    def rmtree(path, ignore_errors=False, **kwargs):
        removed.append(Path(path))
        if not ignore_errors:
            raise PermissionError(13, "Permission denied", str(path))

    target = tmp_path / "niah-report"
    write_report(target, "first")
    monkeypatch.setattr(shutil, "rmtree", rmtree)
    write_report(target, "second")  # the previous report, swapped out, stays behind
    assert (target / "summary.md").read_text(encoding="utf-8") == "second"
    assert removed
    monkeypatch.setattr(sys, "platform", "darwin")  # the fallback removes the old one too
    write_report(target, "third")
    assert (target / "summary.md").read_text(encoding="utf-8") == "third"


def test_a_link_loop_at_the_reports_name_is_not_taken_for_a_missing_report(tmp_path: Path):
    # A link that leads nowhere is not "no folder": the renamed-aside report stays aside.
    target = tmp_path / "niah-report"
    target.symlink_to(target)
    aside = tmp_path / f"{temp_prefix(target)}{OLD_MARK}00000000"
    aside.mkdir()
    (aside / "summary.md").write_text("previous", encoding="utf-8")
    with pytest.raises(OutputError) as caught, replaced_folder(target):
        pass
    assert "cannot replace the report folder" in caught.value.problem  # nothing to create
    assert target.is_symlink() and os.readlink(target) == str(target)
    assert (aside / "summary.md").read_text(encoding="utf-8") == "previous"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_a_failed_exchange_raises_the_systems_own_error(tmp_path: Path) -> None:
    from pytest_niah.report.report_folder import _exchange

    (tmp_path / "new").mkdir()
    with pytest.raises(OSError) as info:
        _exchange(tmp_path / "new", tmp_path / "missing")
    assert info.value.errno == errno.ENOENT  # what the system said, not a blank 0
