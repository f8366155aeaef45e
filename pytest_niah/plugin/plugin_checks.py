"""What the options need from other plugins and libraries: syrupy, pytest-benchmark, matplotlib."""

from __future__ import annotations

import pytest

from pytest_niah.errors import ConfigError, ExtraMissingError
from pytest_niah.plugin.problems import Problems
from pytest_niah.plugin.session import NiahSession


def check_plugins(session: NiahSession, config: pytest.Config, problems: Problems) -> None:
    """The plugins and libraries the options need: syrupy, pytest-benchmark, matplotlib."""
    settings = session.settings
    if settings.snapshot and not config.pluginmanager.hasplugin("syrupy"):
        problems.add(
            ConfigError("--niah-snapshot needs syrupy", "pip install 'pytest-niah[snapshot]'")
        )
    if settings.speed and not config.pluginmanager.hasplugin("benchmark"):
        problems.add(
            ExtraMissingError(
                "--niah-speed times test_speed through pytest-benchmark's benchmark fixture, "
                "and the pytest-benchmark plugin is not installed (or is off: -p no:benchmark)",
                hint="pip install pytest-benchmark, or drop --niah-speed",
            )
        )
    if settings.report and not importable("matplotlib"):
        problems.add(
            ConfigError(
                f"--niah-report={settings.report} needs matplotlib for the report's figures, "
                "and it cannot be imported here",
                "pip install 'pytest-niah[report]', or drop --niah-report",
            )
        )


def check_speed_fail(session: NiahSession, config: pytest.Config, problems: Problems) -> None:
    """--niah-speed-fail gates test_speed against a run pytest-benchmark loads to compare.

    That run is checked once loaded, at session start (:class:`CompareCheck`).
    """
    allowance = session.settings.speed_fail
    if allowance is None:
        return
    flag = f"--niah-speed-fail={allowance:g}%"
    if not session.settings.speed:
        problems.add(
            ConfigError(
                f"{flag} gates test_speed, which only --niah-speed adds",
                "add --niah-speed, or drop --niah-speed-fail",
            )
        )
    elif not config.getoption("benchmark_compare", None):
        problems.add(
            ConfigError(
                f"{flag} has no compared run: it compares relative_speed with the run "
                "pytest-benchmark's --benchmark-compare loads",
                "save a run first (--niah-speed --benchmark-save=NAME, or "
                "--benchmark-autosave), then add --benchmark-compare (the newest saved run) or "
                "--benchmark-compare=NUM",
            )
        )
    else:
        from pytest_niah.plugin.speed_gate import CompareCheck

        config.pluginmanager.register(CompareCheck(), "niah-speed-fail")


def importable(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails, or a None entry in sys.modules
        return False
