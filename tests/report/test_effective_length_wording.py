"""Issue 32.4 / 31.5: one wording of the effective length, capped by what the model reads.

The found case: the packaged MiniLM reads 254 tokens and AUC holds on 256-token haystacks.
The terminal said "effective length at most 254 tokens", summary.md and report.html
"256 tokens", and summary.md marked ``256*`` without saying what ``*`` means.
"""

from __future__ import annotations

import re
from html import unescape

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import run_experiment
from pytest_niah.report import summary_markdown
from pytest_niah.report.html import render_html
from pytest_niah.report.terminal_tables import notes, title
from pytest_niah.results.niah_results import NiahResults

EXPECTED = (
    "at most 254 tokens (the model's window; AUC holds to 256-token haystacks because it "
    "reads only their start)"
)
FOOTNOTE = (
    "past the window: at 256 tokens the model reads only the first 254 tokens of each haystack"
)


@pytest.fixture(scope="module")
def minilm(shared_corpus_dir) -> NiahResults:  # type: ignore[no-untyped-def]
    config = NiahConfig(
        model="packaged-minilm",
        corpus=str(shared_corpus_dir),
        lengths=(128, 256),
        positions=3,
        arms=("literal",),
        bootstrap=50,
        groups=("dietary-01", "location-02", "medical-03", "vehicle-04"),
        device="cpu",
    )
    results = run_experiment(config, progress=False)
    # the found case itself: the window is below a length whose AUC holds
    assert results.model.max_tokens == 254
    effective = results.effective_length("literal", "whole")
    assert effective is not None and effective.length == 256
    return results


def test_the_terminal_caps_the_effective_length(minilm):
    from pytest_niah.report.terminal_tables import effective_length_of

    assert effective_length_of(minilm, "literal") == EXPECTED
    assert title("m", minilm, "literal").endswith(f"effective length {EXPECTED}")
    assert f"  note: * {FOOTNOTE}" in notes(minilm, "literal", "whole")


def test_summary_md_says_the_same_and_explains_the_star(minilm):
    text = summary_markdown([minilm], ["m"])
    said = re.findall(r"^Effective length: (.*)\.$", text, flags=re.MULTILINE)
    assert said == [EXPECTED]
    assert "Effective length: 256 tokens" not in text
    assert re.search(r"\|\s*256\\\*\s*\|", text)  # the table marks 256 (escaped)
    assert f"Note: \\* {FOOTNOTE}." in text


def test_report_html_says_the_same_and_explains_the_star(minilm):
    page = unescape(render_html([minilm], ["m"], []))
    assert f"<td>{EXPECTED}</td>" in page
    assert ">256 tokens<" not in page
    assert f"Note: * {FOOTNOTE}." in page
