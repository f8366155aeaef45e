"""An option's value by precedence: command line, environment variable, ini, default."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pytest_niah.config import parsers as p
from pytest_niah.config.option import Option

Source = Literal["cli", "env", "ini", "default"]


def resolve(
    option: Option, cli_value: Any, ini_value: Any, environ: Mapping[str, str] | None = None
) -> tuple[Any, Source]:
    """The option's value by precedence, and where it came from: cli, env, ini, default.

    Relative paths from an ini file are meant relative to that file, not to the folder
    pytest was started in; the source lets the caller resolve them so.

    Raises:
        ConfigError: when the environment or ini text is invalid; the message names it.
    """
    if cli_value is not None and cli_value != []:
        return cli_value, "cli"
    environ = os.environ if environ is None else environ
    if option.env and environ.get(option.env):
        what = f"environment variable {option.env}"
        return p.named(what, option.parse, environ[option.env]), "env"
    if option.ini and ini_value not in (None, "", []):
        raw = ",".join(ini_value) if isinstance(ini_value, list) else ini_value
        return p.named(f"ini option {option.dest}", option.parse, raw), "ini"
    return option.default, "default"
