"""The CI page's sharded recipes (GitLab CI, Slurm arrays) run as written, from its text.

The GitLab pipeline's YAML is parsed from docs/ci.md; its parallel jobs, artifacts and job
order are checked, then every ``pytest`` line of its scripts runs for real (each parallel job
in a fresh folder with its ``CI_NODE_INDEX``, the artifacts gathered into the gate job's
folder as GitLab does), with ``$NIAH`` set to a small grid on the packaged static model. The
Slurm scripts run under bash with the array's task ids. Both gate against one committed
baseline, an unsharded run saved once for the module (``pytest $NIAH --niah-save=baseline``)
and copied, with the cache that run left, into each recipe's gate folder (as when each
recipe saved it there itself). The
GitHub workflow and the composite action the page includes are the repository's own files,
run by their own tests. Only the tests that run models are slow; the parse-only check runs
in every test run.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from doc_blocks import DOCS, blocks, run_shell, section

yaml = pytest.importorskip("yaml")

CI_PAGE = DOCS / "ci.md"
NIAH = (
    "--niah-model=prod=packaged-static --niah-lengths=128,256 "
    "--niah-positions=2 --niah-arms=literal --niah-groups=dietary-01,location-01,medical-01"
)


def page_blocks(title: str, lang: str) -> list[str]:
    text = section(CI_PAGE, title)
    return [b.code for b in blocks(CI_PAGE, lang) if f"```{lang}\n{b.code}```" in text]


(GITLAB_TEXT,) = page_blocks("## GitLab CI", "yaml")
GITLAB = yaml.safe_load(GITLAB_TEXT)


def run_step(command: str, folder: Path, **extra: str):
    return run_shell(command, folder, NIAH=NIAH, NIAH_CACHE_DIR=str(folder / "cache"), **extra)


@pytest.fixture(scope="module")
def committed_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose default store (``.niah/``) holds one unsharded run saved as "baseline"."""
    folder = tmp_path_factory.mktemp("baseline")
    saved = run_step("pytest $NIAH --niah-save=baseline", folder)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    assert list((folder / ".niah").rglob("baseline*")), saved.stdout
    return folder


def checkout(baseline: Path, folder: Path) -> None:
    """``folder`` holding the committed store, and the cache the saving run left there."""
    for name in (".niah", "cache"):
        shutil.copytree(baseline / name, folder / name)


def pytest_lines(job: dict) -> list[str]:
    return [line for line in job["script"] if line.startswith("pytest ")]


def test_the_gitlab_pipeline_is_consistent():
    embed, gate = GITLAB["embed"], GITLAB["gate"]
    assert GITLAB["stages"] == [embed["stage"], gate["stage"]]
    assert gate["needs"] == ["embed"]
    (command,) = pytest_lines(embed)
    assert "--niah-shard=$CI_NODE_INDEX/$CI_NODE_TOTAL" in command
    shard_dir = re.search(r"--niah-shard-dir=(\S+)", command)[1]
    assert [p.rstrip("/") for p in embed["artifacts"]["paths"]] == [shard_dir]
    (gate_command,) = pytest_lines(gate)
    assert f"--niah-from-shards={shard_dir}" in gate_command
    assert "--niah-compare-fail=auc:" in gate_command and ",ratio:" in gate_command
    report = re.search(r"--niah-report=(\S+)", gate_command)[1]
    assert [p.rstrip("/") for p in gate["artifacts"]["paths"]] == [report]
    assert gate["artifacts"]["when"] == "always"


@pytest.mark.slow
def test_the_gitlab_pipeline_runs_and_gates_like_an_unsharded_run(tmp_path, committed_baseline):
    embed, gate = GITLAB["embed"], GITLAB["gate"]
    (embed_command,) = pytest_lines(embed)
    (gate_command,) = pytest_lines(gate)
    total = embed["parallel"]
    gate_dir = tmp_path / "gate"
    checkout(committed_baseline, gate_dir)  # the unsharded run saved as "baseline"
    for index in range(1, total + 1):
        job_dir = tmp_path / f"embed-{index}"
        env = {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(total)}
        done = run_step(embed_command, job_dir, **env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "part written:" in done.stdout
        for path in embed["artifacts"]["paths"]:  # GitLab extracts each job's artifacts here
            shutil.copytree(job_dir / path, gate_dir / path, dirs_exist_ok=True)
    gated = run_step(gate_command, gate_dir)
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "measured from the shard parts" in gated.stdout
    assert "prod versus" in gated.stdout
    report = re.search(r"--niah-report=(\S+)", gate_command)[1]
    assert (gate_dir / report / "report.html").is_file()
    assert (gate_dir / report / "comparison.json").is_file()


@pytest.mark.slow
def test_the_slurm_scripts_run_as_an_array_then_a_gate(tmp_path, committed_baseline):
    embed, gate = page_blocks("## Slurm arrays", "bash")
    first, last = map(int, re.search(r"#SBATCH --array=(\d+)-(\d+)", embed).groups())
    assert first == 1 and f"/{last}" in embed
    scratch = tmp_path / "scratch"
    work = tmp_path / "work"
    checkout(committed_baseline, work)
    for task in range(first, last + 1):
        done = run_step(embed, work, SLURM_ARRAY_TASK_ID=str(task), SCRATCH=str(scratch))
        assert done.returncode == 0, done.stdout + done.stderr
    assert len(list((scratch / "niah-parts").glob("part-*.npz"))) == last
    gated = run_step(gate, work, SCRATCH=str(scratch))
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert "measured from the shard parts" in gated.stdout
