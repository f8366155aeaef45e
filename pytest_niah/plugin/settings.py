"""From pytest's command line and ini files to a checked :class:`NiahSession`.

Everything that can be checked before a model loads is checked here, at configure time,
so that a wrong value is one usage error rather than a failure in every test.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_niah.config import paths
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.options import OPTIONS, Option, resolve
from pytest_niah.config.parsers import Thresholds
from pytest_niah.errors import ConfigError
from pytest_niah.plugin.session import NiahSession


def option_values(config: pytest.Config) -> dict[str, Any]:
    """Every option's value by precedence (command line, environment, ini, default).

    Paths are made absolute: relative to the ini file's folder when they come from it,
    else to the folder pytest was started in, so every xdist worker reads the same file.

    Raises:
        ConfigError: an environment or ini value is invalid; the message names it.
    """
    here = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath else config.rootpath
    values: dict[str, Any] = {}
    for option in OPTIONS:
        value, source = resolve(option, config.getoption(option.dest), _ini(config, option))
        if option.path_unless is not None:
            value = _absolute(value, ini_dir if source == "ini" else here, option.path_unless)
        values[option.field] = value
    return values


def _ini(config: pytest.Config, option: Option) -> Any:
    if not option.ini:
        return None
    try:
        return config.getini(option.dest)
    except pytest.UsageError:  # pytest's own bool parsing names neither key nor value
        raw = config.inicfg.get(option.dest)
        raw = getattr(raw, "value", raw)
        raise ConfigError(
            f"ini option {option.dest}: {raw!r} is not a boolean", "use true or false"
        ) from None


def _absolute(value: str, base: Path, keep: str) -> str:
    if value == keep:
        return value
    return str((base / os.path.expanduser(value)).resolve())


def build_session(config: pytest.Config, models: list[str]) -> NiahSession:
    """The run's session, every cheap check done.

    Raises:
        NiahError: any value, file or model name that cannot work; the plugin reports it
            as one usage error.
    """
    from pytest_niah.embed.models import check_model_name

    values = option_values(config)
    specs = [ModelSpec.parse(m) for m in models]
    for spec in specs:
        check_model_name(spec.name, trust_remote_code=values["trust_remote_code"])
    fields = {f.name for f in dataclasses.fields(NiahConfig)} - {"model"}
    base = NiahConfig(model=specs[0].name, **{k: values[k] for k in fields})
    for name in ("min_auc", "min_ratio"):
        _check_threshold_lengths(name, values[name], base.lengths)
    session = NiahSession.create(
        specs,
        base,
        min_auc=values["min_auc"],
        min_ratio=values["min_ratio"],
        gate_on=values["gate_on"],
        strict=values["strict"],
        json_path=values["json"],
        cache_dir=values["cache_dir"],
        use_cache=not values["no_cache"],
        save_name=values["save"],
        compare_fail=values["compare_fail"],
        store_dir=Path(values["storage"] or paths.store_dir(config.rootpath)),
        report_dir=values["report"],
        snapshot=values["snapshot"] or bool(config.getoption("update_snapshots", False)),
        snapshot_digits=values["snapshot_digits"],
        snapshot_dir=Path(values["snapshot_dir"] or paths.snapshot_dir(config.rootpath)),
    )
    if values["save"]:
        from pytest_niah.results.storage import check_name

        check_name(values["save"])
    if values["compare"]:
        session.resolve_baselines(values["compare"])
        for label in session.labels:
            session.baseline(label)  # a damaged file is a usage error now, not at the end
    elif values["compare_fail"]:
        raise ConfigError(
            "--niah-compare-fail has nothing to compare with",
            "add --niah-compare=NAME|PATH, or drop --niah-compare-fail",
        )
    if values["gate_on"] == "lower" and not values["bootstrap"]:
        raise ConfigError(
            "--niah-gate-on=lower gates the lower end of the bootstrap interval, which "
            "--niah-bootstrap=0 turns off",
            "keep --niah-bootstrap above 0",
        )
    if any(arm.startswith("expand") for arm in base.arms):
        _check_expansions(session)
    if session.snapshot and not config.pluginmanager.hasplugin("syrupy"):
        raise ConfigError("--niah-snapshot needs syrupy", "pip install 'pytest-niah[snapshot]'")
    session.case_params()  # validates the needle set now, not in the middle of collection
    return session


def _check_threshold_lengths(name: str, value: Thresholds, lengths: tuple[int, ...]) -> None:
    """A per-length threshold for a length the run does not have would gate nothing."""
    stray = [n for n, _ in value.per_length if n not in lengths]
    if stray:
        flag = "--niah-" + name.replace("_", "-")
        raise ConfigError(
            f"{flag} sets a threshold for length {', '.join(map(str, stray))}, which this run "
            f"does not have (--niah-lengths={','.join(map(str, lengths))})",
            f"add the length to --niah-lengths or drop it from {flag}",
        )


def _check_expansions(session: NiahSession) -> None:
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
