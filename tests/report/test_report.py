"""The report: HTML page, figures, markdown summary, CSV and JSON from real lexical results."""

from __future__ import annotations

import base64
import csv
import dataclasses
import re
import sys
from pathlib import Path

import pytest

from pytest_niah import run_experiment
from pytest_niah.measure.records import CaseResult
from pytest_niah.report import default_labels, write_report
from pytest_niah.report.figure_data import panel_variants, primary_variant
from pytest_niah.report.figures import FIGURES, MatplotlibMissingError
from pytest_niah.report.html import render_html
from pytest_niah.report.length_figures import auc_figure
from pytest_niah.report.markdown_and_csv import (
    cases_csv,
    length_cells,
    markdown_table,
    summary_markdown,
)
from pytest_niah.report.terminal_tables import effective_length_text, fmt, length_table
from pytest_niah.results.niah_results import NiahResults

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
IMAGE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
FIGURE_IDS = [spec.id for spec in FIGURES]


@pytest.fixture(scope="module")
def other(small_config) -> NiahResults:
    return run_experiment(small_config(seed=7, arms=("onehop",)), speed=True)


@pytest.fixture(scope="module")
def report(results: NiahResults, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        return write_report([results], tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def comparison(
    results: NiahResults, other: NiahResults, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        out = tmp_path_factory.mktemp("comparison")
        return write_report([results, other], out, labels=["alpha-model", "beta-model"])


def html_of(report: dict[str, Path]) -> str:
    return report["report.html"].read_text(encoding="utf-8")


def images(html: str) -> list[bytes]:
    return [base64.b64decode(data, validate=True) for data in IMAGE.findall(html)]


# -- files ------------------------------------------------------------------------------------


def test_single_report_writes_its_four_files(report: dict[str, Path]) -> None:
    assert sorted(report) == ["cases.csv", "report.html", "results.json", "summary.md"]
    for path in report.values():
        assert path.is_file() and path.stat().st_size > 0


def test_results_json_round_trips(report: dict[str, Path], results: NiahResults, frozen) -> None:
    assert frozen(NiahResults.load(report["results.json"])) == frozen(results)


# -- HTML -------------------------------------------------------------------------------------


def test_html_has_every_figure_id(report: dict[str, Path]) -> None:
    html = html_of(report)
    for figure_id in FIGURE_IDS:
        assert f'<figure id="{figure_id}">' in html


def test_html_images_are_png(report: dict[str, Path]) -> None:
    pngs = images(html_of(report))
    assert len(pngs) == len(FIGURE_IDS)
    for png in pngs:
        assert png.startswith(PNG_SIGNATURE)
        assert len(png) > 5_000


def test_html_is_self_contained(report: dict[str, Path]) -> None:
    html = html_of(report)
    assert "http://" not in html and "https://" not in html
    assert "<script" not in html and "<link" not in html
    assert re.findall(r'src="([^"]{0,22})', html) == ["data:image/png;base64,"] * len(FIGURE_IDS)


def test_html_shows_the_table_values(report: dict[str, Path], results: NiahResults) -> None:
    html = html_of(report)
    row = results.row("onehop", 128, "whole")
    interval = results.interval("onehop", 128, "auc", "whole")
    assert interval is not None
    auc_cell = f"{fmt(row.auc)} [{fmt(interval.low, 2)},{fmt(interval.high, 2)}]"
    assert f'<td class="num">{auc_cell}</td>' in html
    assert f'<td class="num">{fmt(row.separation, 4)}</td>' in html
    assert "<h3>lexical:tfidf: arm literal, scoring chunk-max</h3>" in html


def test_html_header_names_model_config_and_versions(
    report: dict[str, Path], results: NiahResults
) -> None:
    html = html_of(report)
    assert results.model.fingerprint[:12] in html
    assert results.model.fingerprint[:13] not in html
    for text in ("128, 512", "onehop, literal", "whole, chunk-max", "dietary, location"):
        assert f"<td>{text}</td>" in html
    assert f"<td>{results.seed}</td>" in html
    assert f"<td>{results.versions['numpy']}</td>" in html


def test_html_lists_effective_lengths(report: dict[str, Path], results: NiahResults) -> None:
    html = html_of(report)
    assert 'id="effective"' in html
    assert results.effective_lengths
    for effective in results.effective_lengths:
        expected = (
            "below the shortest length"
            if effective.length is None
            else f"{effective.length} tokens"
        )
        assert expected == effective_length_text(effective)
        assert f"<td>{effective.arm}</td><td>{effective.scoring}</td><td>{expected}</td>" in html


def test_html_escapes_text(results: NiahResults) -> None:
    html = render_html([results], ["<b>a&b</b>"], [])
    assert "<b>a&b</b>" not in html
    assert "&lt;b&gt;a&amp;b&lt;/b&gt;" in html


def test_html_columns_match_the_terminal_table(results: NiahResults) -> None:
    header, body = length_cells(results, "onehop", "whole")
    terminal = length_table(results, "onehop", "whole")
    assert re.split(r"\s{2,}", terminal[0].strip()) == header
    assert [re.split(r"\s{2,}", line.strip()) for line in terminal[1:]] == body


@pytest.mark.integration
def test_report_is_byte_identical_for_the_same_input(
    report: dict[str, Path], results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    again = write_report([results], tmp_path)
    for name in ("report.html", "summary.md", "cases.csv", "results.json"):
        assert again[name].read_bytes() == report[name].read_bytes(), name


def test_figure_bytes_are_deterministic(results: NiahResults) -> None:
    assert auc_figure([results], ["x"]) == auc_figure([results], ["x"])
    assert auc_figure([results], ["x"]) != auc_figure([results], ["y"])


# -- comparison -------------------------------------------------------------------------------


@pytest.mark.integration
def test_comparison_writes_one_results_file_per_model(
    comparison: dict[str, Path], results: NiahResults, other: NiahResults, frozen
) -> None:
    # NaN scores never compare equal: compare the exact (frozen) forms, and the JSON text.
    alpha = NiahResults.load(comparison["results.alpha-model.json"])
    beta = NiahResults.load(comparison["results.beta-model.json"])
    assert frozen(alpha) == frozen(results) and frozen(beta) == frozen(other)
    assert alpha.to_json() == results.to_json() and beta.to_json() == other.to_json()
    assert "results.json" not in comparison


@pytest.mark.integration
def test_comparison_draws_both_models(comparison: dict[str, Path], report: dict[str, Path]) -> None:
    html = html_of(comparison)
    for label in ("alpha-model", "beta-model"):
        assert f"<h3>{label}: arm onehop, scoring whole</h3>" in html
        assert html.count(label) > len(FIGURE_IDS)
    assert 'alt="AUC: alpha-model, beta-model"' in html
    assert len(images(html)) == len(images(html_of(report)))
    # Drawing a second model changes every figure.
    assert set(images(html)).isdisjoint(images(html_of(report)))


@pytest.mark.integration
def test_comparison_csv_has_every_case_of_both_models(
    comparison: dict[str, Path], results: NiahResults, other: NiahResults
) -> None:
    with comparison["cases.csv"].open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(results.cases) + len(other.cases)
    models = [row["model"] for row in rows]
    assert models.count("alpha-model") == len(results.cases)
    assert models.count("beta-model") == len(other.cases)


def test_panels_of_a_comparison_show_one_shared_variant(
    results: NiahResults, other: NiahResults
) -> None:
    assert panel_variants([results, other]) == [("onehop", "whole")] * 2
    assert panel_variants([results]) == [primary_variant(results)]


def test_primary_variant_skips_variants_without_normalized_similarity(
    results: NiahResults,
) -> None:
    arm, scoring = primary_variant(results)
    rows = results.rows("length", arm, scoring)
    assert any(r.normalized == r.normalized for r in rows)
    earlier = results.variants[: results.variants.index((arm, scoring))]
    for variant in earlier:
        assert all(r.normalized != r.normalized for r in results.rows("length", *variant))


def test_retrieval_figure_is_left_out_without_retrieval_rows(results: NiahResults) -> None:
    bare = dataclasses.replace(results, retrieval=())
    retrieval = next(spec for spec in FIGURES if spec.id == "fig-retrieval")
    assert retrieval.available([results])
    assert not retrieval.available([bare])
    assert all(spec.available([bare]) for spec in FIGURES if spec is not retrieval)


# -- summary.md and cases.csv -----------------------------------------------------------------


def test_summary_has_a_table_per_variant_and_a_row_per_length(
    report: dict[str, Path], results: NiahResults
) -> None:
    lines = report["summary.md"].read_text(encoding="utf-8").splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("| length |")]
    assert len(headers) == len(results.variants)
    for start in headers:
        rule, *rest = lines[start + 1 :]
        assert set(rule) <= {"|", "-", ":", " "}
        body = [line for line in rest[: len(results.config.lengths) + 1] if line.startswith("|")]
        assert [int(line.split("|")[1]) for line in body] == list(results.config.lengths)
        # Aligned columns: every line of a table is as wide as its header.
        assert {len(line) for line in [lines[start], rule, *body]} == {len(lines[start])}


def test_summary_names_model_variants_and_effective_length(
    report: dict[str, Path], results: NiahResults
) -> None:
    text = report["summary.md"].read_text(encoding="utf-8")
    # The headline opens it; this run gated nothing, and it says so.
    assert text.startswith("# ⚠️ pytest-niah: nothing gated (1 model measured")
    assert "## lexical:tfidf" in text
    for arm, scoring in results.variants:
        assert f"### lexical:tfidf: arm {arm}, scoring {scoring}" in text
    for arm, scoring in results.variants:
        effective = effective_length_text(results.effective_length(arm, scoring))
        assert effective
        heading = f"### lexical:tfidf: arm {arm}, scoring {scoring}\n"
        section = text.split(heading, 1)[1].split("###", 1)[0]
        assert f"\nEffective length: {effective}.\n" in section
    row = results.row("literal", 512, "whole")
    assert fmt(row.normalized) in text


def test_markdown_table_escapes_pipes_and_aligns() -> None:
    lines = markdown_table(["length", "note"], [["128", "a|b"], ["4096", "c"]])
    assert lines == [
        "| length | note |",
        "| -----: | ---: |",
        "|    128 | a\\|b |",
        "|   4096 |    c |",
    ]


def test_summary_markdown_ends_with_one_newline(results: NiahResults) -> None:
    text = summary_markdown([results], ["m"])
    assert text.endswith("|\n") or text.endswith(".\n")
    assert not text.endswith("\n\n")


def test_cases_csv_has_a_row_per_case_and_a_model_column(
    report: dict[str, Path], results: NiahResults
) -> None:
    with report["cases.csv"].open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
    fields = [f.name for f in dataclasses.fields(CaseResult)]
    assert reader.fieldnames == ["model", *fields]
    assert len(rows) == len(results.cases)
    assert {row["model"] for row in rows} == {"lexical:tfidf"}
    first = results.cases[0]
    assert rows[0]["id"] == first.id
    assert float(rows[0]["cos_qh"]) == first.cos_qh


def test_cases_csv_keeps_full_float_precision(results: NiahResults) -> None:
    text = cases_csv([results], ["m"])
    rows = list(csv.DictReader(text.splitlines()))
    pairs = zip(rows, results.cases, strict=True)
    for row, case in pairs:
        # str(float) is the shortest text that reads back to the same float.
        assert row["cos_qh"] == repr(case.cos_qh)
        assert row["normalized"] == repr(case.normalized)


# -- GitHub step summary ----------------------------------------------------------------------


@pytest.mark.integration
def test_step_summary_is_appended(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("## earlier step\nkept", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    written = write_report([results], tmp_path / "out")
    summary = written["summary.md"].read_text(encoding="utf-8")
    assert step_summary.read_text(encoding="utf-8") == "## earlier step\nkept\n" + summary


@pytest.mark.integration
def test_report_writes_only_the_files_it_returns(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    written = write_report([results], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(written)


# -- labels and errors ------------------------------------------------------------------------


def test_default_labels_are_model_names_made_unique(results: NiahResults) -> None:
    assert default_labels([results]) == ["lexical:tfidf"]
    assert default_labels([results, results]) == ["lexical:tfidf", "lexical:tfidf #2"]


@pytest.mark.parametrize(
    ("count", "labels", "message"),
    [
        (0, None, "at least one"),
        (1, ["a", "b"], "2 labels for 1 results"),
        (2, ["a", "a"], "repeated: a"),
    ],
)
def test_bad_labels_are_refused(
    results: NiahResults, tmp_path: Path, count: int, labels: list[str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        write_report([results] * count, tmp_path, labels=labels)
    assert not any(tmp_path.iterdir())


def test_missing_matplotlib_is_named(
    results: NiahResults, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MatplotlibMissingError, match=re.escape("pip install 'matplotlib>=3.8'")):
        write_report([results], tmp_path)
