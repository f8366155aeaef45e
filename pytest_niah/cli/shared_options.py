"""Options the command shares with the plugin, built from the option table.

``pytest-niah report --compare-fail auc:0.02`` means what ``--niah-compare-fail=auc:0.02``
means in a pytest run: the flag drops the ``niah-`` prefix, and its parser, placeholder,
help and default come from :data:`~pytest_niah.config.options.OPTIONS` (as pytest-benchmark
shares its option groups between its plugin and its command). Nothing is typed in twice.
"""

from __future__ import annotations

import argparse
from typing import Any

from pytest_niah.config.option import PREFIX, Option
from pytest_niah.config.options import BY_NAME


def cli_flag(option: Option) -> str:
    """The command's flag of a plugin option: ``--niah-compare-fail`` -> ``--compare-fail``."""
    return "--" + option.flag_name.removeprefix(PREFIX)


def add_shared_option(parser: argparse.ArgumentParser, name: str, *, note: str = "") -> None:
    """Add the plugin option ``name`` (e.g. ``compare-fail``) to a command's parser.

    The raw text is kept (default ``None``) and parsed by :func:`shared_value`, so a bad
    value is a one-line error like any other input problem.

    Args:
        parser: The command's parser.
        name: The option's name in the table, without prefix.
        note: A sentence added to the table's help, for what differs in the command.
    """
    option = BY_NAME[name]
    help_text = f"{option.help} {note}".strip() + f" Default: {option.shown_default()}."
    parser.add_argument(
        cli_flag(option),
        dest=option.field,
        metavar=option.metavar,
        default=None,
        help=help_text.replace("%", "%%"),
    )


def given_text(value: str) -> str:
    """A command's own option value, refused empty as the plugin's are (an unset variable)."""
    from pytest_niah.config.parsers import refuse_empty
    from pytest_niah.errors import ConfigError

    try:
        refuse_empty(value, "give a value, or leave the option out for its default")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def shared_value(args: argparse.Namespace, name: str) -> Any:
    """The parsed value of a shared option: the table's default when it was not given.

    Raises:
        ConfigError: the text is invalid; the message names the command's flag.
    """
    from pytest_niah.config.parsers import named

    option = BY_NAME[name]
    raw = getattr(args, option.field)
    if raw is None:
        return option.default
    return named(cli_flag(option), option.parse_given, raw)


def given(args: argparse.Namespace, name: str) -> bool:
    """Whether the shared option ``name`` was on the command line."""
    return getattr(args, BY_NAME[name].field) is not None
