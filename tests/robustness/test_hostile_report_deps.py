"""--niah-report without matplotlib: a usage error with the install line before the run,
never a traceback after minutes of embedding."""

from __future__ import annotations

import pytest

# A plugin (-p), loaded before pytest-niah reads its options: matplotlib then cannot be
# imported. Not a conftest: a run of the grid alone loads no conftest of the project.
NO_MATPLOTLIB = """
import sys

for name in list(sys.modules):
    if name == "matplotlib" or name.startswith("matplotlib."):
        del sys.modules[name]
sys.modules["matplotlib"] = None  # "import matplotlib" raises ImportError
"""


def test_report_without_matplotlib_is_a_usage_error(niah_run):
    niah_run.pytester.makepyfile(no_matplotlib=NO_MATPLOTLIB)
    result = niah_run.run("-p", "no_matplotlib", "--niah-report=report", subprocess=True)
    niah_run.assert_usage_error(
        result,
        "--niah-report=",
        "needs matplotlib",
        "Fix: pip install 'pytest-niah[report]', or drop --niah-report",
    )
    assert not (niah_run.path / "report").exists()


def test_without_report_matplotlib_is_not_needed(niah_run):
    niah_run.pytester.makepyfile(no_matplotlib=NO_MATPLOTLIB)
    result = niah_run.run("-p", "no_matplotlib", "--niah-json=out.json", subprocess=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    niah_run.no_traceback(result)
    assert (niah_run.path / "out.json").is_file()


def test_report_with_matplotlib_is_accepted(niah_run):
    pytest.importorskip("matplotlib")
    result = niah_run.run("--niah-report=report", "--collect-only")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
