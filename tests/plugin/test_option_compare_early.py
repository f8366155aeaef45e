"""--niah-compare refuses a baseline that measured something else before anything is embedded.

Found (issue 22, 4): a seed, grid or tokenizer mismatch was refused only after all the
embedding, with nothing in the step summary; the fix said "same grid" when only the
tokenizer differed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

LITERAL = ("--niah-arms=literal",)
EMBEDDING = "building and embedding haystacks"
PREVIOUS_SUMMARY = "## an earlier step\n\nkept as it was\n"


def tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder``: its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_another_seed_is_refused_before_embedding_into_the_step_summary(niah, monkeypatch):
    niah.run(*LITERAL, "--niah-seed=1", "--niah-save=one", "--niah-report=report")
    report = niah.pytester.path / "report"
    before = tree(report)
    assert "report.html" in before
    summary = niah.pytester.path / "step-summary.md"
    summary.write_text(PREVIOUS_SUMMARY, encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    result = niah.run(*LITERAL, "--niah-seed=2", "--niah-compare=one", "--niah-report=report")

    cause = niah.stopped(result, niah.label)
    assert "measured something else: seed: 2 here, 1 in the baseline." in cause
    assert cause.endswith("--niah-compare-allow=seed")
    shown = result.stdout.str() + result.stderr.str()
    assert "checking the baseline" in shown
    assert EMBEDDING not in shown  # no haystack was built
    # The step summary keeps what earlier steps wrote and gets one short refusal, opening
    # with ❌ as every outcome does, its paths relative to the repository.
    text = summary.read_text(encoding="utf-8")
    assert text.startswith(PREVIOUS_SUMMARY)
    [refusal] = text.removeprefix(PREVIOUS_SUMMARY).splitlines()
    assert refusal.startswith(f"# ❌ pytest-niah: comparison refused for {niah.label}: ")
    assert "seed: 2 here, 1 in the baseline. Fix: " in refusal
    assert refusal.endswith("--niah-compare-allow=seed")
    assert str(niah.pytester.path) not in refusal and ".niah/runs/" in refusal
    # The report folder is this run's: its summary.md, the one a PR comment posts, is the
    # refusal (an earlier run's report would read as this run's outcome).
    assert "report.html" in before
    assert sorted(tree(report)) == ["summary.md"]
    assert (report / "summary.md").read_text(encoding="utf-8") == refusal + "\n"


def test_without_a_step_summary_the_refusal_writes_nothing(niah, monkeypatch):
    niah.run(*LITERAL, "--niah-save=base")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    listed = sorted(p.name for p in niah.pytester.path.iterdir())
    result = niah.run(*LITERAL, "--niah-positions=2", "--niah-compare=base")
    assert "positions: 2 here, 3 in the baseline" in niah.stopped(result, niah.label)
    assert EMBEDDING not in result.stdout.str() + result.stderr.str()
    assert sorted(p.name for p in niah.pytester.path.iterdir()) == listed


def test_another_tokenizer_alone_is_compared_and_said_not_refused(niah):
    """The TF-IDF baseline and the static model read the same grid, each in its own tokens.

    Found (#42.5): an upgrade across tokenizers (jina-embeddings-v3 to v4) stopped with
    exit 4 "measured something else: tokenizer" unless --niah-compare-allow=tokenizer was
    added, which the README's recipe never says.
    """
    niah.run(*LITERAL, "--niah-json=base.json")
    result = niah.run(*LITERAL, "--niah-model=packaged-static", "--niah-compare=base.json")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), out
    assert "measured something else" not in out
    assert "packaged-static versus " in out
    assert "the tokenizers differ: each run's lengths are in its own model's tokens" in out


def test_an_allowed_tokenizer_loads_no_model_early_and_compares(niah):
    niah.run(*LITERAL, "--niah-json=base.json")
    result = niah.run(
        *LITERAL,
        "--niah-model=packaged-static",
        "--niah-compare=base.json",
        "--niah-compare-allow=tokenizer",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    assert "packaged-static versus " in result.stdout.str()
