"""The hooks of collection and selection: the shipped suite, its tests, pasted ids, shard skips.

With ``--niah-model`` the shipped suite (``pytest_niah/suite/test_niah.py``) is collected
and parametrized with one test per case and one gate per length. Without paths on the
command line the run is that suite alone (not ``testpaths``, not the current folder).
Registered by :mod:`pytest_niah.plugin.hooks` (its ``pytest_plugins``).
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from pytest_niah.plugin.active_session import active_session

SUITE_FILE = Path(__file__).parents[1] / "suite" / "test_niah.py"
SNAPSHOT_SUITE_FILE = SUITE_FILE.with_name("test_niah_snapshot.py")
SPEED_SUITE_FILE = SUITE_FILE.with_name("test_niah_speed.py")
SUITE_NAMES = (SUITE_FILE.name, SNAPSHOT_SUITE_FILE.name, SPEED_SUITE_FILE.name)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """With ``--niah-model`` and no path (or only pasted ids), the run is the grid alone.

    The project's ``testpaths`` and folder are left out before pytest loads their conftests:
    a team's tests (and a conftest importing what CI does not install) play no part.
    """
    namespace = early_config.known_args_namespace
    if getattr(namespace, "niah_model", None):
        from pytest_niah.plugin.selection import only_the_suite

        if only_the_suite(namespace.file_or_dir or [], SUITE_NAMES, SUITE_FILE.parent):
            namespace.file_or_dir = [str(SUITE_FILE.parent)]


def aim_at_the_suite(config: pytest.Config) -> None:
    """Add the shipped suite to the run's paths: alone without paths, beside pasted ids."""
    # A pasted node id ("test_niah.py::test_needle[...]") names the shipped suite: run it.
    from pytest_niah.plugin.selection import take_pasted_ids

    named = bool(take_pasted_ids(config, SUITE_NAMES, SUITE_FILE.parent))
    # Paths on the command line limit the run to them, as in any pytest run: the grid is
    # the run when none is given, and joins them when one names it ("test_niah.py").
    if config.args_source == pytest.Config.ArgsSource.ARGS and not named:
        return
    # The folder, not the file: node ids then read "test_niah.py::test_needle[...]".
    suite = str(SUITE_FILE.parent)
    if not named:
        config.args[:] = [suite]  # no path given: the grid alone, not testpaths nor "."
    elif suite not in config.args:
        config.args.append(suite)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave the snapshot and speed suites out unless they were asked for."""
    if collection_path in (SNAPSHOT_SUITE_FILE, SPEED_SUITE_FILE):
        session = active_session(config)
        if session is None:
            return True
        return not (
            session.settings.snapshot
            if collection_path == SNAPSHOT_SUITE_FILE
            else session.settings.speed
        )
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect the shipped suite whatever the project's ``python_files`` setting says."""
    shipped = (SUITE_FILE, SNAPSHOT_SUITE_FILE, SPEED_SUITE_FILE)
    if file_path in shipped and active_session(parent.config) is not None:
        if any(fnmatch.fnmatch(file_path.name, p) for p in parent.config.getini("python_files")):
            return None  # the python plugin collects it already
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per case and per gate; user tests of ``niah_model`` run once per model."""
    session = active_session(metafunc.config)
    if session is None:
        return
    from pytest_niah.haystacks.grid import param_ids

    several = len(session.labels) > 1
    if "niah_case" in metafunc.fixturenames:
        cases = session.case_params()
        metafunc.parametrize("niah_case", cases, ids=param_ids(cases, with_model=several))
    elif "niah_gate" in metafunc.fixturenames:
        gates = session.gate_params()
        metafunc.parametrize("niah_gate", gates, ids=param_ids(gates, with_model=several))
    elif "niah_speed_length" in metafunc.fixturenames:
        lengths = [(label, n) for label in session.labels for n in session.configs[label].lengths]
        ids = [f"{label}-{n}" if several else str(n) for label, n in lengths]
        metafunc.parametrize("niah_speed_length", lengths, ids=ids)
    elif "niah_snapshot_model" in metafunc.fixturenames:
        metafunc.parametrize("niah_snapshot_model", session.labels)
    elif "niah_model" in metafunc.fixturenames:
        metafunc.parametrize("niah_model", session.labels, indirect=True, scope="session")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Narrow the suite to pasted node ids; a shard job skips its cases, with the reason."""
    niah = active_session(config)
    if niah is None:
        return
    from pytest_niah.plugin.selection import narrow_to_pasted

    narrow_to_pasted(config, items, (SUITE_FILE, SNAPSHOT_SUITE_FILE))
    if niah.settings.shard is None:
        return
    index, count = niah.settings.shard
    skip = pytest.mark.skip(
        reason=f"shard job {index}/{count} only embeds; the gate job (--niah-from-shards) "
        "measures and gates"
    )
    for item in items:
        if item.get_closest_marker("niah") is not None:
            item.add_marker(skip)
