"""From pytest's command line and ini files to a checked :class:`NiahSession`.

This is the one place options are read: every value comes from the option table (parsed
by its parsers), and everything that can be checked before a model loads is checked here
or in :mod:`~pytest_niah.plugin.setting_checks`, at configure time, so that a wrong value
is one usage error rather than a failure in every test.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pytest_niah.config import paths
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.option import Option
from pytest_niah.config.option_precedence import resolve
from pytest_niah.config.options import OPTIONS
from pytest_niah.config.run_settings import RunSettings
from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.errors import ConfigError
from pytest_niah.plugin.problems import Problems
from pytest_niah.plugin.session import NiahSession
from pytest_niah.plugin.setting_checks import (
    check_lexical_only,
    check_session,
    check_threshold_lengths,
)


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
        if option.is_path(value):
            value = option.absolute(value, ini_dir if source == "ini" else here)
        values[option.field] = value
    return values


def run_settings(values: dict[str, Any], config: pytest.Config) -> RunSettings:
    """The run's :class:`RunSettings`, taken from the option table.

    Each pytest-run option (not part of the experiment) that is a settings field goes there
    under its own name; the cache policy, the run store and the snapshot folder are derived.
    """
    from pytest_niah.config.cache_policy import CachePolicy

    fields = {f.name for f in dataclasses.fields(RunSettings)}
    settings = {o.field: values[o.field] for o in OPTIONS if not o.experiment and o.field in fields}
    return RunSettings(
        **settings
        | {
            "cache": CachePolicy.from_options(values["cache_dir"], values["no_cache"]),
            "store_dir": Path(values["storage"] or paths.store_dir(config.rootpath)),
            "snapshot": values["snapshot"] or bool(config.getoption("update_snapshots", False)),
            "snapshot_dir": Path(values["snapshot_dir"] or paths.snapshot_dir(config.rootpath)),
        }
    )


def _ini(config: pytest.Config, option: Option) -> Any:
    if not option.ini:
        return None
    try:
        return config.getini(option.dest)
    # pytest's own bool parsing names neither key nor value (UsageError from 9.1 on,
    # ValueError before).
    except (pytest.UsageError, ValueError):
        # pytest >= 9 keeps the raw values in _inicfg (inicfg is deprecated there).
        values = getattr(config, "_inicfg", None)
        if values is None:
            values = config.inicfg
        raw = values.get(option.dest)
        raw = getattr(raw, "value", raw)
        raise ConfigError(
            f"ini option {option.dest}: {raw!r} is not a boolean", "use true or false"
        ) from None


def build_session(config: pytest.Config, models: list[str]) -> NiahSession:
    """The run's session, every option read and checked here, before any work.

    The checks that do not depend on each other all run, and every problem they find is
    reported in one message, so one run shows everything to fix.

    Raises:
        NiahError: any value, file or model name that cannot work; several problems come
            as one :class:`~pytest_niah.errors.SetupError`. The plugin reports it as one
            usage error.
    """
    values = option_values(config)
    problems = Problems()
    specs = _model_specs(models, values, problems)
    fields = {f.name for f in dataclasses.fields(NiahConfig)} - {"model"}
    base = NiahConfig(model=specs[0].name, **{k: values[k] for k in fields})
    for name in ("min_auc", "min_ratio"):
        with problems:
            check_threshold_lengths(name, values[name], base.lengths)
    session = NiahSession.create(specs, base, run_settings(values, config))
    check_session(session, values, config, problems)
    problems.raise_any()
    return session


def _model_specs(models: list[str], values: dict[str, Any], problems: Problems) -> list[ModelSpec]:
    """Every ``--niah-model`` parsed, and what can be checked of each before it loads.

    Raises:
        NiahError: no model could be parsed (the problems found so far).
    """
    from pytest_niah.embed.model_options import check_model_options
    from pytest_niah.embed.models import check_model_name, check_token_vectors
    from pytest_niah.embed.remote_address import is_remote

    specs: list[ModelSpec] = []
    for model in models:
        with problems:
            specs.append(ModelSpec.parse(model))
    if not specs:
        problems.raise_any()
    for spec in specs:
        with problems:
            check_model_name(
                spec.name,
                trust_remote_code=values["trust_remote_code"],
                tokenizer=values["tokenizer"],
                api_key_env=values["api_key_env"],
            )
        with problems:  # keys a model would ignore, or that cannot work, before any load
            check_model_options(spec.name, values["model_kwargs"], values["encode_kwargs"])
        if MAXSIM in values["scoring"]:
            with problems:
                check_token_vectors(spec.name)
    if values["tokenizer"] and not any(is_remote(spec.name) for spec in specs):
        problems.add(
            ConfigError(
                "--niah-tokenizer applies only to served models (openai+URL#MODEL); a local "
                "model counts tokens with its own tokenizer",
                "drop --niah-tokenizer",
            )
        )
    check_lexical_only(specs, values, problems)
    return specs
