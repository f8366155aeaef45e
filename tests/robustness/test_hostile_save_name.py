"""Hostile --niah-save names and run stores: a usage error naming the input, never INTERNALERROR."""

from __future__ import annotations

import pytest

from pytest_niah.errors import ConfigError
from pytest_niah.results.storage import RunStore, check_name

LONG_NAME = "s" * 300


def test_an_over_long_run_name_is_a_usage_error(niah_run):
    result = niah_run.run(f"--niah-save={LONG_NAME}")
    niah_run.assert_usage_error(
        result, "--niah-save: run name 'sss", "is 300 bytes long", "Fix: give a shorter name"
    )


def test_an_over_long_run_name_with_the_machine_folder_there_is_a_usage_error(niah_run):
    """The machine folder exists once a run is saved: the name used to reach the disk."""
    first = niah_run.run("--niah-save=base")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    assert list((niah_run.path / ".niah" / "runs").glob("*/*/base.json.gz"))
    result = niah_run.run(f"--niah-save={LONG_NAME}")
    niah_run.assert_usage_error(result, "--niah-save: run name 'sss", "Fix: give a shorter name")


def test_a_store_folder_the_file_system_cannot_hold_is_one_usage_error(niah_run):
    store = niah_run.path / ("d" * 300)
    result = niah_run.run(f"--niah-storage={store}", "--niah-save=base")
    err = niah_run.assert_usage_error(
        result, "--niah-storage (the run store)", "is longer than 255 bytes", "Fix: "
    )
    assert "problems" not in err, "one cause, one message"


@pytest.mark.parametrize("name", ["s" * 201, "é" * 101])
def test_check_name_refuses_names_too_long_for_a_file(name):
    with pytest.raises(ConfigError, match="too long for a file name"):
        check_name(name)


def test_check_name_takes_a_long_name_that_fits(tmp_path):
    name = "s" * 200
    check_name(name)
    target = RunStore(tmp_path).target(name, "m")
    target.parent.mkdir(parents=True)
    target.write_text("{}", encoding="utf-8")  # the file system takes it


def test_a_saved_run_path_that_cannot_be_looked_at_is_a_usage_error(niah_run):
    """Any OSError while looking for a saved run of that name (here a name too long for the
    file system beneath a usable store) is an output error naming the run, not INTERNALERROR."""
    # A plugin (-p), not a conftest: a run of the grid alone loads no conftest of the project.
    niah_run.pytester.makepyfile(
        unreachable_store="""
        from pathlib import Path

        import pytest_niah.results.storage as storage


        def unreachable(self, name, label):
            return Path(self.root) / ("x" * 300) / f"{name}.json"


        storage.RunStore.target = unreachable
        """
    )
    (niah_run.path / ".niah" / "runs").mkdir(parents=True)  # the store is there
    # A fresh interpreter: the plugin's patch must not outlive this test.
    result = niah_run.run("-p", "unreachable_store", "--niah-save=base", subprocess=True)
    niah_run.assert_usage_error(
        result,
        "--niah-save: run 'base' of model 'lexical-tfidf' cannot be saved at",
        "File name too long",
        "Fix: give the run a shorter, plain name",
    )
