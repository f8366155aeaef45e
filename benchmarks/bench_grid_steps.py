"""The grid benchmark's steps in subprocesses, and the grid's config every step reads.

(c) a warm pytest re-run, (d) peak RSS at two grid sizes, (e) collection: see ``bench_grid.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider")

# A plugin (-p), not a conftest: a run of the grid alone loads no conftest of its folder.
_MODULES_PLUGIN = """\
import json, os, sys

def pytest_sessionfinish(session):
    names = ("torch", "sentence_transformers", "transformers")
    with open(os.environ["NIAH_BENCH_MODULES"], "w") as handle:
        json.dump({name: name in sys.modules for name in names}, handle)
"""


def modules_plugin(root: Path) -> tuple[list[str], dict[str, str]]:
    """pytest arguments and environment that record which heavy modules a run imported."""
    (root / "niah_bench_modules.py").write_text(_MODULES_PLUGIN)
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))
    env = os.environ | {"NIAH_BENCH_MODULES": str(root / "modules.json"), "PYTHONPATH": path}
    return ["-p", "niah_bench_modules"], env


_RSS_CHILD = """\
import json, resource, sys
from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import run_experiment
run_experiment(NiahConfig(**json.loads(sys.argv[1])), cache_dir=sys.argv[2])
print("RSS_KB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def grid_values(args: argparse.Namespace) -> dict[str, Any]:
    """The grid's settings from the command line (``None``: the config's default)."""
    return {
        "model": args.model,
        "corpus": str(args.corpus),
        "lengths": args.lengths,
        "positions": args.positions,
        "groups": args.groups,
        "device": args.device,
        "dtype": args.dtype,
    }


def grid_config(args: argparse.Namespace, **changes: Any) -> Any:
    """The grid's ``NiahConfig``, with ``changes``."""
    from pytest_niah.config.niah import NiahConfig

    values = grid_values(args) | changes
    return NiahConfig(**{k: v for k, v in values.items() if v is not None})


def _pytest_args(args: argparse.Namespace, cache: Path) -> list[str]:
    config = grid_config(args)
    return [
        f"--niah-model={config.model}",
        f"--niah-corpus={config.corpus}",
        f"--niah-lengths={','.join(map(str, config.lengths))}",
        f"--niah-positions={config.positions}",
        *([f"--niah-groups={','.join(config.groups)}"] if config.groups else []),
        f"--niah-cache-dir={cache}",
        "-q",
    ]


def _outcomes(output: str) -> dict[str, int]:
    line = output.strip().splitlines()[-1] if output.strip() else ""
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", line)}


def warm_pytest(args: argparse.Namespace) -> dict[str, Any]:
    """(c): a warm pytest re-run against pytest alone on the same number of tests."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        plugin, env = modules_plugin(root)
        command = [*PYTEST, *plugin, *_pytest_args(args, root / "cache")]
        cold = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
        started = time.perf_counter()
        warm = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
        warm_s = time.perf_counter() - started
        modules = json.loads((root / "modules.json").read_text())
        counts = _outcomes(warm.stdout)
        trivial = root / "trivial"
        trivial.mkdir()
        passed, xfailed = counts.get("passed", 0), counts.get("xfailed", 0)
        (trivial / "test_trivial.py").write_text(
            "import pytest\n\n"
            f"@pytest.mark.parametrize('i', range({passed + xfailed}))\n"
            "def test_case(i, record_property):\n"
            "    record_property('i', i)\n"
            f"    if i >= {passed}:\n"
            "        pytest.xfail('missed')\n"
        )
        started = time.perf_counter()
        baseline = subprocess.run([*PYTEST, "-q"], cwd=trivial, capture_output=True, text=True)
        trivial_s = time.perf_counter() - started
    return {
        "cold_rc": cold.returncode,
        "warm_rc": warm.returncode,
        "warm_seconds": warm_s,
        "trivial_seconds": trivial_s,
        "outcomes": counts,
        "trivial_outcomes": _outcomes(baseline.stdout),
        "ratio": warm_s / trivial_s,
        "warm_imported": modules,
    }


def peak_rss(args: argparse.Namespace) -> dict[str, Any]:
    """(d): peak RSS of run_experiment in a child, on the grid and on a quarter of it."""
    full = grid_config(args)
    small = grid_config(args, positions=max(1, full.positions // 4 or 1))
    out = {}
    for name, config in (("small", small), ("full", full)):
        with tempfile.TemporaryDirectory() as cache:
            done = subprocess.run(
                [sys.executable, "-c", _RSS_CHILD, json.dumps(config.to_dict()), cache],
                capture_output=True,
                text=True,
            )
        found = re.search(r"RSS_KB (\d+)", done.stdout)
        out[name] = {
            "positions": config.positions,
            "rss_mib": int(found.group(1)) / 1024 if found else None,
            "rc": done.returncode,
        }
    if out["small"]["rss_mib"] and out["full"]["rss_mib"]:
        out["ratio"] = out["full"]["rss_mib"] / out["small"]["rss_mib"]
    return out


def collection(args: argparse.Namespace) -> dict[str, Any]:
    """(e): collecting the full default grid, and whether torch was imported by then."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        plugin, env = modules_plugin(root)
        started = time.perf_counter()
        done = subprocess.run(
            [*PYTEST, *plugin, f"--niah-model={args.model}", "--collect-only", "-q"],
            cwd=root,
            capture_output=True,
            text=True,
            env=env,
        )
        seconds = time.perf_counter() - started
        modules = json.loads((root / "modules.json").read_text())
    found = re.search(r"(\d+) tests? collected in ([\d.]+)s", done.stdout)
    return {
        "tests": int(found.group(1)) if found else None,
        "pytest_seconds": float(found.group(2)) if found else None,
        "wall_seconds": seconds,
        "imported": modules,
    }


def token_space(args: argparse.Namespace) -> dict[str, Any]:
    """Whether the run's haystacks are built in token space: its builder, on the grid.

    How many needle haystacks carry ids spliced from their fillers' (the rest were
    tokenized as text), and whether fillers are joined from their sentences' ids.
    """
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.experiment import load_inputs
    from pytest_niah.experiment.planning import haystack_builder, needle_kinds
    from pytest_niah.haystacks.splice import SplicedEncoding

    config = grid_config(args)
    embedder = load_embedder(config)
    inputs = load_inputs(config, cache_dir=None)
    builder = haystack_builder(config, embedder, inputs, None)
    spliced = needles = 0
    for block in builder.blocks(
        inputs.selected.groups, config.lengths, config.positions, needle_kinds(config),
        config.orders, config.controls, config.draws,
    ):  # fmt: skip
        for haystack, encoding in zip(block.haystacks, block.encodings, strict=True):
            if not haystack.is_control:
                needles += 1
                spliced += isinstance(encoding, SplicedEncoding)
    tokenizer = embedder.tokenizer
    return {
        "needle_haystacks": needles,
        "spliced": spliced,
        "fillers_from_sentence_ids": bool(getattr(tokenizer, "splits_at_spaces", False)),
        "splices_needles": bool(getattr(tokenizer, "splices_needles", False)),
    }
