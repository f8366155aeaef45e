"""Rules of files.py beside tests/test_files.py: the path length limit, this process's temps."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_niah.files import output_problem, remove_stale_temps, temp_prefix

PATH_MAX = 4096  # Linux's, as files.py checks it


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
