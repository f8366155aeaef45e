"""The HTML report renders in a real browser (headless Chromium screenshot)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.report import write_report

CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 4000


def screenshot(page: Path, png: Path, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            f"--window-size={WIDTH},{HEIGHT}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_report_renders_in_chromium(
    shared_corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not CHROMIUM.exists():
        pytest.skip("chromium not installed: apt-get install chromium")
    from matplotlib.image import imread

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    config = NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        lengths=(128, 512, 2048),
        positions=5,
        arms=("onehop", "literal"),
        bootstrap=50,
        groups=("dietary", "location", "medical"),
    )
    page = write_report([run_experiment(config)], tmp_path / "report")["report.html"]
    png = tmp_path / "screenshot.png"
    done = screenshot(page, png, tmp_path / "profile")
    assert png.is_file(), f"no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    assert png.stat().st_size > 50_000
    pixels = imread(png)
    assert pixels.shape[:2] == (HEIGHT, WIDTH)
    # A blank or failed page is one colour; a rendered report has text, tables and plots.
    colours = {tuple(p) for p in pixels.reshape(-1, pixels.shape[-1])[::97]}
    assert len(colours) > 100
