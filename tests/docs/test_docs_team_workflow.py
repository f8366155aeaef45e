"""The workflow docs/ci.md gives a team, its steps run in a team's scratch repository (#44).

Found: the only workflow was the project's own (``pip install -e .``, caches keyed on this
repository's pyproject.toml, no cache of pytest-niah's own, so every pull request embedded
the whole grid again), and on a fork's pull request its comment step failed the job.

The YAML is read from the page. The scratch repository is a team's: its own failing test
under ``testpaths`` and a conftest importing a module that is not installed. Every ``run:``
step runs in bash (the pip installs aside: the libraries are installed here, with this
interpreter's ``python`` and ``pytest`` first on PATH), ``actions/cache`` is played by a
folder per key (exact key, else the newest ``restore-keys`` match; saved at the job's end
unless the key hit), and the comment step runs where its ``if`` says, for the event at
hand. Only ``$NIAH`` differs from the page: the same label on a tiny grid.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from doc_blocks import DOCS, ROOT, read

yaml = pytest.importorskip("yaml")

MARK = "<!-- team-workflow: run by tests/docs/test_docs_team_workflow.py -->\n```yaml\n"
TINY = "--niah-lengths=128 --niah-positions=2 --niah-groups=dietary-01,location-01,medical-01"
NIAH = f"--niah-model=prod=packaged-minilm {TINY}"
# A pull request that swaps the model for a worse one (another tokenizer: allowed).
WORSE = f"--niah-model=prod=packaged-static {TINY} --niah-compare-allow=tokenizer"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
REPOSITORY = "team/service"

pytestmark = pytest.mark.slow


def template() -> dict:
    text = read(DOCS / "ci.md")
    start = text.index(MARK) + len(MARK)
    return yaml.safe_load(text[start : text.index("\n```\n", start)])


WORKFLOW = template()


def git(cwd: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *who, *args], cwd=cwd, check=True, capture_output=True)


def bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-ec", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@dataclass
class Event:
    name: str  # "push" or "pull_request"
    head_repository: str = REPOSITORY  # another for a fork's pull request


@dataclass
class Job:
    """What one run of the workflow's job did."""

    gate: subprocess.CompletedProcess[str]
    commented: bool
    step_summary: str
    cache_hit: bool
    values: dict[str, str] = field(default_factory=dict)


def condition(text: str, event: Event) -> bool:
    """A step's ``if``, for the contexts this simulation knows; an unknown name fails."""
    known = {
        "always()": "True",
        "github.event.pull_request.head.repo.full_name": repr(
            event.head_repository if event.name == "pull_request" else None
        ),
        "github.repository": repr(REPOSITORY),
        "github.event_name": repr(event.name),
        "&&": " and ",
        "||": " or ",
    }
    for name, value in known.items():
        text = text.replace(name, value)
    assert re.fullmatch(r"[\w\s'/=!.()]*", text), text
    return bool(eval(text))  # only the names above, replaced by literals


def expand(text: str, values: dict[str, str]) -> str:
    return EXPRESSION.sub(lambda m: values[m.group(1)], text)


def run_job(repo: Path, folder: Path, niah: str, event: Event, caches: Path) -> Job:
    """The workflow's one job, its steps in order, as a runner would run them."""
    job = WORKFLOW["jobs"]["niah"]
    workspace = folder / "workspace"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NIAH_", "GITHUB_"))}
    env |= {str(k): str(v) for k, v in WORKFLOW["env"].items()} | {"NIAH": niah}
    env |= {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
        "PYTHONPATH": str(ROOT),  # the code under test
        "GITHUB_STEP_SUMMARY": str(folder / "step-summary.md"),
        "GITHUB_OUTPUT": str(folder / "output"),
        "HF_HUB_OFFLINE": "1",  # the packaged models need no hub
    }
    values = {"runner.os": "Linux"}
    to_save: list[tuple[Path, Path]] = []
    gate, commented, hit, failed = None, False, False, False
    for step in job["steps"]:
        if failed and "always()" not in str(step.get("if", "")):
            continue
        if "if" in step and not condition(step["if"], event):
            continue
        uses = str(step.get("uses", "")).split("@")[0]
        given = {k: expand(str(v), values) for k, v in step.get("with", {}).items()}
        if uses == "actions/checkout":
            subprocess.run(["git", "clone", "-q", str(repo), str(workspace)], check=True)
        elif uses == "actions/setup-python":
            continue
        elif uses == "actions/cache":
            if given["path"].startswith("~"):
                continue  # the Hugging Face cache: the packaged models need none
            kept = caches / given["key"]
            older = sorted(caches.glob(given["restore-keys"] + "*"), key=os.path.getmtime)
            source = kept if kept.is_dir() else (older[-1] if older else None)
            if source is not None:
                shutil.copytree(source, workspace / given["path"])
            hit = kept.is_dir()
            if not hit:
                to_save.append((workspace / given["path"], kept))
        elif uses == "actions/upload-artifact":
            assert (workspace / given["path"]).is_dir()
        elif uses == "marocchino/sticky-pull-request-comment":
            assert (workspace / given["path"]).is_file(), "the comment's body"
            commented = True
        elif "python -m pip install" in step.get("run", ""):
            continue  # installed here
        else:
            done = bash(expand(step["run"], values), workspace, env)
            output = folder / "output"
            if "id" in step and output.exists():
                for name, value in re.findall(r"^([\w-]+)=(.*)$", output.read_text(), re.M):
                    values[f"steps.{step['id']}.outputs.{name}"] = value
            if step["run"].startswith("pytest"):
                gate = done
            else:
                assert done.returncode == 0, step["run"] + done.stdout + done.stderr
            failed = failed or done.returncode != 0
    for path, kept in to_save:  # the cache's post step: saved when the key missed
        if path.is_dir():
            shutil.copytree(path, kept)
    assert gate is not None
    summary = folder / "step-summary.md"
    return Job(gate, commented, summary.read_text() if summary.exists() else "", hit, values)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A team's repository with its own failing test, a broken conftest and the baseline."""
    repo = tmp_path_factory.mktemp("team")
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (repo / "tests").mkdir()
    (repo / "tests" / "conftest.py").write_text("import a_module_ci_does_not_install\n")
    (repo / "tests" / "test_unit.py").write_text("def test_unit():\n    assert False\n")
    git(repo, "init", "-q")
    # The baseline, made as the page says: the same $NIAH, saved into the committed folder.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NIAH_", "GITHUB_"))}
    env |= {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
        "PYTHONPATH": str(ROOT),
        "NIAH": NIAH,
        "HF_HUB_OFFLINE": "1",
        "NIAH_CACHE_DIR": str(repo.parent / "bless-cache"),
    }
    saved = bash("pytest $NIAH --niah-save=baseline --niah-storage=niah-baseline", repo, env)
    assert saved.returncode == 0, saved.stdout + saved.stderr
    (path,) = (repo / "niah-baseline").rglob("baseline.json.gz")
    machine = re.compile(r"/[^/]+/baseline")
    wanted = WORKFLOW["env"]["BASELINE"]
    assert machine.sub("/M/baseline", path.relative_to(repo).as_posix()) == machine.sub(
        "/M/baseline", wanted
    )
    if path.relative_to(repo).as_posix() != wanted:  # another machine than the runner's
        (repo / wanted).parent.mkdir(parents=True)
        path.rename(repo / wanted)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the team's code, its tests and the niah baseline")
    return repo


def test_the_template_installs_as_the_readme_does_and_pins_its_actions():
    steps = WORKFLOW["jobs"]["niah"]["steps"]
    runs = [str(s.get("run", "")) for s in steps]
    # The README's quick start installs from a clone (`pip install ".[all]"`), which a team's
    # repository cannot: the workflow installs pytest-niah by its URL, with the same extras,
    # after the same pinned torch.
    readme = read(ROOT / "README.md")
    quick = re.search(
        r"python -m pip install (torch==\S+) && python -m pip install \"\.(\[[\w,]+\])\"", readme
    )
    assert quick, "the README's quick start install line"
    torch_pin, extras = quick.groups()
    install = next(r for r in runs if "pytest-niah[" in r)
    assert re.search(rf"pytest-niah{re.escape(extras)}(?![\w,\[])", install), (install, extras)
    assert "-e " not in install and "--editable" not in install
    pins = [r for r in runs if re.match(r"python -m pip install torch\b", r)]
    assert [p.split()[4] for p in pins] == [torch_pin], (pins, torch_pin)
    assert runs.index(pins[0]) < runs.index(install), "torch first, as the README does"
    for step in steps:
        if "uses" in step:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
    assert WORKFLOW["env"]["NIAH_CACHE_DIR"] in [
        s["with"]["path"] for s in steps if "actions/cache" in str(s.get("uses"))
    ]


def test_a_no_op_pull_request_embeds_nothing_and_a_regression_fails(team, tmp_path):
    caches = tmp_path / "caches"
    caches.mkdir()
    # main: the first run embeds the grid and saves pytest-niah's cache.
    first = run_job(team, tmp_path / "main", NIAH, Event("push"), caches)
    out = first.gate.stdout + first.gate.stderr
    assert first.gate.returncode == 0, out
    assert re.search(r"[1-9][\d,]* texts embedded", out), out
    assert "test_unit" not in out and "a_module_ci_does_not_install" not in out
    assert not first.commented and not first.cache_hit
    # A fork's pull request that changes none of model, grid, pytest-niah: the cache's key
    # hits, nothing is embedded, it passes on its verdict; its token cannot comment.
    no_op = run_job(team, tmp_path / "fork", NIAH, Event("pull_request", "fork/service"), caches)
    out = no_op.gate.stdout + no_op.gate.stderr
    assert no_op.gate.returncode == 0, out
    # A reused run says so, and its embedded line counts nothing (#43: every run ends with it).
    assert no_op.cache_hit and "results reused from an identical earlier run" in out, out
    assert re.search(r"^0 texts embedded, 0 read from the cache\b", out, re.M), out
    assert not no_op.commented
    assert no_op.step_summary.startswith("# ✅ pytest-niah: all "), no_op.step_summary
    # A pull request that swaps in a worse model: another key, and the gate fails the job;
    # the comment and the step summary say why.
    worse = run_job(team, tmp_path / "worse", WORSE, Event("pull_request"), caches)
    out = worse.gate.stdout + worse.gate.stderr
    assert worse.gate.returncode == 1, out
    assert not worse.cache_hit
    assert worse.values["steps.key.outputs.niah"] != no_op.values["steps.key.outputs.niah"]
    assert worse.commented
    assert worse.step_summary.startswith("# ❌ pytest-niah: "), worse.step_summary
