"""Command-line options, their ini twins and environment fallbacks, in one table.

Precedence for every option: command line > environment variable > ini > default.
Only the standard library and :mod:`pytest_niah.config` are imported here: the plugin
registers these options in every pytest run, active or not.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_niah.config import niah as cfg
from pytest_niah.errors import NiahError

PREFIX = "--niah-"


@dataclass(frozen=True)
class Option:
    """One ``--niah-*`` option.

    Attributes:
        name: The option without prefix, e.g. ``lengths``; ``niah_<name>`` is its ini key.
        parse: Turns the raw text into the value; raises ``ConfigError`` when invalid.
        default: The value when nothing is given (already parsed).
        help: Help text without the default.
        ini: Whether an ini key of the same name exists.
        env: An environment variable read when the option is not on the command line.
        flag: A boolean switch (``store_true``).
        metavar: Shown in ``--help``.
    """

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    ini: bool = True
    env: str | None = None
    flag: bool = False
    metavar: str | None = None

    @property
    def dest(self) -> str:
        """The argparse destination and ini key."""
        return "niah_" + self.name.replace("-", "_")

    def argparse_type(self, value: str) -> Any:
        """Validate on the command line: argparse reports the message as a usage error."""
        try:
            return self.parse(value)
        except NiahError as exc:
            # argparse already starts the line with "argument --niah-x:".
            message = str(exc).removeprefix(f"--niah-{self.name}: ")
            raise argparse.ArgumentTypeError(message) from None

    def help_text(self) -> str:
        """Help with the default and where else the value can come from."""
        shown = self.default
        if isinstance(shown, tuple):
            shown = ",".join(map(str, shown))
        elif isinstance(shown, cfg.Thresholds):
            shown = shown.describe()
        sources = [f"ini: {self.dest}"] if self.ini else []
        if self.env:
            sources.append(f"env: {self.env}")
        extra = f" ({'; '.join(sources)})" if sources else ""
        return f"{self.help} Default: {shown!r}.{extra}".replace("%", "%%")


def _bool(value: str) -> bool:
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise cfg.ConfigError(f"{value!r} is not a boolean; use true or false")


def _text(value: str) -> str:
    return str(value)


def _optional_int(what: str, minimum: int = 1) -> Callable[[str], int | None]:
    def parse(value: str) -> int | None:
        if value in ("", None):
            return None
        return cfg.parse_positive_int(value, what=what, minimum=minimum)

    return parse


def _compare_fail(value: str) -> tuple[Any, ...]:
    from pytest_niah.results.compare import parse_fail_expressions

    return parse_fail_expressions(value)


def _groups(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in str(value).split(",") if item.strip())


OPTIONS: tuple[Option, ...] = (
    Option(
        "corpus",
        _text,
        "gutenberg",
        "Haystack books: 'gutenberg' (ten pinned public-domain books, downloaded and "
        "checksummed) or a folder of UTF-8 .txt files.",
        env="NIAH_CORPUS",
        metavar="FOLDER|gutenberg",
    ),
    Option("needles", _text, "builtin", "Needle-set JSON file, or 'builtin'.", metavar="PATH"),
    Option(
        "groups",
        _groups,
        (),
        "Keep only these needle group ids or categories (comma list); empty keeps all.",
        metavar="IDS",
    ),
    Option(
        "lengths",
        cfg.parse_lengths,
        cfg.DEFAULT_LENGTHS,
        "Haystack lengths in tokens of the model's tokenizer.",
        metavar="N,N,...",
    ),
    Option(
        "positions",
        lambda v: cfg.parse_positive_int(v, what="--niah-positions"),
        cfg.DEFAULT_POSITIONS,
        "Needle positions per haystack, evenly spaced from start to end.",
        metavar="N",
    ),
    Option(
        "controls",
        lambda v: cfg.parse_positive_int(v, what="--niah-controls"),
        1,
        "No-needle control haystacks per question and length.",
        metavar="N",
    ),
    Option(
        "arms",
        lambda v: cfg.parse_choices(v, what="--niah-arms", choices=cfg.ARMS),
        ("onehop",),
        "Needle/query arms: onehop, literal (needles in the question's own words), "
        "expand100/expand150/expand250 (questions expanded with that many related terms).",
        metavar="ARMS",
    ),
    Option(
        "scoring",
        lambda v: cfg.parse_choices(v, what="--niah-scoring", choices=cfg.SCORINGS),
        ("whole",),
        "How a haystack is scored: whole (its own embedding, as in the study), chunk-max "
        "(its best chunk), chunk-mean (the mean of its chunk embeddings).",
        metavar="SCORINGS",
    ),
    Option(
        "chunk-tokens",
        _optional_int("--niah-chunk-tokens", minimum=8),
        None,
        "Chunk size in tokens for chunk-max/chunk-mean; empty uses the model's window.",
        metavar="N",
    ),
    Option(
        "expansions",
        _text,
        "builtin",
        "Expansion-terms JSON file for the expandN arms, or 'builtin'.",
        metavar="PATH",
    ),
    Option(
        "orders",
        lambda v: cfg.parse_choices(v, what="--niah-orders", choices=cfg.ORDERS),
        cfg.ORDERS,
        "Needle word orders.",
        metavar="ORDERS",
    ),
    Option(
        "seed",
        lambda v: cfg.parse_positive_int(v, what="--niah-seed", minimum=0),
        cfg.DEFAULT_SEED,
        "Seed of every random choice (snippets, names).",
        metavar="N",
    ),
    Option(
        "device",
        cfg.parse_device,
        "auto",
        "Where the model runs: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps, or "
        "a comma list such as cuda:0,cuda:1 to encode on several GPUs.",
        metavar="DEVICE",
    ),
    Option(
        "dtype",
        lambda v: cfg.parse_choice(v, what="--niah-dtype", choices=cfg.DTYPES),
        "auto",
        "Model dtype; auto is bfloat16 (or float16) on a GPU and float32 elsewhere.",
    ),
    Option(
        "batch-size",
        lambda v: cfg.parse_positive_int(v, what="--niah-batch-size"),
        16,
        "Texts per encode batch.",
        metavar="N",
    ),
    Option(
        "token-budget",
        lambda v: cfg.parse_positive_int(v, what="--niah-token-budget", minimum=0),
        16384,
        "Padded tokens per encode batch (texts sorted by length, packed under it); 0 uses "
        "--niah-batch-size texts per batch.",
        metavar="N",
    ),
    Option(
        "cache-dir",
        _text,
        "",
        "Folder of the persistent embedding cache (embeddings.sqlite); empty uses the user "
        "cache folder.",
        env="NIAH_CACHE_DIR",
        metavar="DIR",
    ),
    Option(
        "no-cache",
        _bool,
        False,
        "Do not read or write the embedding cache.",
        flag=True,
    ),
    Option(
        "max-seq-length",
        _optional_int("--niah-max-seq-length"),
        None,
        "Override the model's window in tokens (e.g. to simulate a shorter model).",
        metavar="N",
    ),
    Option(
        "trust-remote-code",
        _bool,
        False,
        "Allow a model's own code from the hub to run (jina-embeddings-v3 needs it).",
        flag=True,
    ),
    Option(
        "model-kwargs",
        lambda v: cfg.parse_json_object(v, what="--niah-model-kwargs"),
        {},
        "JSON object passed as SentenceTransformer(model_kwargs=...).",
        metavar="JSON",
    ),
    Option(
        "encode-kwargs",
        lambda v: cfg.parse_json_object(v, what="--niah-encode-kwargs"),
        {},
        'JSON object passed to every encode() call, e.g. \'{"task": "text-matching"}\'.',
        metavar="JSON",
    ),
    Option("query-prompt", _text, "", "Text prepended to every question.", metavar="TEXT"),
    Option("doc-prompt", _text, "", "Text prepended to every haystack and needle.", metavar="TEXT"),
    Option(
        "min-auc",
        lambda v: cfg.parse_thresholds(v, what="--niah-min-auc"),
        cfg.Thresholds(),
        "Fail a length whose AUC is below this: one value, or per length like '128=0.7,1024=0.6'.",
        metavar="T|L=T,...",
    ),
    Option(
        "min-ratio",
        lambda v: cfg.parse_thresholds(v, what="--niah-min-ratio"),
        cfg.Thresholds(),
        "Fail a length whose comparative ratio is below this (same syntax as --niah-min-auc).",
        metavar="T|L=T,...",
    ),
    Option(
        "gate-on",
        lambda v: cfg.parse_choice(v, what="--niah-gate-on", choices=cfg.GATE_ON),
        "point",
        "Gate on the metric's point value, or on the lower end of its 95% bootstrap interval.",
    ),
    Option(
        "bootstrap",
        lambda v: cfg.parse_positive_int(v, what="--niah-bootstrap", minimum=0),
        1000,
        "Bootstrap resamples (over needle groups) for the 95% intervals; 0 turns them off.",
        metavar="N",
    ),
    Option(
        "strict",
        _bool,
        False,
        "A missed needle fails its test instead of xfailing.",
        flag=True,
    ),
    Option(
        "save",
        _text,
        "",
        "Save each model's results as run NAME in the run store (versioned JSON with "
        "machine and commit), to compare later runs with.",
        ini=False,
        metavar="NAME",
    ),
    Option(
        "compare",
        _text,
        "",
        "Compare with a saved run (its NAME, or a results/run JSON PATH), paired on identical "
        "cells; the deltas and their 95% intervals go to the terminal summary.",
        metavar="NAME|PATH",
    ),
    Option(
        "compare-fail",
        _compare_fail,
        (),
        "Fail a length whose metric fell more than allowed versus --niah-compare: "
        "'auc:0.02' (absolute drop), 'ratio:5%' (relative drop), comma-separated.",
        metavar="EXPR[,EXPR]",
    ),
    Option(
        "storage",
        _text,
        "",
        "Folder of saved runs; empty uses <rootdir>/.niah/runs.",
        metavar="DIR",
    ),
    Option(
        "report",
        _text,
        "",
        "Write report.html (figures embedded), results.json, cases.csv and summary.md here; "
        "with --niah-compare the baseline is drawn on the same axes.",
        metavar="DIR",
    ),
    Option(
        "snapshot",
        _bool,
        False,
        "Assert each model's rounded metric table against a syrupy snapshot "
        "(--snapshot-update writes them and implies this option).",
        flag=True,
    ),
    Option(
        "snapshot-digits",
        lambda v: cfg.parse_positive_int(v, what="--niah-snapshot-digits", minimum=0),
        3,
        "Digits floats keep in snapshots, so last-bit changes do not churn them.",
        metavar="N",
    ),
    Option(
        "snapshot-dir",
        _text,
        "",
        "Folder of the snapshots, one sub-folder per model; empty uses "
        "<rootdir>/__snapshots__/niah.",
        metavar="DIR",
    ),
    Option(
        "json",
        _text,
        "",
        "Write the results to this JSON file (one file per model, label appended, when "
        "several models run).",
        ini=False,
        metavar="PATH",
    ),
)

BY_NAME: Mapping[str, Option] = {o.name: o for o in OPTIONS}


def resolve(
    option: Option,
    cli_value: Any,
    ini_value: Any,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """The option's value by precedence: command line, environment, ini, default.

    Raises:
        ConfigError: when the environment or ini text is invalid; the message names it.
    """
    return resolve_with_source(option, cli_value, ini_value, environ)[0]


def resolve_with_source(
    option: Option,
    cli_value: Any,
    ini_value: Any,
    environ: Mapping[str, str] | None = None,
) -> tuple[Any, str]:
    """Like :func:`resolve`, also saying where the value came from: cli, env, ini, default.

    Relative paths from an ini file are meant relative to that file, not to the folder
    pytest was started in; the source lets the caller resolve them so.
    """
    if cli_value is not None:
        return cli_value, "cli"
    environ = os.environ if environ is None else environ
    if option.env and environ.get(option.env):
        try:
            return option.parse(environ[option.env]), "env"
        except NiahError as exc:
            raise cfg.ConfigError(f"environment variable {option.env}: {exc}") from None
    if option.ini and ini_value not in (None, "", []):
        raw = ini_value if isinstance(ini_value, str) else str(ini_value)
        try:
            return option.parse(raw), "ini"
        except NiahError as exc:
            raise cfg.ConfigError(f"ini option {option.dest}: {exc}") from None
    return option.default, "default"
