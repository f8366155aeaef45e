"""--niah-shard with --niah-no-cache: a shard job keeps what a whole run keeps: nothing."""

from __future__ import annotations

import pytest

STATIC = "packaged-static"
SMALL = ("--niah-lengths=128", "--niah-positions=2", "--niah-arms=literal")


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_no_cache_writes_nothing_into_the_cache_folder_sharded_or_not(niah, tmp_path):
    # Found: the shard job wrote sentence token counts into the cache folder; the whole
    # run with the same options wrote nothing there.
    whole, shard = tmp_path / "whole-cache", tmp_path / "shard-cache"
    whole.mkdir(), shard.mkdir()
    plain = niah.run(*SMALL, "--niah-no-cache", f"--niah-cache-dir={whole}", model=STATIC)
    assert plain.ret == pytest.ExitCode.OK, plain.stdout.str()
    job = niah.run(
        *SMALL,
        "--niah-shard=1/2",
        "--niah-shard-dir=parts",
        "--niah-no-cache",
        f"--niah-cache-dir={shard}",
        model=STATIC,
    )
    assert job.ret == pytest.ExitCode.OK, job.stdout.str()
    assert (niah.pytester.path / "parts" / "part-001-of-002.npz").is_file()
    assert files_under(whole) == files_under(shard) == []
