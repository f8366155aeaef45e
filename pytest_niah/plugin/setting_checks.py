"""The configure-time checks of a session built from the options, each problem collected.

:func:`~pytest_niah.plugin.settings.build_session` calls these after the option values
are parsed: checks that need the configs (grid, expansions), the file system (outputs,
saved runs, shard folders), the run store (baselines) or another plugin.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_niah.config.gate_expressions import Thresholds
from pytest_niah.config.niah import ModelSpec
from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.errors import ConfigError, ExtraMissingError, NiahError, OutputError, SetupError
from pytest_niah.plugin.session import NiahSession


class Problems:
    """Collects the problems of independent checks (``with problems: check()``)."""

    def __init__(self) -> None:
        self.errors: list[NiahError] = []

    def add(self, error: NiahError) -> None:
        """Keep ``error``."""
        self.errors.append(error)

    def __enter__(self) -> Problems:
        return self

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> bool:
        if isinstance(error, NiahError):
            self.errors.append(error)
            return True
        return False

    def raise_any(self) -> None:
        """Raise the one problem found, or all of them as one :class:`SetupError`."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise SetupError(self.errors)


def check_session(
    session: NiahSession, values: dict[str, Any], config: pytest.Config, problems: Problems
) -> None:
    """Every check of a built session, in the order their problems are listed."""
    with problems:
        session.case_params()  # validates the needle set now, not in the middle of collection
        warn_of_a_large_grid(session, config)
    if any(arm.startswith("expand") for c in session.configs.values() for arm in c.arms):
        with problems:
            check_expansions(session)
    check_sharding(session, values, problems)
    check_save(session, config, problems)
    check_compare(session, problems)
    check_plugins(session, config, problems)
    check_speed_fail(session, config, problems)
    check_outputs(session, problems)


def check_compare(session: NiahSession, problems: Problems) -> None:
    """The baseline of every model is found and readable; a gate on it needs one."""
    settings = session.settings
    if settings.compare:
        with problems:
            session.baselines.resolve(settings.compare, session.labels)
            for label in session.labels:
                # a damaged file is a usage error now, not at the end
                session.baselines.baseline(label)
    elif settings.compare_fail:
        problems.add(
            ConfigError(
                "--niah-compare-fail has nothing to compare with",
                "add --niah-compare=NAME|PATH, or drop --niah-compare-fail",
            )
        )


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


def check_threshold_lengths(name: str, value: Thresholds, lengths: tuple[int, ...]) -> None:
    """A per-length threshold for a length the run does not have would gate nothing."""
    stray = [n for n, _ in value.per_length if n not in lengths]
    if stray:
        flag = "--niah-" + name.replace("_", "-")
        raise ConfigError(
            f"{flag} sets a threshold for length {', '.join(map(str, stray))}, which this run "
            f"does not have (--niah-lengths={','.join(map(str, lengths))})",
            f"add the length to --niah-lengths or drop it from {flag}",
        )


def check_lexical_only(specs: list[ModelSpec], values: dict[str, Any], problems: Problems) -> None:
    """Model options that no model of the run would use: every model is a lexical baseline.

    The lexical baselines read whole texts with no model behind them, so a window, model
    or encode() arguments would be silently ignored. With another model in the run the
    options apply to that one.
    """
    from pytest_niah.embed.models import LEXICAL_PREFIX

    if not all(spec.name.startswith(LEXICAL_PREFIX) for spec in specs):
        return
    names = ", ".join(sorted({spec.name for spec in specs}))
    for option, given in (
        ("--niah-max-seq-length", values["max_seq_length"] is not None),
        ("--niah-model-kwargs", bool(values["model_kwargs"])),
        ("--niah-encode-kwargs", bool(values["encode_kwargs"])),
    ):
        if given:
            problems.add(
                ConfigError(
                    f"{option} has no effect on the lexical baseline ({names}): it reads whole "
                    "texts and has no model window, model or encode() arguments",
                    f"drop {option}, or use it with a neural model such as packaged-minilm",
                )
            )


def check_expansions(session: NiahSession) -> None:
    """Every expandN arm has enough terms for every selected group (cheap, stdlib only)."""
    from pytest_niah.inputs.expansions import arm_size, load_expansions

    for label in session.labels:
        config = session.configs[label]
        expansions = load_expansions(config.expansions)
        for arm in config.arms:
            size = arm_size(arm)
            if size is None:
                continue
            for group in session.needle_set(label).groups:
                expansions.expand(group.question, group.id, size)


def warn_of_a_large_grid(session: NiahSession, config: pytest.Config) -> None:
    """Say the size of a grid far larger than usual before it starts (cases, tokens, memory)."""
    from pytest_niah.config.grid_size import grid_size
    from pytest_niah.errors import NiahWarning

    for label in session.labels:
        line = grid_size(session.configs[label], len(session.needle_set(label).groups)).warning()
        if line:
            config.issue_config_time_warning(NiahWarning(f"{label}: {line}"), stacklevel=2)


def check_sharding(session: NiahSession, values: dict[str, Any], problems: Problems) -> None:
    """A shard job embeds and writes its part only; a gate job reads parts."""
    if session.settings.shard is not None:
        if not session.settings.shard_dir:
            problems.add(
                ConfigError(
                    "--niah-shard needs --niah-shard-dir",
                    "say where this job writes its part file, e.g. --niah-shard-dir=shards",
                )
            )
        others = [
            f"--niah-{name.replace('_', '-')}"
            for name in ("from_shards", "compare", "save", "report", "json", "snapshot")
            if values[name]
        ]
        if others:
            problems.add(
                ConfigError(
                    f"--niah-shard jobs embed and write a part file only; {', '.join(others)} "
                    "belongs to the gate job",
                    "give those options to the gate job (--niah-from-shards=DIR) instead",
                )
            )
        if MAXSIM in values["scoring"]:
            problems.add(
                ConfigError(
                    "--niah-scoring=maxsim cannot be sharded: part files hold one vector per text",
                    "run maxsim without --niah-shard, or shard the other scorings",
                )
            )
    elif session.settings.shard_dir:
        problems.add(
            ConfigError(
                "--niah-shard-dir is set without --niah-shard",
                "add --niah-shard=K/N, or drop --niah-shard-dir",
            )
        )
    if session.settings.from_shards:
        for label in session.labels:
            folder = session.settings.parts_dir(label, several=len(session.labels) > 1)
            if not folder.is_dir():
                problems.add(
                    ConfigError(
                        f"--niah-from-shards: {folder} is not a folder",
                        "gather every shard job's part files there first",
                    )
                )


def check_save(session: NiahSession, config: pytest.Config, problems: Problems) -> None:
    """An empty --niah-save, or a saved run it would overwrite or cannot write."""
    given = config.getoption("niah_save")
    if given is not None and not given.strip():
        problems.add(
            ConfigError(
                "--niah-save is empty: nothing would be saved",
                "give the run a name, e.g. --niah-save=baseline, or drop the option",
            )
        )
        return
    if not session.settings.save:
        return
    from pytest_niah.files import output_problem
    from pytest_niah.results.storage import RunStore

    with problems:
        for label in session.labels:
            target = RunStore(session.settings.store_dir).target(session.settings.save, label)
            try:
                exists = target.exists()
            except OSError as exc:  # e.g. a name the file system cannot hold
                if output_problem(str(session.settings.store_dir), folder=True):
                    return  # the store folder itself is the cause: check_outputs names it
                raise OutputError(
                    f"--niah-save: run {session.settings.save[:40]!r} of model {label!r} cannot be "
                    f"saved at {target} ({exc.strerror or exc})",
                    "give the run a shorter, plain name, e.g. --niah-save=baseline, or another "
                    "--niah-storage folder",
                ) from None
            if exists and not session.settings.save_overwrite:
                raise OutputError(
                    f"--niah-save: run {session.settings.save!r} of model {label!r} exists "
                    f"already ({target})",
                    "add --niah-save-overwrite to replace it, or save under another name",
                )


def check_outputs(session: NiahSession, problems: Problems) -> None:
    """Every path the run will write, checked now rather than after minutes of embedding."""
    from pytest_niah.files import output_problem
    from pytest_niah.plugin.outputs import json_target

    wanted: list[tuple[str, str, bool]] = []
    if session.settings.json:
        several = len(session.labels) > 1
        targets = {
            str(json_target(session.settings.json, label, several=several)): None
            for label in session.labels
        }
        wanted += [("--niah-json", target, False) for target in targets]
    if session.settings.report:
        wanted.append(("--niah-report", session.settings.report, True))
    if session.settings.export_haystacks:
        wanted.append(("--niah-export-haystacks", session.settings.export_haystacks, False))
    if session.settings.save:
        wanted.append(("--niah-storage (the run store)", str(session.settings.store_dir), True))
    if session.settings.shard is not None and session.settings.shard_dir:
        wanted.append(("--niah-shard-dir", session.settings.shard_dir, True))
    if (
        session.settings.snapshot
    ):  # the default folder too: a file in its place is found now, not after
        wanted.append(("--niah-snapshot-dir", str(session.settings.snapshot_dir), True))
    for what, path, folder in wanted:
        problem = output_problem(path, folder=folder)
        if problem:
            problems.add(OutputError(f"{what}: {path} {problem}", "choose a path you can write to"))
    # Every run but a shard job's appends to the step summary when one is set; the report
    # package (numpy) is imported only then, so that collection stays light.
    if session.settings.shard is None and os.environ.get("GITHUB_STEP_SUMMARY"):
        from pytest_niah.report import check_step_summary

        with problems:
            check_step_summary()


def importable(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails, or a None entry in sys.modules
        return False
