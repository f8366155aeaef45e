"""Results files, saved runs, books and data files are read within a bound (issue 33, item 4).

``pytest-niah report /dev/zero`` read without end (killed at 137); a 1 GB book was read in
full. Now a device, pipe or socket is refused before a byte is read, and so is a file (or
a saved run's decompressed content) larger than the most read of its kind; the message
names the file, the limit and the fix, on one line.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from pytest_niah.cli import main
from pytest_niah.errors import CorpusError, NeedleSetError
from pytest_niah.inputs.books import MAX_BOOK_BYTES
from pytest_niah.inputs.corpus import load_folder
from pytest_niah.inputs.jsonfile import MAX_JSON_BYTES
from pytest_niah.inputs.needles import load_needle_set
from pytest_niah.results import niah_results
from pytest_niah.results.niah_results import MAX_RESULTS_BYTES


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("command", ["report", "summary"])
def test_a_device_is_refused_before_it_is_read(capsys, command):
    err = _one_line_error(capsys, [command, "/dev/zero"])
    assert "/dev/zero: not a regular file (a device, pipe or socket)" in err


def test_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    err = _one_line_error(capsys, ["summary", str(fifo)])
    assert f"{fifo}: not a regular file" in err


def test_a_results_file_past_the_limit_is_refused_by_its_size(tmp_path, capsys):
    big = tmp_path / "results.json"
    with big.open("wb") as handle:  # sparse: nothing is written to disk
        handle.truncate(MAX_RESULTS_BYTES + 1)
    err = _one_line_error(capsys, ["summary", str(big)])
    assert f"{big}: larger than {MAX_RESULTS_BYTES >> 20} MiB, the most read of a" in err


def test_a_saved_run_that_decompresses_past_the_limit_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(niah_results, "MAX_RESULTS_BYTES", 1 << 20)
    bomb = tmp_path / "run.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (3 << 20)))  # 3 KiB on disk, 3 MiB inside
    err = _one_line_error(capsys, ["summary", str(bomb)])
    assert f"{bomb}: larger than 1 MiB" in err


def test_a_book_past_the_limit_is_refused_by_its_size(tmp_path):
    with (tmp_path / "huge.txt").open("wb") as handle:
        handle.truncate(MAX_BOOK_BYTES + 1)
    with pytest.raises(CorpusError) as caught:
        load_folder(tmp_path)
    message = str(caught.value)
    assert f"huge.txt: larger than {MAX_BOOK_BYTES >> 20} MiB, the most read of a corpus book" in (
        message
    )


def test_a_needle_set_past_the_limit_or_a_device_is_refused(tmp_path):
    big = tmp_path / "needles.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_JSON_BYTES + 1)
    with pytest.raises(NeedleSetError, match=f"larger than {MAX_JSON_BYTES >> 20} MiB"):
        load_needle_set(big)
    with pytest.raises(NeedleSetError, match="not a regular file"):
        load_needle_set("/dev/zero")
    assert Path(big).stat().st_size == MAX_JSON_BYTES + 1  # nothing touched
