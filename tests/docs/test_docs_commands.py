"""Every shell command in the README and the docs runs as written, from the pages' text.

Each page's ``bash`` blocks run in order in one fresh folder (a later block may read what an
earlier one wrote, as a reader's would), offline, with a shared embedding cache. The folder's
``pytest.ini`` narrows the default grid (two lengths, two positions, two needle groups) so
that a command naming no grid finishes in seconds; options a command names still win over it.
A block marked ``<!-- docs-test: skip (why) -->`` is left out, and the marks are listed here
so a new one is seen in review.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from doc_blocks import README, ROOT, Block, blocks, doc_pages, run_shell, section

SMALL_GRID = """\
[pytest]
niah_lengths = 128,256
niah_positions = 2
niah_groups = dietary-01,location-01
"""


def runnable(page: Path) -> list[Block]:
    return [b for b in blocks(page, "bash") if b.marker != "skip"]


PAGES = [page for page in doc_pages() if runnable(page)]


def test_the_pages_run_some_commands_and_skip_few():
    every = [b for page in doc_pages() for b in blocks(page, "bash")]
    skipped = [b for b in every if b.marker == "skip"]
    assert len(PAGES) >= 4
    # A skip names a need no offline test meets, or the test that runs the block instead.
    needs = ("hub", "served", "package index", "GPU", "suite", "mutant", "tox", "tests/", "timings")
    for block in skipped:
        assert any(need in block.detail for need in needs), block.where


Ran = list[tuple[Block, subprocess.CompletedProcess[str]]]


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], Ran]:
    """Each page's runnable blocks run once per module, in one fresh reader's folder.

    The README excerpt test reads what the README page's run printed instead of running
    its command again (the same command, folder set-up and cache).
    """
    # Shared by the pages (as each test's tmp_path.parent.parent was before).
    cache = tmp_path_factory.getbasetemp().parent / "docs-commands-cache"
    ran: dict[Path, Ran] = {}

    def run(page: Path) -> Ran:
        if page not in ran:
            folder = tmp_path_factory.mktemp("reader")
            (folder / "pytest.ini").write_text(SMALL_GRID)
            outputs: Ran = []
            for block in runnable(page):
                done = run_shell(block.code, folder, strict=True, NIAH_CACHE_DIR=str(cache))
                outputs.append((block, done))
                if done.returncode != block.expected_exit:
                    break  # a later block may need what this one should have written
            ran[page] = outputs
        return ran[page]

    return run


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_page_commands_run_as_written(page: Path, page_runs: Callable[[Path], Ran]):
    outputs = page_runs(page)
    for block, done in outputs:
        assert done.returncode == block.expected_exit, (
            f"{block.where} exited {done.returncode}:\n{block.code}\n{done.stdout}\n{done.stderr}"
        )
    assert [block for block, _ in outputs] == runnable(page)


@pytest.mark.slow
def test_the_readme_excerpt_is_what_its_command_prints_today(page_runs: Callable[[Path], Ran]):
    # The numbers depend on the grid; the wording of the title, the columns and the notes
    # must be today's (a stale excerpt once titled a 254-token model "effective length 512").
    reading = section(README, "## Reading the output")
    (command,) = [b for b in blocks(README, "bash") if f"```bash\n{b.code}```" in reading]
    (excerpt,) = [b for b in blocks(README, "text") if f"```text\n{b.code}```" in reading]
    (done,) = [done for block, done in page_runs(README) if block.code == command.code]
    assert done.returncode == 0, done.stdout + done.stderr
    title, header, *rest = excerpt.code.splitlines()[1:]
    assert title.split(", effective length")[0] + ", effective length" in done.stdout
    assert header in done.stdout
    past_window = next(line for line in rest if "past the window" in line)
    assert re.split(r"\d", past_window)[0] in done.stdout
