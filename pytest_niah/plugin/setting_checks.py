"""The configure-time checks of a session built from the options, each problem collected.

:func:`~pytest_niah.plugin.settings.build_session` calls these after the option values
are parsed: checks that need the configs (grid, expansions, thresholds), the shard folders
or the run store (baselines) here; the paths the run writes in
:mod:`~pytest_niah.plugin.output_checks`, what other plugins must provide in
:mod:`~pytest_niah.plugin.plugin_checks`.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_niah.config.gate_expressions import Thresholds
from pytest_niah.config.niah import ModelSpec
from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.errors import ConfigError
from pytest_niah.plugin.output_checks import check_outputs, check_save
from pytest_niah.plugin.plugin_checks import check_plugins, check_speed_fail
from pytest_niah.plugin.problems import Problems
from pytest_niah.plugin.session import NiahSession


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
    check_save(session, problems)
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
