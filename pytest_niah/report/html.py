"""The self-contained HTML report: one page, inline CSS, figures embedded as base64 PNG.

Its sections: the comparison, configuration, versions, per-length metrics, effective
lengths, figures and the History section it is given. The page's pieces (the style sheet,
tables, figures, the page around them) are in :mod:`pytest_niah.report.html_parts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_niah.display import fmt
from pytest_niah.report.comparison import ReportComparison
from pytest_niah.report.comparison_table import COMPARISON_HEADER, COMPARISON_TEXT_COLUMNS
from pytest_niah.report.escape import html_text as escape
from pytest_niah.report.html_parts import Captioned, figure_html, html_page, table
from pytest_niah.report.markdown_and_csv import length_cells
from pytest_niah.report.measured_window import measured_suffix
from pytest_niah.report.terminal_tables import effective_length_of, note_texts, window_text
from pytest_niah.results.niah_results import NiahResults


def render_html(
    results: Sequence[NiahResults],
    labels: Sequence[str],
    figures: Sequence[tuple[Captioned, bytes]],
    comparisons: Sequence[ReportComparison] = (),
    comparison_png: bytes | None = None,
    history: str = "",
) -> str:
    """The whole report page.

    Args:
        results: One results object per model.
        labels: The display name of each, same order.
        figures: The drawn figures, in page order, as ``(spec, png_bytes)``.
        comparisons: Each model's comparison with its baseline; a section with their
            tables comes first when there are any.
        comparison_png: The comparison figure (:func:`~pytest_niah.report.figures.
            comparison_figure`), shown in that section.
        history: The History section of saved runs
            (:func:`~pytest_niah.report.history_view.history_section`), shown last, with a link
            in the header; none when empty.

    Returns:
        HTML text; it references nothing outside itself. Every text that came from the
        user (labels, model, corpus and needle-set names, paths) is escaped.
    """
    title = f"pytest-niah report: {', '.join(labels)}"
    body = [
        _header(results, labels, figures, bool(comparisons), bool(history)),
        _comparison_section(comparisons, comparison_png),
        _runs_section(results, labels),
        _versions_section(results, labels),
        _metrics_section(results, labels),
        _effective_section(results, labels),
        _figures_section(labels, figures, first=2 if comparison_png else 1),
        history,
    ]
    return html_page(title, [part for part in body if part])


def _header(
    results: Sequence[NiahResults],
    labels: Sequence[str],
    figures: Sequence[tuple[Captioned, bytes]],
    compared: bool = False,
    history: bool = False,
) -> str:
    models = ", ".join(
        f"{escape(label)} (<code>{escape(r.model.name)}</code>, "
        f"<code>{escape(r.model.fingerprint[:12])}</code>)"
        for label, r in zip(labels, results, strict=True)
    )
    kind = "Comparison of" if len(results) > 1 else "Model"
    links = [
        *([("comparison", "Comparison")] if compared else []),
        ("runs", "Configuration"),
        ("versions", "Versions"),
        ("metrics", "Per-length metrics"),
        ("effective", "Effective lengths"),
        *((spec.id, spec.title) for spec, _ in figures),
        *([("history", "History")] if history else []),
    ]
    nav = "".join(f'<a href="#{escape(i)}">{escape(text)}</a>' for i, text in links)
    return (
        f'<header><h1>pytest-niah report</h1><p class="lead">{kind} {models}</p>'
        f"<nav>{nav}</nav></header>"
    )


def _runs_section(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    fields: list[tuple[str, Callable[[NiahResults], str]]] = [
        ("model", lambda r: r.model.name),
        ("fingerprint", lambda r: r.model.fingerprint[:12]),
        ("window", lambda r: window_text(r) + measured_suffix(r.model)),
        ("corpus", lambda r: str(r.corpus.get("name", r.config.corpus))),
        ("needles", lambda r: str(r.needle_set.get("name", r.config.needles))),
        ("groups", lambda r: ", ".join(r.config.groups) or "all"),
        ("lengths", lambda r: ", ".join(map(str, r.config.lengths))),
        ("positions", lambda r: str(r.config.positions)),
        ("controls", lambda r: str(r.config.controls)),
        ("orders", lambda r: ", ".join(r.config.orders)),
        ("arms", lambda r: ", ".join(r.config.arms)),
        ("scoring", lambda r: ", ".join(r.config.scoring)),
        ("bootstrap", lambda r: str(r.config.bootstrap)),
        ("seed", lambda r: str(r.config.seed)),
        ("seeds pooled", lambda r: ", ".join(map(str, r.config.seeds)) or "none"),
    ]
    body = [[name, *(get(r) for r in results)] for name, get in fields]
    return (
        '<section id="runs"><h2>Models and configuration</h2>'
        f"{table(['', *labels], body, numeric_from=len(labels) + 1)}</section>"
    )


def _versions_section(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    packages = sorted({name for r in results for name in r.versions})
    body = [[name, *(r.versions.get(name, "–") for r in results)] for name in packages]
    return (
        '<section id="versions"><h2>Package versions</h2>'
        f"{table(['package', *labels], body, numeric_from=len(labels) + 1)}</section>"
    )


def _metrics_section(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    parts = ['<section id="metrics"><h2>Per-length metrics</h2>']
    for label, result in zip(labels, results, strict=True):
        for arm, scoring in result.variants:
            header, body = length_cells(result, arm, scoring)
            heading = f"{label}: arm {arm}, scoring {scoring}"
            parts.append(f"<h3>{escape(heading)}</h3>{table(header, body)}")
            parts.extend(
                f'<p class="note">Note: {escape(text)}.</p>'
                for text in note_texts(result, arm, scoring)
            )
    parts.append("</section>")
    return "\n".join(parts)


def _effective_section(results: Sequence[NiahResults], labels: Sequence[str]) -> str:
    body = [
        [
            label,
            e.arm,
            e.scoring,
            effective_length_of(result, e.arm, e.scoring),
            fmt(e.reference_auc),
        ]
        for label, result in zip(labels, results, strict=True)
        for e in result.effective_lengths
    ]
    header = ["model", "arm", "scoring", "effective length", "AUC at shortest length"]
    content = (
        table(header, body, numeric_from=4)
        if body
        else '<p class="muted">Not computed for these results.</p>'
    )
    return f'<section id="effective"><h2>Effective lengths</h2>{content}</section>'


def _figures_section(
    labels: Sequence[str], figures: Sequence[tuple[Captioned, bytes]], first: int = 1
) -> str:
    items = [figure_html(spec, png, labels, i) for i, (spec, png) in enumerate(figures, first)]
    return '<section id="figures"><h2>Figures</h2>\n' + "\n".join(items) + "\n</section>"


def _comparison_section(
    comparisons: Sequence[ReportComparison], comparison_png: bytes | None
) -> str:
    if not comparisons:
        return ""
    from pytest_niah.report.figures import COMPARISON_FIGURE

    parts = ['<section id="comparison"><h2>Comparison with the baseline</h2>']
    for comparison in comparisons:
        header, body = comparison.cells()
        parts.append(f"<h3>{escape(comparison.title)}</h3>")
        parts.append(f"<p>{escape(comparison.paired_text())}</p>")
        counts = comparison.counts_text()
        if counts:
            parts.append(f"<p>{escape(counts)}</p>")
        numeric = {2, 3, *range(COMPARISON_TEXT_COLUMNS, len(header) - 1)}
        parts.append(table(header, body, numeric=numeric, classes=_verdict_class))
        parts.extend(f"<p>Note: {escape(text)}.</p>" for text in comparison.notes())
        verdicts = comparison.verdict_texts()
        if verdicts:
            items = "".join(f"<li>{escape(text)}</li>" for text in verdicts)
            parts.append(f'<ul class="verdicts">{items}</ul>')
        allowed = comparison.allowed_texts()
        if allowed:
            parts.append(f"<p>Accepted differences: {escape('; '.join(allowed))}.</p>")
    if comparison_png is not None:
        labels = [c.label for c in comparisons]
        parts.append(figure_html(COMPARISON_FIGURE, comparison_png, labels, 1))
    parts.append("</section>")
    return "\n".join(parts)


def _verdict_class(column: int, text: str) -> str:
    """The verdict column's cells get their state as a class (``regressed``, ...)."""
    return text.replace(" ", "-") if column == len(COMPARISON_HEADER) - 1 and text else ""
