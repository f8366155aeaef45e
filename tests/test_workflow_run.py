"""The workflow and the composite action, run step by step in a scratch repository (#31).

The scratch repository is a team's: its own ``tests/`` under ``testpaths`` and a conftest
importing a module that is not installed. Each job starts from a fresh clone of it (what
``actions/checkout`` gives: committed files only). Every ``run:`` step runs in bash with
the workflow's ``env`` and ``${{ }}`` values filled in, except the pip installs (the
libraries are installed here); ``uses:`` steps are played by what they do: artifacts are
uploaded to a folder per name and downloaded as ``download-artifact`` with
``merge-multiple`` lays them out (every matching artifact's files in one folder).

Only ``$NIAH`` differs from the workflow: the same label on ``packaged-static`` and a tiny
grid, so a run takes seconds. The baseline the gate compares with is made as the
workflow's header says (the same grid, ``--niah-save`` into the committed folder).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = yaml.safe_load((REPO / ".github" / "workflows" / "niah.yml").read_text())
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
TINY = "--niah-lengths=128 --niah-positions=2 --niah-groups=dietary-01,location-01,medical-01"
NIAH = f"--niah-model=minilm=packaged-static {TINY}"
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")
GRID_ID = re.compile(r"^test_niah\.py::test_(needle|gate)\[")

pytestmark = pytest.mark.slow


def expand(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``${{ name }}`` replaced; a name not in ``values`` is an error."""
    return EXPRESSION.sub(lambda m: values[m.group(1)], text)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A team's repository: own tests, testpaths, a conftest needing a missing module."""
    repo = tmp_path_factory.mktemp("team-repo")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / "tests").mkdir()
    (repo / "tests" / "conftest.py").write_text("import a_module_ci_does_not_install\n")
    (repo / "tests" / "test_unit.py").write_text("def test_unit():\n    pass\n")
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x", "--allow-empty")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "team repo")
    return repo


def base_env(job_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NIAH_", "GITHUB_"))}
    env.update(
        # This interpreter's python and pytest, whether or not its venv is activated.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
        PYTHONPATH=str(REPO),  # the code under test, in every subprocess
        NIAH_CACHE_DIR=str(job_dir.parent / f"{job_dir.name}-cache"),  # a runner of its own
        GITHUB_STEP_SUMMARY=str(job_dir.parent / f"{job_dir.name}-step-summary.md"),
        GITHUB_OUTPUT=str(job_dir.parent / f"{job_dir.name}-output"),
    )
    return env


def bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-ec", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def grid_size(repo: Path, env: dict[str, str]) -> int:
    listed = bash(f"pytest {NIAH} --collect-only -q", repo, env)
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert ids and all(GRID_ID.match(i) for i in ids), listed.stdout
    return len(ids)


def only_the_grid_ran(done: subprocess.CompletedProcess[str], size: int) -> None:
    out = done.stdout + done.stderr
    assert "a_module_ci_does_not_install" not in out and "test_unit" not in out, out
    counts = re.findall(r"(\d+) (passed|failed|skipped|xfailed|xpassed|error)", out)
    assert sum(int(n) for n, _ in counts) == size, out


@pytest.fixture(scope="module")
def blessed(scratch: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The baseline, saved with the workflow's grid and committed; the workflow's env."""
    workflow_env = {k: str(v) for k, v in WORKFLOW["env"].items()}
    workflow_env["NIAH"] = NIAH
    env = {**base_env(tmp_path_factory.mktemp("bless")), **workflow_env}
    saved = bash("pytest $NIAH --niah-save=baseline --niah-storage=niah-baseline", scratch, env)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    (path,) = (scratch / "niah-baseline").rglob("baseline.json.gz")
    relative = path.relative_to(scratch).as_posix()
    # The workflow names the file a Linux x86-64 / CPython 3.11 runner writes.
    assert re.sub(r"/[^/]+/baseline", "/M/baseline", relative) == re.sub(
        r"/[^/]+/baseline", "/M/baseline", WORKFLOW["env"]["BASELINE"]
    )
    git(scratch, "add", "niah-baseline")
    git(scratch, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "niah baseline")
    workflow_env["BASELINE"] = relative
    workflow_env["GRID_SIZE"] = str(grid_size(scratch, env))
    return workflow_env


def checkout(repo: Path, job_dir: Path) -> None:
    git(repo.parent, "clone", "-q", str(repo), str(job_dir))


def is_install(step: dict) -> bool:
    return bool(re.search(r"\bpip install\b", str(step.get("run", ""))))


def run_job(
    job: dict, repo: Path, job_dir: Path, env: dict[str, str], values: dict[str, str],
    artifacts: Path,
) -> list[subprocess.CompletedProcess[str]]:  # fmt: skip
    """Every step of ``job``; returns what its pytest steps printed."""
    env = {**base_env(job_dir), **env}
    ran = []
    for step in job["steps"]:
        uses = str(step.get("uses", "")).split("@")[0]
        if uses in {"actions/setup-python", "actions/cache"} or is_install(step):
            continue  # installed here already
        given = {k: expand(str(v), values) for k, v in step.get("with", {}).items()}
        if uses == "actions/checkout":
            checkout(repo, job_dir)
        elif uses == "actions/upload-artifact":
            shutil.copytree(job_dir / given["path"], artifacts / given["name"])
        elif uses == "actions/download-artifact":
            assert given["merge-multiple"] == "True"
            target = job_dir / given["path"]
            target.mkdir(parents=True)
            for artifact in sorted(artifacts.iterdir()):
                if fnmatch.fnmatch(artifact.name, given["pattern"]):
                    shutil.copytree(artifact, target, dirs_exist_ok=True)
        elif uses == "marocchino/sticky-pull-request-comment":
            assert (job_dir / given["path"]).is_file(), "the comment body"
        elif "run" in step:
            done = bash(expand(step["run"], values), job_dir, env)
            assert done.returncode == 0, step["run"] + "\n" + done.stdout + done.stderr
            ran.append(done)
        else:
            raise AssertionError(f"a step this simulation does not know: {step}")
    return ran


def test_the_workflow_shards_merges_and_gates_against_the_committed_baseline(
    scratch, blessed, tmp_path
):
    size = int(blessed["GRID_SIZE"])
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    embed, gate = WORKFLOW["jobs"]["embed"], WORKFLOW["jobs"]["gate"]
    shards = embed["strategy"]["matrix"]["shard"]
    for shard in shards:
        values = {"matrix.shard": str(shard)}
        (done,) = run_job(embed, scratch, tmp_path / f"embed-{shard}", blessed, values, artifacts)
        only_the_grid_ran(done, size)
        assert f"pytest-niah: shard {shard}/{len(shards)}" in done.stdout
    assert len(list(artifacts.iterdir())) == len(shards)
    (done,) = run_job(gate, scratch, tmp_path / "gate", blessed, {}, artifacts)
    only_the_grid_ran(done, size)
    assert "minilm versus" in done.stdout and "baseline.json.gz" in done.stdout
    summary = (tmp_path / "gate" / "niah-report" / "summary.md").read_text()
    assert "Comparison" in summary
    assert (tmp_path / "gate-step-summary.md").read_text().strip()


def test_the_gate_fails_a_model_that_fell_below_the_baseline(scratch, blessed, tmp_path):
    """The same steps with a baseline a better model made: the comparison fails the job."""
    better = tmp_path / "better"
    checkout(scratch, better)
    env = {**base_env(tmp_path / "better-run"), **blessed}
    saved = bash(
        "pytest --niah-model=minilm=packaged-minilm " + TINY + " --niah-save=baseline "
        "--niah-storage=niah-baseline --niah-save-overwrite",
        better,
        env,
    )
    assert saved.returncode == 0, saved.stdout + saved.stderr
    (gate_command,) = [
        s["run"] for s in WORKFLOW["jobs"]["gate"]["steps"] if "pytest" in s.get("run", "")
    ]
    command = gate_command.replace("--niah-from-shards=niah-parts", "")
    done = bash(command + " --niah-compare-allow=tokenizer", better, env)
    assert done.returncode == 1, done.stdout + done.stderr


def test_the_composite_action_runs_the_grid_and_writes_the_summary(scratch, blessed, tmp_path):
    size = int(blessed["GRID_SIZE"])
    given = {
        "model": "minilm=packaged-static",
        "lengths": "128",
        "positions": "2",
        "baseline": blessed["BASELINE"],
        "extra-args": "--niah-groups=dietary-01,location-01,medical-01",
    }
    assert set(given) <= set(ACTION["inputs"])
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    values = {f"inputs.{name}": value for name, value in {**inputs, **given}.items()}
    job_dir = tmp_path / "action"
    checkout(scratch, job_dir)
    env = {**base_env(job_dir), "HF_HUB_OFFLINE": "1"}
    ran = []
    for step in ACTION["runs"]["steps"]:
        if "uses" in step or is_install(step):
            continue  # setup-python, the caches and pip: installed here already
        step_env = {k: expand(str(v), values) for k, v in step.get("env", {}).items()}
        done = bash(step["run"], job_dir, {**env, **step_env})
        assert done.returncode == 0, done.stdout + done.stderr
        ran.append(done)
    _key, done = ran  # the cache key's step, then the run
    assert re.search(r"^niah=[0-9a-f]{16}$", (tmp_path / "action-output").read_text(), re.M)
    only_the_grid_ran(done, size)
    assert "minilm versus" in done.stdout
    output = (tmp_path / "action-output").read_text()
    (summary,) = re.findall(r"^summary=(.+)$", output, re.MULTILINE)
    assert "Comparison" in (job_dir / summary).read_text()
    assert (tmp_path / "action-step-summary.md").read_text().strip()
