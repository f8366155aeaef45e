"""The nightly audit workflow of docs/ci.md parses, and its audit command is a valid one."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from pytest_niah.cli import build_parser

yaml = pytest.importorskip("yaml")
REPO = Path(__file__).resolve().parents[2]


def nightly_section() -> str:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    return text.split("## Nightly: audit the deployment", 1)[1].split("\n## ", 1)[0]


def test_the_nightly_workflow_audits_with_expect_and_a_valid_command():
    section = nightly_section()
    workflow = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    steps = workflow["jobs"]["audit"]["steps"]
    (audit,) = [s for s in steps if "pytest-niah audit" in str(s.get("run", ""))]
    argv = shlex.split(audit["run"].replace("$EMBEDDINGS_URL", "http://10.0.0.5:8000/v1"))
    assert argv[:2] == ["pytest-niah", "audit"]
    args = build_parser().parse_args(argv[1:])
    assert args.expect == "niah-baseline/deployment.json"
    assert (args.timeout, args.concurrency) == (30.0, 4)
    assert "OPENAI_API_KEY" in audit["env"]  # the key from a secret, never in the command
    assert "secrets." in audit["env"]["OPENAI_API_KEY"]


def test_the_page_saves_the_audit_the_workflow_expects():
    section = nightly_section()
    save = section.split("```bash\n", 1)[1].split("```", 1)[0]
    argv = shlex.split(save.replace("\\\n", " ").replace("$EMBEDDINGS_URL", "http://h/v1"))
    assert build_parser().parse_args(argv[1:]).save == "niah-baseline/deployment.json"
