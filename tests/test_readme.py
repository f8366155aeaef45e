"""The README's commands are the ones CI runs, and it documents every option."""

from __future__ import annotations

from pathlib import Path

from pytest_niah.config.options import OPTIONS, PREFIX

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.startswith("python -m")]


def test_ci_runs_the_readme_install_then_test_command():
    install, test = ci_commands()
    assert f"```bash\n{install}\n```" in README
    assert f"```bash\n{test}\n```" in README
    assert README.index(install) < README.index(test)


def test_every_option_is_documented():
    for option in OPTIONS:
        assert f"`{PREFIX}{option.name}" in README, option.name
    assert "`--niah-model`" in README


def test_readme_holds_no_unfilled_placeholder():
    assert "MINILM_TABLE" not in README
