"""``.github/workflows/niah.yml`` and ``action.yml``: commands and options that exist, pins.

The workflow shards the grid over a matrix, gates in one job, uploads the report and posts
summary.md as a sticky pull-request comment. Option names are checked against the option
table (:data:`~pytest_niah.config.options.OPTIONS`), ``pytest-niah`` commands against the
command's own parser, so renaming an option or a command breaks this test, not CI.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pytest_niah.cli import build_parser
from pytest_niah.config.options import OPTIONS

yaml = pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_FILE = REPO / ".github" / "workflows" / "niah.yml"
FLAGS = {option.flag_name for option in OPTIONS}
ACTION_FILE = REPO / "action.yml"
# Maintained actions only, each pinned by commit, its release tag in a comment.
ACTIONS = {
    "actions/checkout",
    "actions/setup-python",
    "actions/cache",
    "actions/upload-artifact",
    "actions/download-artifact",
    "marocchino/sticky-pull-request-comment",
}
PINNED = re.compile(r"uses: (?P<name>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]{40}) # v\d+\.\d+\.\d+$")


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW_FILE.read_text(encoding="utf-8"))


def commands(workflow: dict) -> list[list[str]]:
    """Every shell command of every run step, split into words, with ``$NIAH`` expanded."""
    niah = workflow["env"]["NIAH"]
    out = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            for line in str(step.get("run", "")).splitlines():
                if line.strip():
                    out.append(shlex.split(line.replace("$NIAH", niah)))
    return out


def run_steps(job: dict, program: str) -> list[str]:
    return [s["run"] for s in job["steps"] if str(s.get("run", "")).startswith(program + " ")]


def step_with(job: dict, action: str) -> list[dict]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith(action + "@")]


def test_every_niah_option_of_every_step_is_in_the_option_table(workflow):
    used = [
        word.split("=", 1)[0]
        for words in commands(workflow)
        for word in words
        if word.startswith("--niah-")
    ]
    assert used, "the workflow names no --niah-* option"
    assert set(used) <= FLAGS, sorted(set(used) - FLAGS)
    for words in commands(workflow):
        for word in words:
            if word.startswith("--niah-") and word.split("=", 1)[0] in FLAGS:
                assert "=" in word or any(o.flag for o in OPTIONS if o.flag_name == word), (
                    f"{word} takes a value"
                )


def test_every_pytest_niah_command_exists(workflow):
    parser = build_parser()
    for words in commands(workflow):
        if words[0] == "pytest-niah":
            # argparse exits 2 on an unknown command or option.
            parser.parse_args([w for w in words[1:] if not w.startswith("$")])
        else:
            assert words[0] == "pytest" or words[:4] == ["python", "-m", "pip", "install"], words


def test_shard_jobs_feed_one_gate_job_that_reports_and_comments(workflow):
    embed, gate = workflow["jobs"]["embed"], workflow["jobs"]["gate"]
    shards = embed["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    (embed_command,) = run_steps(embed, "pytest")
    assert f"--niah-shard=${{{{ matrix.shard }}}}/{len(shards)}" in embed_command
    shard_dir = re.search(r"--niah-shard-dir=(\S+)", embed_command)[1]
    (upload,) = step_with(embed, "actions/upload-artifact")
    assert upload["with"]["path"].rstrip("/") == shard_dir
    assert gate["needs"] == "embed"
    (download,) = step_with(gate, "actions/download-artifact")
    pattern = download["with"]["pattern"].replace("*", ".*")
    assert re.fullmatch(pattern, upload["with"]["name"].replace("${{ matrix.shard }}", "1"))
    assert download["with"]["merge-multiple"] is True
    (gate_command,) = run_steps(gate, "pytest")
    assert f"--niah-from-shards={download['with']['path']}" in gate_command
    assert re.search(r"--niah-(min-auc|min-ratio|compare-fail)=", gate_command), "gate something"
    report = re.search(r"--niah-report=(\S+)", gate_command)[1]
    # The report is kept, and its summary.md posted, whatever the gate said.
    (kept,) = [s for s in step_with(gate, "actions/upload-artifact")]
    assert kept["with"]["path"].rstrip("/") == report and "always()" in kept["if"]
    (comment,) = step_with(gate, "marocchino/sticky-pull-request-comment")
    assert comment["with"]["path"] == f"{report}/summary.md"
    assert "always()" in comment["if"] and "pull_request" in comment["if"]
    # Found (#44): a fork's pull request has a read-only token, so the comment failed its job.
    assert "github.event.pull_request.head.repo.full_name == github.repository" in comment["if"]
    assert gate["permissions"]["pull-requests"] == "write"


@pytest.mark.parametrize("path", [WORKFLOW_FILE, ACTION_FILE], ids=lambda p: p.name)
def test_third_party_actions_are_maintained_ones_pinned_by_commit(path):
    lines = [line.strip().removeprefix("- ") for line in path.read_text().splitlines()]
    used = [line for line in lines if line.startswith("uses:") and "uses: ./" not in line]
    assert used
    for line in used:
        pinned = PINNED.fullmatch(line)
        assert pinned and pinned["name"] in ACTIONS, line


def test_torch_is_pinned_to_the_cpu_build_and_pip_and_the_hub_are_cached(workflow):
    for job in ("embed", "gate"):
        steps = workflow["jobs"][job]["steps"]
        (torch,) = [s["run"] for s in steps if "torch" in str(s.get("run", ""))]
        assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in torch
        (python,) = step_with(workflow["jobs"][job], "actions/setup-python")
        assert python["with"]["cache"] == "pip"
    (hub,) = step_with(workflow["jobs"]["embed"], "actions/cache")
    assert hub["with"]["path"] == "~/.cache/huggingface"


def test_the_gate_compares_with_a_baseline_committed_in_the_repository(workflow):
    (gate_command,) = run_steps(workflow["jobs"]["gate"], "pytest")
    baseline = workflow["env"]["BASELINE"]
    assert "--niah-compare=$BASELINE" in gate_command
    assert (REPO / baseline).is_file(), f"commit the baseline {baseline}"
    allowances = re.search(r"--niah-compare-fail=(\S+)", gate_command)[1]
    assert {a.split(":")[0] for a in allowances.split(",")} >= {"auc", "ratio"}
    assert "--niah-min-auc" not in gate_command  # the baseline is the gate


def test_a_job_uses_the_composite_action(workflow):
    (job,) = [
        j for j in workflow["jobs"].values() if any(s.get("uses") == "./" for s in j["steps"])
    ]
    (step,) = [s for s in job["steps"] if s.get("uses") == "./"]
    action = yaml.safe_load(ACTION_FILE.read_text(encoding="utf-8"))
    assert set(step["with"]) <= set(action["inputs"])
    assert (REPO / step["with"]["baseline"]).is_file()


def test_the_workflow_runs_on_pull_requests_offline(workflow):
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "pull_request" in triggers
    assert workflow["env"]["HF_HUB_OFFLINE"] == "1"
    installs = [w[4:] for w in commands(workflow) if w[:4] == ["python", "-m", "pip", "install"]]
    assert [".[all]"] in installs  # the checkout itself, not editable
