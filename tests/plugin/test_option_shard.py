"""--niah-shard, --niah-shard-dir and --niah-from-shards: N embed jobs, then one gate job."""

from __future__ import annotations

import pytest

# The packaged static model (model2vec): a real embedder that can be split, and fast.
STATIC = "packaged-static"
SMALL = ("--niah-lengths=128,256", "--niah-positions=2", "--niah-arms=literal")


def run(niah, *args):
    return niah.run(*SMALL, *args, model=STATIC)


@pytest.mark.parametrize("draws", [(), ("--niah-seeds=3,5",)], ids=["one-draw", "two-seeds"])
def test_two_shard_jobs_then_a_gate_job_give_the_unsharded_results(niah, draws):
    whole = run(niah, *draws, "--niah-json=whole.json")
    assert whole.ret == pytest.ExitCode.OK
    parts = niah.pytester.path / "parts"
    for index in (1, 2):
        job = run(
            niah, *draws, f"--niah-shard={index}/2", "--niah-shard-dir=parts", "--niah-no-cache"
        )
        assert job.ret == pytest.ExitCode.OK, job.stdout.str()
        outcomes = job.parseoutcomes()
        assert outcomes.get("skipped", 0) > 0 and "passed" not in outcomes
        part = parts / f"part-{index:03d}-of-002.npz"
        job.stdout.fnmatch_lines([f"*shard {index}/2*", f"part written: {part}"])
        assert part.is_file()
    gate = run(niah, *draws, "--niah-from-shards=parts", "--niah-json=gated.json")
    assert gate.ret == pytest.ExitCode.OK, gate.stdout.str()
    gate.stdout.fnmatch_lines(["*measured from the shard parts in*nothing embedded*"])
    whole_text = (niah.pytester.path / "whole.json").read_text(encoding="utf-8")
    assert (niah.pytester.path / "gated.json").read_text(encoding="utf-8") == whole_text


def test_a_missing_part_stops_the_gate_job_naming_it(niah):
    job = run(niah, "--niah-shard=1/2", "--niah-shard-dir=parts")
    assert job.ret == pytest.ExitCode.OK
    gate = run(niah, "--niah-from-shards=parts")
    assert gate.ret == pytest.ExitCode.USAGE_ERROR
    text = gate.stdout.str() + gate.stderr.str()
    assert "part-002-of-002.npz" in text and "Traceback" not in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--niah-shard=3/2", "--niah-shard-dir=p"), "*--niah-shard*'3/2' is not K/N*"),
        (("--niah-shard=1/2",), "*--niah-shard needs --niah-shard-dir*"),
        (("--niah-shard-dir=p",), "*--niah-shard-dir is set without --niah-shard*"),
        (
            ("--niah-shard=1/2", "--niah-shard-dir=p", "--niah-report=r"),
            "*--niah-report belongs to the gate job*",
        ),
        (("--niah-from-shards=nowhere",), "*--niah-from-shards:*nowhere is not a folder*"),
    ],
)
def test_inconsistent_shard_options_are_usage_errors(niah, args, message):
    result = run(niah, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_several_problems_are_reported_together_before_any_work(niah):
    (niah.pytester.path / "a-file").write_text("in the way\n")
    result = run(
        niah, "--niah-shard=1/2", "--niah-compare-fail=ratio:5%", "--niah-json=a-file/out.json"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*4 problems, each with its fix:",
            "*1. --niah-shard needs --niah-shard-dir*",
            "*2. --niah-shard jobs embed and write a part file only; --niah-json belongs*",
            "*3. --niah-compare-fail has nothing to compare with*",
            f"*4. --niah-json: {niah.pytester.path}/a-file/out.json cannot be created: "
            f"{niah.pytester.path}/a-file is not a folder*",
        ]
    )
