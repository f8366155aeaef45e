"""Draw the README's speed figure from real runs: ``python benchmarks/readme_speed_figure.py``.

Two runs of the packaged MiniLM (the first is the second's baseline, as a saved run would
be) and one of the packaged static model, each with the speed record on, on a small grid;
the figure is the report's own "Embedding speed" figure
(:func:`pytest_niah.report.speed_figure.speed_figure`), written to ``docs/speed-figure.png``.
The lengths and tokens/s are printed, with the machine, for the README's caption.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
from pathlib import Path

from bench_checks import check_config, check_output

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    """Run, draw, write; print what the figure shows."""
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.experiment import run_experiment
    from pytest_niah.report.speed_figure import speed_figure

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "speed-figure.png")
    parser.add_argument("--lengths", default="128,256,512,1024")
    args = parser.parse_args(argv)
    check_config(parser, model="packaged-minilm", lengths=args.lengths)
    check_output(parser, "--out", args.out)
    grid = {"lengths": args.lengths, "positions": 2, "groups": ("dietary", "location")}
    runs = {}
    for name, model in (
        ("baseline", "packaged-minilm"),
        ("minilm", "packaged-minilm"),
        ("static", "packaged-static"),
    ):
        with tempfile.TemporaryDirectory() as cache:  # nothing read from a cache: all timed
            runs[name] = run_experiment(
                NiahConfig(model=model, **grid), cache_dir=cache, speed=True
            )
    png = speed_figure(
        [runs["minilm"], runs["static"]],
        ["packaged-minilm", "packaged-static"],
        [runs["baseline"].speed, None],
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(png)
    print(f"machine: {platform.machine()}, {platform.system()}, python {platform.python_version()}")
    for name, run in runs.items():
        assert run.speed is not None
        rates = ", ".join(
            f"{e.length}: {e.tokens_per_second:,.0f}"
            for e in run.speed.lengths
            if e.tokens_per_second
        )
        print(f"{name} ({run.config.model}) tokens/s: {rates}")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
