"""The user docs' text, their code blocks, and a shell to run those blocks as written.

A fenced block is run as a user would paste it, unless the line above it says otherwise:
``<!-- docs-test: skip (why) -->`` (it needs a hub model, a GPU, the network or GitHub, or
another test runs it) or ``<!-- docs-test: exit N -->`` (the command is meant to exit N).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)\n(?P<code>.*?)^(?P=indent)```[ \t]*$",
    flags=re.M | re.S,
)
MARKER = re.compile(r"^[ \t]*<!-- docs-test: (?P<verb>skip|exit) ?(?P<detail>.*?) ?-->[ \t]*$")


def doc_pages() -> list[Path]:
    """README.md and every page of the docs site."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    marker: str  # "" (run it), "skip" or "exit"
    detail: str

    @property
    def expected_exit(self) -> int:
        return int(self.detail) if self.marker == "exit" else 0

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path, lang: str | None = None) -> list[Block]:
    """The fenced blocks of a page, in order, each with the marker on the line above it."""
    text = read(page)
    found = []
    for match in FENCE.finditer(text):
        if lang is not None and match["lang"] != lang:
            continue
        line = text.count("\n", 0, match.start()) + 1
        previous = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marked = MARKER.match(previous)
        indent = len(match["indent"])
        code = "\n".join(row[indent:] for row in match["code"].splitlines()) + "\n"
        found.append(
            Block(
                page=page,
                line=line,
                lang=match["lang"],
                code=code,
                marker=marked["verb"] if marked else "",
                detail=marked["detail"].strip() if marked else "",
            )
        )
    return found


def section(page: Path, title: str) -> str:
    """A page's text from the heading ``title`` to the next heading of its level or above."""
    lines = read(page).splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.rstrip("\n") == title)
    level = len(title.split(" ", 1)[0])
    fenced = False
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(f"#{{1,{level}}} ", line):
            return "".join(lines[start:end])
    return "".join(lines[start:])


def environment(folder: Path, **extra: str) -> dict[str, str]:
    """The environment a reader's shell has: offline, with this interpreter's pytest."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NIAH_", "GITHUB_"))}
    # `pytest` and `pytest-niah` in the docs are this interpreter's, even where its pytest came
    # from a base environment whose own scripts run another Python.
    bin_dir = folder.parent / "docs-shims"
    bin_dir.mkdir(exist_ok=True)
    shims = {
        "pytest": f'exec "{sys.executable}" -m pytest "$@"',
        "pytest-niah": (
            f'exec "{sys.executable}" -c '
            '"import sys; from pytest_niah.cli import main; sys.exit(main())" "$@"'
        ),
    }
    for name, line in shims.items():
        shim = bin_dir / name
        shim.write_text(f"#!/bin/sh\n{line}\n")
        shim.chmod(0o755)
    env |= {
        "HF_HUB_OFFLINE": "1",
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env["PATH"]]),
    }
    return env | extra


def run_shell(
    command: str, folder: Path, *, strict: bool = False, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` under bash in ``folder``; ``strict`` stops at the first failing line."""
    folder.mkdir(parents=True, exist_ok=True)
    script = f"set -e\n{command}" if strict else command
    return subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=environment(folder, **extra),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
