"""What a new user reads and installs: every packaged model in the help, ``[all]`` complete."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_niah.config.options import BY_NAME
from pytest_niah.embed.models import PACKAGED

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]


def extra_requirements(extra: str) -> set[str]:
    """Every distribution an extra installs, following ``pytest-niah[...]`` references."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    found: set[str] = set()
    for requirement in extras[extra]:
        if own := re.fullmatch(r"pytest-niah\[(.+)\]", requirement):
            for name in own.group(1).split(","):
                found |= extra_requirements(name.strip())
        else:
            found.add(re.split(r"[<>=!~; \[]", requirement, maxsplit=1)[0].lower())
    return found


def test_all_installs_pytest_xdist_for_the_readmes_n_2():
    assert "pytest-xdist" in extra_requirements("all")
    assert extra_requirements("all") <= extra_requirements("test")


def test_all_installs_pytest_benchmark_for_speed_and_the_repos_addopts():
    """--niah-speed needs pytest-benchmark; so does this repository's --benchmark-disable."""
    assert "pytest-benchmark" in extra_requirements("all")


def test_every_packaged_model_is_in_the_model_options_help(pytester: pytest.Pytester):
    assert set(PACKAGED) >= {"packaged-minilm", "packaged-static"}
    for name in PACKAGED:
        assert repr(name) in BY_NAME["model"].help
    shown = " ".join(pytester.runpytest("--help").stdout.str().split())
    for name in PACKAGED:
        assert f"'{name}'" in shown, name
