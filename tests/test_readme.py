"""The README's install and test commands are the ones CI runs (``.ci/run``).

The option table moved to the docs site: tests/docs/test_docs_site.py checks it there.
"""

from __future__ import annotations

from pathlib import Path

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
