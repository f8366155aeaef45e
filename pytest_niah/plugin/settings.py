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
from pytest_niah.config.gate_expressions import Thresholds
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.options import OPTIONS, Option, resolve
from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.errors import ConfigError, ExtraMissingError, NiahError, OutputError, SetupError
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
        if option.is_path(value):
            value = option.absolute(value, ini_dir if source == "ini" else here)
        values[option.field] = value
    return values


def session_settings(values: dict[str, Any], config: pytest.Config) -> dict[str, Any]:
    """The :class:`NiahSession` settings, taken from the option table.

    Each pytest-run option (not part of the experiment) that is a session field goes there
    under its own name; the cache policy, the run store and the snapshot folder are derived.
    """
    from pytest_niah.config.cache_policy import CachePolicy

    fields = {f.name for f in dataclasses.fields(NiahSession)}
    settings = {o.field: values[o.field] for o in OPTIONS if not o.experiment and o.field in fields}
    return settings | {
        "cache": CachePolicy.from_options(values["cache_dir"], values["no_cache"]),
        "store_dir": Path(values["storage"] or paths.store_dir(config.rootpath)),
        "snapshot": values["snapshot"] or bool(config.getoption("update_snapshots", False)),
        "snapshot_dir": Path(values["snapshot_dir"] or paths.snapshot_dir(config.rootpath)),
    }


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
    """The run's session, every cheap check done.

    The checks that do not depend on each other all run, and every problem they find is
    reported in one message, so one run shows everything to fix.

    Raises:
        NiahError: any value, file or model name that cannot work; several problems come
            as one :class:`~pytest_niah.errors.SetupError`. The plugin reports it as one
            usage error.
    """
    from pytest_niah.embed.model_options import check_model_options
    from pytest_niah.embed.models import check_model_name, check_token_vectors
    from pytest_niah.embed.remote_address import is_remote

    values = option_values(config)
    problems = Problems()
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
    _check_lexical_only(specs, values, problems)
    fields = {f.name for f in dataclasses.fields(NiahConfig)} - {"model"}
    base = NiahConfig(model=specs[0].name, **{k: values[k] for k in fields})
    for name in ("min_auc", "min_ratio"):
        with problems:
            _check_threshold_lengths(name, values[name], base.lengths)
    session = NiahSession.create(specs, base, **session_settings(values, config))
    with problems:
        session.case_params()  # validates the needle set now, not in the middle of collection
        _warn_of_a_large_grid(session, config)
    if any(arm.startswith("expand") for arm in base.arms):
        with problems:
            _check_expansions(session)
    _check_sharding(session, values, problems)
    _check_save(session, config, problems)
    if values["compare"]:
        with problems:
            session.resolve_baselines(values["compare"])
            for label in session.labels:
                session.baseline(label)  # a damaged file is a usage error now, not at the end
    elif values["compare_fail"]:
        problems.add(
            ConfigError(
                "--niah-compare-fail has nothing to compare with",
                "add --niah-compare=NAME|PATH, or drop --niah-compare-fail",
            )
        )
    if session.snapshot and not config.pluginmanager.hasplugin("syrupy"):
        problems.add(
            ConfigError("--niah-snapshot needs syrupy", "pip install 'pytest-niah[snapshot]'")
        )
    if session.speed and not config.pluginmanager.hasplugin("benchmark"):
        problems.add(
            ExtraMissingError(
                "--niah-speed times test_speed through pytest-benchmark's benchmark fixture, "
                "and the pytest-benchmark plugin is not installed (or is off: -p no:benchmark)",
                hint="pip install pytest-benchmark, or drop --niah-speed",
            )
        )
    if session.report and not _importable("matplotlib"):
        problems.add(
            ConfigError(
                f"--niah-report={session.report} needs matplotlib for the report's figures, "
                "and it cannot be imported here",
                "pip install 'pytest-niah[report]', or drop --niah-report",
            )
        )
    _check_outputs(session, problems)
    problems.raise_any()
    return session


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


def _check_save(session: NiahSession, config: pytest.Config, problems: Problems) -> None:
    given = config.getoption("niah_save")
    if given is not None and not given.strip():
        problems.add(
            ConfigError(
                "--niah-save is empty: nothing would be saved",
                "give the run a name, e.g. --niah-save=baseline, or drop the option",
            )
        )
        return
    if not session.save:
        return
    from pytest_niah.files import output_problem
    from pytest_niah.results.storage import RunStore

    with problems:
        for label in session.labels:
            target = RunStore(session.store_dir).target(session.save, label)
            try:
                exists = target.exists()
            except OSError as exc:  # e.g. a name the file system cannot hold
                if output_problem(str(session.store_dir), folder=True):
                    return  # the store folder itself is the cause: _check_outputs names it
                raise OutputError(
                    f"--niah-save: run {session.save[:40]!r} of model {label!r} cannot be "
                    f"saved at {target} ({exc.strerror or exc})",
                    "give the run a shorter, plain name, e.g. --niah-save=baseline, or another "
                    "--niah-storage folder",
                ) from None
            if exists and not session.save_overwrite:
                raise OutputError(
                    f"--niah-save: run {session.save!r} of model {label!r} exists "
                    f"already ({target})",
                    "add --niah-save-overwrite to replace it, or save under another name",
                )


def _check_outputs(session: NiahSession, problems: Problems) -> None:
    """Every path the run will write, checked now rather than after minutes of embedding."""
    from pytest_niah.files import output_problem
    from pytest_niah.plugin.outputs import json_target

    wanted: list[tuple[str, str, bool]] = []
    if session.json:
        several = len(session.labels) > 1
        targets = {
            str(json_target(session.json, label, several=several)): None for label in session.labels
        }
        wanted += [("--niah-json", target, False) for target in targets]
    if session.report:
        wanted.append(("--niah-report", session.report, True))
    if session.save:
        wanted.append(("--niah-storage (the run store)", str(session.store_dir), True))
    if session.shard is not None and session.shard_dir:
        wanted.append(("--niah-shard-dir", session.shard_dir, True))
    if session.snapshot:  # the default folder too: a file in its place is found now, not after
        wanted.append(("--niah-snapshot-dir", str(session.snapshot_dir), True))
    for what, path, folder in wanted:
        problem = output_problem(path, folder=folder)
        if problem:
            problems.add(OutputError(f"{what}: {path} {problem}", "choose a path you can write to"))
    # Every run but a shard job's appends to the step summary when one is set; the report
    # package (numpy) is imported only then, so that collection stays light.
    if session.shard is None and os.environ.get("GITHUB_STEP_SUMMARY"):
        from pytest_niah.report import check_step_summary

        with problems:
            check_step_summary()


def _warn_of_a_large_grid(session: NiahSession, config: pytest.Config) -> None:
    """Say the size of a grid far larger than usual before it starts (cases, tokens, memory)."""
    from pytest_niah.config.grid_size import grid_size
    from pytest_niah.errors import NiahWarning

    for label in session.labels:
        line = grid_size(session.configs[label], len(session.needle_set(label).groups)).warning()
        if line:
            config.issue_config_time_warning(NiahWarning(f"{label}: {line}"), stacklevel=2)


def _importable(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails, or a None entry in sys.modules
        return False


def _check_lexical_only(specs: list[ModelSpec], values: dict[str, Any], problems: Problems) -> None:
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


def _check_sharding(session: NiahSession, values: dict[str, Any], problems: Problems) -> None:
    """A shard job embeds and writes its part only; a gate job reads parts."""
    if session.shard is not None:
        if not session.shard_dir:
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
    elif session.shard_dir:
        problems.add(
            ConfigError(
                "--niah-shard-dir is set without --niah-shard",
                "add --niah-shard=K/N, or drop --niah-shard-dir",
            )
        )
    if session.from_shards:
        for label in session.labels:
            folder = session.parts_dir(label)
            if not folder.is_dir():
                problems.add(
                    ConfigError(
                        f"--niah-from-shards: {folder} is not a folder",
                        "gather every shard job's part files there first",
                    )
                )


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
