"""The README's "Gate an upgrade in CI" recipe across tokenizers, run as written (#42.5).

The recipe's block names hub models (``org/model-v1``, ``org/model-v2``); here they are
replaced by local folders and nothing else is changed: the same five steps, the same
options, a folder that is a git repository, and a ``pytest.ini`` narrowing the grid as a
team's would. An upgrade from jina-embeddings-v3 to v4 changes the tokenizer; it must give
a verdict (exit 0 or 1), never a refusal (exit 4), and say that each run's lengths are in
its own model's tokens.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from doc_blocks import README, Block, blocks, run_shell

pytestmark = pytest.mark.slow

GRID = """\
[pytest]
niah_lengths = 128,256
niah_positions = 2
"""
TWO_GROUPS = "niah_groups = dietary-01,location-01\n"
# One group of each of the seven kinds: enough pairs for a verdict on a real downgrade.
SEVEN_GROUPS = (
    "niah_groups = "
    + ",".join(
        f"{kind}-01"
        for kind in ("dietary", "medical", "language", "profession", "location", "hobby", "vehicle")
    )
    + "\n"
)
SAID = "the tokenizers differ: each run's lengths are in its own model's tokens"
GIT = {
    "GIT_AUTHOR_NAME": "niah",
    "GIT_AUTHOR_EMAIL": "niah@example.invalid",
    "GIT_COMMITTER_NAME": "niah",
    "GIT_COMMITTER_EMAIL": "niah@example.invalid",
}


def recipe() -> Block:
    """The README's bless-then-compare block."""
    (block,) = [b for b in blocks(README, "bash") if "--niah-compare=baseline" in b.code]
    assert "org/model-v1" in block.code and "org/model-v2" in block.code
    return block


def run_recipe(
    folder: Path, before: str, after: str, grid: str
) -> subprocess.CompletedProcess[str]:
    """The recipe with ``before`` as model-v1 and ``after`` as model-v2, in a fresh repository."""
    folder.mkdir()
    (folder / "pytest.ini").write_text(grid, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    script = recipe().code.replace("org/model-v1", before).replace("org/model-v2", after)
    return run_shell(script, folder, strict=True, **GIT)


def compared_title(out: str) -> str:
    """The terminal comparison's title line: ``prod versus PATH (...):``."""
    (line,) = [x for x in out.splitlines() if x.startswith("prod versus ")]
    return line


def test_the_v3_shaped_model_upgraded_to_the_v4_shaped_one_gets_a_verdict(standin_model, tmp_path):
    """Sentencepiece Unigram (Metaspace) blessed, byte-level BPE compared: never exit 4."""
    v3, v4 = standin_model("v3"), standin_model("v4")
    ran = run_recipe(tmp_path / "team", str(v3), str(v4), GRID + TWO_GROUPS)
    out = ran.stdout + ran.stderr
    assert ran.returncode in (0, 1), out
    assert "measured something else" not in out
    assert SAID in compared_title(out)
    summary = (tmp_path / "team" / "niah-report" / "summary.md").read_text(encoding="utf-8")
    (heading,) = [x for x in summary.splitlines() if x.startswith("## Comparison: prod versus")]
    assert SAID in heading
    assert (tmp_path / "team" / "niah-baseline" / "prod").is_dir()


def failed_lengths(out: str) -> dict[int, set[str]]:
    """{length: the metrics whose --niah-compare-fail verdict is regressed} below the table."""
    found: dict[int, set[str]] = {}
    pattern = r"  L(\d+) FAIL --niah-compare-fail: (.+?) changed .*: regressed$"
    for match in re.finditer(pattern, out, flags=re.MULTILINE):
        found.setdefault(int(match.group(1)), set()).add(match.group(2))
    return found


def test_a_real_downgrade_across_tokenizers_fails_naming_its_lengths(tmp_path):
    """MiniLM (WordPiece) blessed, the static model (its own tokenizer) compared: it reads
    far worse at every length, so every gated length fails as regressed; the same model
    compared with itself passes."""
    grid = GRID + SEVEN_GROUPS
    ran = run_recipe(tmp_path / "down", "packaged-minilm", "packaged-static", grid)
    out = ran.stdout + ran.stderr
    assert ran.returncode == 1, out
    assert failed_lengths(out) == {
        128: {"AUC", "comparative ratio"},
        256: {"AUC", "comparative ratio"},
    }
    assert SAID in compared_title(out)
    headline = (tmp_path / "down" / "niah-report" / "summary.md").read_text().splitlines()[0]
    assert headline.startswith("# ❌ pytest-niah: 4 of 4 gates failed (prod)"), headline

    same = run_recipe(tmp_path / "same", "packaged-minilm", "packaged-minilm", grid)
    assert same.returncode == 0, same.stdout + same.stderr
    assert failed_lengths(same.stdout) == {}
    assert SAID not in compared_title(same.stdout)
