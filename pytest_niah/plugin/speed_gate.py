"""``--niah-speed-fail``: test_speed against the run pytest-benchmark loaded to compare.

pytest-benchmark's ``--benchmark-compare-fail`` reads only its own timing statistics (the
clock, which a shared runner's load stretches many times over); this gate reads the
``relative_speed`` each test_speed stores in ``extra_info`` (CPU time against a reference
workload timed beside it), from the very saved run ``--benchmark-compare`` loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from pytest_niah.errors import ConfigError
from pytest_niah.experiment.speed import SpeedChange, compared_relative_speed

RESAVE = (
    "save a run with --niah-speed (e.g. --niah-speed --benchmark-save=NAME) and compare with "
    "that one (--benchmark-compare=NUM)"
)


def compared_runs(config: pytest.Config) -> Mapping[str, Mapping[str, Any]]:
    """Saved run (its file, relative to the storage) -> {test node id: its benchmark}.

    What ``--benchmark-compare`` loaded. pytest-benchmark has no public accessor: its
    session object on the config holds it (empty before its own ``pytest_configure``).
    """
    session = getattr(config, "_benchmarksession", None)
    found = getattr(session, "compared_mapping", None) or {}
    return {str(path): benches for path, benches in found.items()}


def check_speed_compared(config: pytest.Config) -> None:
    """--benchmark-compare found a saved run for --niah-speed-fail.

    pytest-benchmark only warns when ``--benchmark-compare`` matches no saved file; a speed
    gate with nothing to compare with would fail every test_speed instead.

    Raises:
        ConfigError: naming the storage folder and the fix.
    """
    if compared_runs(config):
        return
    compare = config.getoption("benchmark_compare", None)
    asked = "--benchmark-compare" if compare is True else f"--benchmark-compare={compare}"
    storage = config.getoption("benchmark_storage", None)
    raise ConfigError(
        f"--niah-speed-fail: {asked} found no saved run in the benchmark storage ({storage})",
        "save one there first with --niah-speed --benchmark-save=NAME, or point "
        "--benchmark-storage or --benchmark-compare=NUM at an existing one",
    )


class CompareCheck:
    """Registered by the configure-time checks: the compared run, once pytest-benchmark loaded it.

    pytest-benchmark loads ``--benchmark-compare``'s run in its own (last) ``pytest_configure``,
    after pytest-niah's; ``pytest_sessionstart`` comes after both, still before any work.
    """

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A usage error when ``--benchmark-compare`` loaded no saved run."""
        try:
            check_speed_compared(session.config)
        except ConfigError as exc:
            raise pytest.UsageError(f"pytest-niah: {exc}") from None


def gate_speed(
    config: pytest.Config, node_id: str, info: dict[str, Any], allowance: float
) -> list[str]:
    """Compare this test_speed's ``info`` with every compared run; record it in ``info``.

    ``info["speed_compared"]`` gets one entry per compared run (its relative_speed and the
    change). Returns the failures, one message each (empty: every run within the allowance).
    """
    flag = f"--niah-speed-fail={allowance:g}%"
    current = info.get("relative_speed")
    model, length = info["model"], info["length"]
    failures: list[str] = []
    compared: list[dict[str, Any]] = []
    for run, benches in compared_runs(config).items():
        try:
            before = compared_relative_speed(benches.get(node_id), model, length)
        except ValueError as exc:
            failures.append(
                f"{flag}: the compared run {run} {exc}: nothing to compare. Fix: {RESAVE}"
            )
            continue
        if not current:
            failures.append(
                f"{flag}: this run measured no relative_speed (no CPU time in its rounds). "
                "Fix: raise --benchmark-max-time or --benchmark-min-rounds"
            )
            break
        change = SpeedChange(float(current), before, allowance)
        compared.append({"run": run, "relative_speed": before, "change": change.change})
        if change.failed:
            failures.append(
                f"{flag}: speed fell by more than the allowance: {change.describe(run)}"
            )
    info["speed_compared"] = compared
    return failures
