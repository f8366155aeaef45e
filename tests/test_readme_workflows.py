"""The README's sharded CI workflows (GitHub Actions, Slurm) are run as written.

The workflow's YAML is parsed; its matrix, artifacts and job order are checked, then every
``pytest`` step runs for real (each shard job in a fresh folder, its artifact copied the way
``download-artifact`` with ``merge-multiple`` gathers them), with ``$NIAH`` set to a small
grid on the packaged static model. The Slurm scripts run under bash with the array's task ids.
Only the tests that run models are slow; the parse-only check runs in every test run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
NIAH = (
    "--niah-model=prod=packaged-static --niah-lengths=128,256 "
    "--niah-positions=2 --niah-arms=literal --niah-groups=dietary-01,location-01,medical-01"
)


def section(title: str) -> str:
    start = README.index(title)
    end = README.index("\n### ", start + 1)
    return README[start:end]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


SHARDING = section("### Sharding across CI jobs")
WORKFLOW = yaml.safe_load(blocks(SHARDING, "yaml")[0])


def environment(folder: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NIAH_", "GITHUB_"))}
    # `pytest` in the README's commands is this interpreter's, even where its pytest came
    # from a base environment whose own `pytest` script runs another Python.
    bin_dir = folder.parent / "pytest-shim"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "pytest"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pytest "$@"\n')
    shim.chmod(0o755)
    env |= {
        "NIAH": NIAH,
        "NIAH_CACHE_DIR": str(folder / "cache"),
        "HF_HUB_OFFLINE": "1",
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env["PATH"]]),
    }
    return env | extra


def run_step(command: str, folder: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=environment(folder, **extra),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def pytest_steps(job: dict) -> list[str]:
    return [s["run"] for s in job["steps"] if str(s.get("run", "")).startswith("pytest ")]


def uses(job: dict, action: str) -> list[dict]:
    return [s.get("with", {}) for s in job["steps"] if str(s.get("uses", "")).startswith(action)]


def test_the_github_workflow_is_consistent():
    embed, gate = WORKFLOW["jobs"]["embed"], WORKFLOW["jobs"]["gate"]
    shards = embed["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    (command,) = pytest_steps(embed)
    assert f"--niah-shard=${{{{ matrix.shard }}}}/{len(shards)}" in command
    shard_dir = re.search(r"--niah-shard-dir=(\S+)", command)[1]
    (upload,) = uses(embed, "actions/upload-artifact")
    assert upload["path"].rstrip("/") == shard_dir
    (download,) = uses(gate, "actions/download-artifact")
    assert re.fullmatch(download["pattern"].replace("*", ".*"), upload["name"].split("$")[0] + "1")
    assert download["merge-multiple"] is True
    assert gate["needs"] == "embed"
    (gate_command,) = pytest_steps(gate)
    assert f"--niah-from-shards={download['path']}" in gate_command


@pytest.mark.slow
def test_the_github_workflow_runs_and_gates_like_an_unsharded_run(tmp_path):
    embed, gate = WORKFLOW["jobs"]["embed"], WORKFLOW["jobs"]["gate"]
    (embed_command,) = pytest_steps(embed)
    (gate_command,) = pytest_steps(gate)
    (upload,) = uses(embed, "actions/upload-artifact")
    (download,) = uses(gate, "actions/download-artifact")
    gate_dir = tmp_path / "gate"
    # The committed baseline: one unsharded run saved as "baseline".
    saved = run_step("pytest $NIAH --niah-save=baseline", gate_dir)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    for shard in WORKFLOW["jobs"]["embed"]["strategy"]["matrix"]["shard"]:
        job_dir = tmp_path / f"embed-{shard}"
        done = run_step(embed_command.replace("${{ matrix.shard }}", str(shard)), job_dir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "part written:" in done.stdout
        artifact = job_dir / upload["path"]
        shutil.copytree(artifact, gate_dir / download["path"], dirs_exist_ok=True)
    gated = run_step(gate_command, gate_dir)
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "measured from the shard parts" in gated.stdout
    assert "prod versus" in gated.stdout
    report = re.search(r"--niah-report=(\S+)", gate_command)[1]
    assert (gate_dir / report / "report.html").is_file()
    assert (gate_dir / report / "comparison.json").is_file()


@pytest.mark.slow
def test_the_slurm_scripts_run_as_an_array_then_a_gate(tmp_path):
    embed, gate = blocks(SHARDING, "bash")
    first, last = map(int, re.search(r"#SBATCH --array=(\d+)-(\d+)", embed).groups())
    assert first == 1 and f"/{last}" in embed
    scratch = tmp_path / "scratch"
    work = tmp_path / "work"
    saved = run_step("pytest $NIAH --niah-save=baseline", work)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    for task in range(first, last + 1):
        done = run_step(embed, work, SLURM_ARRAY_TASK_ID=str(task), SCRATCH=str(scratch))
        assert done.returncode == 0, done.stdout + done.stderr
    assert len(list((scratch / "niah-parts").glob("part-*.npz"))) == last
    gated = run_step(gate, work, SCRATCH=str(scratch))
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "measured from the shard parts" in gated.stdout
