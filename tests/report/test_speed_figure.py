"""The speed in the report: a figure of tokens/s against length, a summary line and table."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pytest_niah.report import ReportComparison, write_report
from pytest_niah.report.speed_figure import LOG_ABOVE, SPEED_FIGURE_ID, speed_figure, y_scale
from pytest_niah.report.speed_text import speed_line, speed_markdown
from pytest_niah.results.compare import compare_results
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.speed_record import SpeedRecord, length_speed, request_latency

pytest.importorskip("matplotlib")

IMAGE = re.compile(r'<figure id="fig-speed">.*?<img src="data:image/png;base64,([^"]+)"', re.S)


def record(rate_128: float, rate_512: float | None, latency: tuple[float, ...] = ()) -> SpeedRecord:
    """Speed at 128 and 512 tokens (``None``: 512 wholly read from the cache)."""
    at_512 = (
        length_speed(512, 4, 4, 0, 0.0)
        if rate_512 is None
        else length_speed(512, 4, 0, 2048, 2048 / rate_512)
    )
    return SpeedRecord(
        lengths=[length_speed(128, 4, 0, 512, 512 / rate_128), at_512],
        latency=request_latency(latency),
    )


def speed_png(folder: dict[str, Path]) -> str | None:
    match = IMAGE.search(folder["report.html"].read_text(encoding="utf-8"))
    return match.group(1) if match else None


def write(results: list[NiahResults], out: Path, **kwargs) -> dict[str, Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        return write_report(results, out, **kwargs)


@pytest.mark.integration
def test_the_report_draws_speed_only_where_it_was_measured(results, tmp_path):
    fast = dataclasses.replace(results, speed=record(50_000.0, 40_000.0))
    assert speed_png(write([fast], tmp_path / "a")) is not None
    assert speed_png(write([fast.without_speed()], tmp_path / "b")) is None
    # Every length read from the cache: nothing to draw.
    cached = SpeedRecord(lengths=[length_speed(128, 4, 4, 0, 0.0)])
    assert speed_png(write([dataclasses.replace(results, speed=cached)], tmp_path / "c")) is None


@pytest.mark.integration
def test_a_loaded_baseline_is_drawn_beside_this_run(results, tmp_path):
    current = dataclasses.replace(results, speed=record(50_000.0, 40_000.0))
    comparison = compare_results(current, results, n_resamples=0, seed=0)
    alone = ReportComparison("lexical:tfidf", "base", comparison)
    beside = dataclasses.replace(alone, baseline_speed=record(150_000.0, 120_000.0))
    without = speed_png(write([current], tmp_path / "a", comparisons=[alone]))
    with_base = speed_png(write([current], tmp_path / "b", comparisons=[beside]))
    assert without is not None and with_base is not None and with_base != without
    # The same figure as drawing the two records directly: the baseline is a second line.
    direct = speed_figure([current], ["lexical:tfidf"], [beside.baseline_speed])
    assert direct != speed_figure([current], ["lexical:tfidf"])


def test_speed_never_changes_a_comparison_verdict(results):
    slow = dataclasses.replace(results, speed=record(1.0, 1.0))
    fast = dataclasses.replace(results, speed=record(1e9, 1e9))
    assert (
        compare_results(slow, fast, n_resamples=20, seed=1).to_dict()
        == compare_results(
            results.without_speed(), results.without_speed(), n_resamples=20, seed=1
        ).to_dict()
    )


def test_the_summary_line_and_markdown_table_show_tokens_per_second(results):
    served = dataclasses.replace(results, speed=record(51_234.4, None, (0.01, 0.02, 0.2)))
    assert speed_line(served) == (
        "speed (tokens/s of model time, per length): 128: 51,234, 512: cached; request "
        "latency p50 0.020 s, p95 0.200 s (3 requests)"
    )
    assert speed_line(served, reused=True).endswith(
        "(measured by the run that computed these results)"
    )
    assert speed_line(results.without_speed()) is None
    table = speed_markdown(served, baseline=dataclasses.replace(results, speed=record(9e4, 8e4)))
    assert table[:2] == [
        "| haystack length | tokens embedded | model seconds | tokens/s | baseline tokens/s |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    assert table[2] == "| 128 | 512 | 0.010 | 51,234 | 90,000 |"
    assert table[3] == "| 512 | 0 | 0.000 | cached | 80,000 |"
    assert table[-1] == "Request latency p50 0.020 s, p95 0.200 s (3 requests)."


@pytest.mark.integration
def test_summary_md_has_a_speed_section(results, tmp_path):
    fast = dataclasses.replace(results, speed=record(50_000.0, 40_000.0))
    summary = write([fast], tmp_path / "a")["summary.md"].read_text(encoding="utf-8")
    assert "### lexical:tfidf: speed (model time, never gated)" in summary
    assert "| 128 | 512 | 0.010 | 50,000 |" in summary
    assert SPEED_FIGURE_ID == "fig-speed"


def test_speeds_far_apart_get_a_logarithmic_axis(results):
    # A static model beside a transformer: on a linear axis the slower line lies on zero.
    assert y_scale([3_000.0, 5_000.0]) == "linear"
    assert y_scale([3_000.0, 3_000.0 * LOG_ABOVE]) == "linear"
    assert y_scale([3_000.0, 3_000.0 * LOG_ABOVE + 1]) == "log"
    assert y_scale([0.0, 5.0, 5_000.0]) == "log"  # a zero rate is not drawn on a log axis
    assert y_scale([]) == "linear"
    apart = [
        dataclasses.replace(results, speed=record(5_000.0, 4_000.0)),
        dataclasses.replace(results, speed=record(5_000_000.0, 4_000_000.0)),
    ]
    near = [apart[0], dataclasses.replace(results, speed=record(6_000.0, 5_000.0))]
    assert speed_figure(apart, ["a", "b"]) != speed_figure(near, ["a", "b"])
