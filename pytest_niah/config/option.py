"""One ``--niah-*`` option: its name, parser, default and help, and how its value is read.

The table of every option is :data:`pytest_niah.config.options.OPTIONS`; this module is the
shape of one entry. Only the standard library and the config layer are imported here: the
plugin registers the options in every pytest run, active or not.
"""

from __future__ import annotations

import argparse
import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_niah.config import bounded_numbers as num
from pytest_niah.config import gate_expressions as gate
from pytest_niah.config import parsers as p
from pytest_niah.errors import ConfigError

PREFIX = "--niah-"
IniType = Literal["string", "bool", "linelist"]


_LOOP = (
    "is a symbolic link loop (a link that leads back to itself), so nothing can be read or "
    "written there",
    "remove or correct the link, or give another path",
)


@dataclass(frozen=True)
class Option:
    """One ``--niah-*`` option.

    Attributes:
        name: The option without prefix, e.g. ``lengths``; ``niah_<name>`` is its ini key
            and (dashes as underscores) its :class:`NiahConfig` field.
        parse: Turns raw text (command line, environment, ini) into the value; raises
            :class:`~pytest_niah.errors.ConfigError` when the text is invalid.
        default: The value when nothing is given (already parsed).
        help: What the option does, one or two sentences.
        metavar: The value's placeholder in ``--help``.
        flag: A switch without a value (``store_true``).
        repeat: May be given several times (values collected in a list).
        ini: The ini key's type, or ``None`` for an option without ini key.
        env: An environment variable read when the option is not on the command line.
        experiment: The option is a field of :class:`NiahConfig` (it changes what is
            measured); otherwise it steers only the pytest run (gates, outputs).
        path_unless: The option names a file or folder, resolved against the folder pytest
            was started in (or the ini file's folder); this value (or these values) alone
            is not a path.
        default_text: How the default reads where it is computed at run time.
    """

    name: str
    parse: Callable[[Any], Any]
    default: Any
    help: str
    metavar: str | None = None
    flag: bool = False
    repeat: bool = False
    ini: IniType | None = "string"
    env: str | None = None
    experiment: bool = True
    path_unless: str | tuple[str, ...] | None = None
    default_text: str | None = None

    def is_path(self, value: str) -> bool:
        """Whether ``value`` names a file or folder to resolve (see ``path_unless``)."""
        if self.path_unless is None:
            return False
        words = (self.path_unless,) if isinstance(self.path_unless, str) else self.path_unless
        return value not in words

    def absolute(self, value: str, base: Path) -> str:
        """``value`` (a path, see :meth:`is_path`) made absolute against ``base`` and resolved.

        A path that can never be used is refused now, before any model loads: a symbolic
        link loop (``--niah-json=loop`` where ``loop`` points to itself). A written path
        below a regular file is reported by the plugin's output checks, with every other
        problem of the run.

        Raises:
            ConfigError: naming the option, the path and the fix.
        """
        path = base / os.path.expanduser(value)
        try:
            resolved = path.resolve()
            os.stat(resolved)
        except RuntimeError:  # Python < 3.13 raises it for a link loop
            raise self._unusable(value, _LOOP) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._unusable(value, _LOOP) from None
            # A written path below a regular file (ENOTDIR) is left to the output checks,
            # which report it together with every other problem of the run.
        except ValueError:  # a NUL byte: the output checks name it
            return str(path)
        return str(resolved)

    def _unusable(self, value: str, problem: tuple[str, str]) -> ConfigError:
        shown = value if len(value) <= 80 else value[:80] + "..."
        return ConfigError(f"{self.flag_name}: {shown!r} {problem[0]}", problem[1])

    @property
    def flag_name(self) -> str:
        """``--niah-<name>``."""
        return PREFIX + self.name

    @property
    def dest(self) -> str:
        """The argparse destination and ini key: ``niah_<name>`` with underscores."""
        return "niah_" + self.field

    @property
    def field(self) -> str:
        """The :class:`NiahConfig` field (or session setting) the option fills."""
        return self.name.replace("-", "_")

    def parse_text(self, text: Any) -> Any:
        """Parse a raw value; an error names the option."""
        return p.named(self.flag_name, self.parse, text)

    def parse_given(self, value: str) -> Any:
        """Parse a value written on a command line, where an empty one is refused.

        ``--niah-json=$OUT`` with the variable unset is empty: taken as "not given" it would
        quietly run every group, write no file or drop a gate. Empty is blank, or only
        commas (a list of nothing). The option's own parser speaks first, so a value with
        a more specific refusal (``--niah-seeds=``, an empty path) keeps it.

        Raises:
            ConfigError: the value is invalid or empty.
        """
        parsed = self.parse(value)
        hint = f"give a value, or leave {self.flag_name} out for its default"
        p.refuse_empty(value, f"{hint} ({self.shown_default()})")
        return parsed

    def argparse_type(self, value: str) -> Any:
        """Validate on the command line: argparse reports the message as a usage error."""
        try:
            return self.parse_given(value)
        except ConfigError as exc:
            # argparse starts the line with "argument --niah-x:" itself.
            raise argparse.ArgumentTypeError(str(exc)) from None

    def shown_default(self) -> str:
        """The default as the user would write it."""
        if self.default_text is not None:
            return self.default_text
        value = self.default
        if isinstance(value, bool):
            return "on" if value else "off"
        if isinstance(value, tuple):
            items = [v.expression() if isinstance(v, gate.Allowance) else str(v) for v in value]
            return ",".join(items) or "none"
        if isinstance(value, gate.Thresholds):
            return value.describe()
        if isinstance(value, dict):
            return "{}" if not value else str(value)
        if value is None or value == "":
            return "none"
        return str(value)

    @property
    def described(self) -> str:
        """The help, with the allowed range of a whole-number option (``1..1,000``)."""
        if isinstance(self.parse, num.WholeNumber):
            return f"{self.help} Allowed: {self.parse.bounds()}."
        return self.help

    def help_text(self) -> str:
        """Help with the real default and where else the value can come from."""
        sources = [f"ini {self.dest}"] if self.ini else []
        if self.env:
            sources.append(f"env {self.env}")
        where = f" [{'; '.join(sources)}]" if sources else ""
        return f"{self.described} Default: {self.shown_default()}.{where}".replace("%", "%%")
