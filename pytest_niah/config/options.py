"""Every ``--niah-*`` option, once: its parser, default, help, ini key and environment variable.

The argparse options and ini keys (:mod:`pytest_niah.plugin.hooks`), the defaults of
:class:`~pytest_niah.config.niah.NiahConfig` and the docs' option table,
``docs/reference/options.md`` (:func:`markdown_table`), are all produced from
:data:`OPTIONS`. Precedence for every option: command line > environment variable > ini >
default.

Only the standard library and the config layer are imported here: the plugin registers
these options in every pytest run, active or not.
"""

from __future__ import annotations

import argparse
import errno
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_niah.config import bounded_numbers as num
from pytest_niah.config import gate_expressions as gate
from pytest_niah.config import parsers as p
from pytest_niah.config import paths
from pytest_niah.config.vocabulary import (
    ARMS,
    BUILTIN,
    COMPARED,
    CORPUS_WORDS,
    DTYPES,
    GUTENBERG,
    INCONCLUSIVE,
    ORDERS,
    PACKAGED,
    PACKAGED_MODELS,
    SCORINGS,
)
from pytest_niah.errors import ConfigError

PREFIX = "--niah-"
IniType = Literal["string", "bool", "linelist"]
Source = Literal["cli", "env", "ini", "default"]


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


def parse_speed_fail(value: Any) -> float:
    """``20%`` -> ``20.0``: the fall of relative_speed that ``--niah-speed-fail`` allows.

    The % sign is required: a bare ``0.2`` could mean 0.2% or 20%. 100% or more would let
    any speed pass, so it is refused too.
    """
    text = str(value).strip()
    hint = "give the fall allowed as a percentage below 100%, e.g. 20%"
    if not text.endswith("%"):
        raise ConfigError(f"{text!r} is not a percentage", hint)
    try:
        amount = float(text.removesuffix("%"))
    except ValueError:
        raise ConfigError(f"{text!r} is not a percentage", hint) from None
    if not 0 <= amount < 100:  # NaN fails this too
        raise ConfigError(f"{text!r} is out of range (0% to under 100%)", hint)
    return amount


def _opt(name: str, parse: Callable[[Any], Any], default: Any, help: str, **kw: Any) -> Option:
    return Option(name, parse, default, help, **kw)


OPTIONS: tuple[Option, ...] = (
    _opt(
        "model",
        p.parse_text,
        (),
        "Embedding model to test: a hub name, a local folder, a packaged model that runs "
        f"offline ({' or '.join(repr(m) for m in PACKAGED_MODELS)}), "
        "'lexical:tfidf' or a served one as openai+http(s)://HOST:PORT/v1#MODEL, optionally "
        "as LABEL=NAME; repeat for several models. Without it pytest-niah does nothing.",
        metavar="NAME|PATH|LABEL=NAME",
        repeat=True,
        ini=None,
        experiment=False,
        default_text="none (pytest-niah inactive)",
    ),
    _opt(
        "corpus",
        p.parse_path,
        PACKAGED,
        f"Haystack books: '{PACKAGED}' (ten pinned public-domain books shipped with "
        f"pytest-niah, checksummed), '{GUTENBERG}' (the same books, downloaded) or a folder "
        "of UTF-8 .txt files.",
        metavar="DIR",
        env="NIAH_CORPUS",
        path_unless=CORPUS_WORDS,
    ),
    _opt(
        "needles",
        p.parse_path,
        BUILTIN,
        f"Needle-set JSON file, or '{BUILTIN}'.",
        metavar="FILE",
        path_unless=BUILTIN,
    ),
    _opt(
        "groups",
        p.parse_names,
        (),
        "Keep only these needle group ids or categories (comma list).",
        metavar="IDS",
        ini="linelist",
        default_text="all",
    ),
    _opt(
        "lengths",
        num.parse_lengths,
        (128, 256, 512, 1024, 2048, 4096, 8192),
        "Haystack lengths in tokens of the model's tokenizer; A..B is the doubling grid from "
        "A to B (128..32768 runs 128, 256, ..., 32768: the default grid up to a 32K window).",
        metavar="N,N,...|A..B",
        ini="linelist",
    ),
    _opt(
        "positions",
        num.int_parser(1, num.MAX_POSITIONS),
        10,
        "Needle positions per haystack, evenly spaced from start to end.",
        metavar="N",
    ),
    _opt(
        "controls",
        num.int_parser(1, num.MAX_CONTROLS),
        1,
        "No-needle control haystacks per question and length.",
        metavar="N",
    ),
    _opt(
        "arms",
        p.choices_parser(ARMS),
        ("onehop",),
        "Needle/query arms: onehop, literal (needles in the question's own words), "
        "expand100/expand150/expand250 (questions expanded with that many related terms).",
        metavar="ARMS",
        ini="linelist",
    ),
    _opt(
        "scoring",
        p.choices_parser(SCORINGS),
        ("whole",),
        "How a haystack is scored: whole (its own embedding, as in the study), chunk-max "
        "(its best chunk), chunk-mean (the mean of its chunk embeddings), maxsim (late "
        "interaction of the model's token vectors: multi-vector models such as "
        "jinaai/jina-embeddings-v4).",
        metavar="SCORINGS",
        ini="linelist",
    ),
    _opt(
        "chunk-tokens",
        num.optional_int_parser(8, num.MAX_LENGTH),
        None,
        "Chunk size in tokens for chunk-max/chunk-mean.",
        metavar="N",
        default_text="the model's window",
    ),
    _opt(
        "expansions",
        p.parse_path,
        BUILTIN,
        f"Expansion-terms JSON file for the expandN arms, or '{BUILTIN}'.",
        metavar="FILE",
        path_unless=BUILTIN,
    ),
    _opt(
        "orders",
        p.choices_parser(ORDERS),
        ORDERS,
        "Needle word orders.",
        metavar="ORDERS",
        ini="linelist",
    ),
    _opt(
        "seed",
        num.int_parser(0, num.MAX_SEED),
        42,
        "Seed of every random choice (snippets, names, the bootstrap).",
        metavar="N",
    ),
    _opt(
        "seeds",
        num.parse_seeds,
        (),
        "Several haystack draws pooled in one run, e.g. 1,2,3: every case is measured once "
        "per seed (its id ends -sN) and the metrics pool them; --niah-seed then seeds the "
        "bootstrap only, and a comparison pairs seed with seed.",
        metavar="N,N,...",
        ini="linelist",
        default_text="one draw, from --niah-seed",
    ),
    _opt(
        "bootstrap",
        num.int_parser(0, num.MAX_BOOTSTRAP),
        1000,
        "Bootstrap resamples over needle groups for the 95% intervals; 0 turns them off.",
        metavar="N",
    ),
    _opt(
        "device",
        p.parse_device,
        "auto",
        "Where the model runs: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps, or "
        "a comma list such as cuda:0,cuda:1 to encode on several GPUs.",
        metavar="DEVICE",
    ),
    _opt(
        "dtype",
        p.choice_parser(DTYPES),
        "auto",
        "Model dtype; auto is bfloat16 (float16 without it) on a GPU and float32 elsewhere.",
        metavar="DTYPE",
    ),
    _opt(
        "batch-size",
        num.int_parser(1, num.MAX_BATCH),
        16,
        "Texts per encode batch when the token budget is 0, and on several devices.",
        metavar="N",
    ),
    _opt(
        "token-budget",
        num.int_parser(0, num.MAX_TOKEN_BUDGET),
        16384,
        "Tokens per encode batch (texts of one length packed under it). Left at the default, "
        "a GPU takes 32 full windows per batch. 0 uses --niah-batch-size texts per batch.",
        metavar="N",
    ),
    _opt(
        "max-seq-length",
        num.optional_int_parser(1, num.MAX_LENGTH),
        None,
        "Override the model's window in tokens, special tokens included (e.g. to simulate a "
        "shorter model); give a remote model's when neither its server nor its tokenizer folder "
        "says it.",
        metavar="N",
        default_text="the model's own",
    ),
    _opt(
        "trust-remote-code",
        p.parse_bool,
        False,
        "Allow a model's own code from the hub to run (jina-embeddings-v3 needs it).",
        flag=True,
        ini="bool",
    ),
    _opt(
        "model-kwargs",
        p.parse_json_object,
        {},
        "JSON object passed as SentenceTransformer(model_kwargs=...).",
        metavar="JSON",
    ),
    _opt(
        "encode-kwargs",
        p.parse_json_object,
        {},
        'JSON object passed to every encode() call, e.g. \'{"task": "text-matching"}\'.',
        metavar="JSON",
    ),
    _opt(
        "query-prompt",
        p.parse_text,
        "",
        "Text prepended to every question.",
        metavar="TEXT",
        default_text="the model's own query prompt",
    ),
    _opt(
        "doc-prompt",
        p.parse_text,
        "",
        "Text prepended to every haystack and needle.",
        metavar="TEXT",
        default_text="the model's own document prompt",
    ),
    _opt(
        "tokenizer",
        p.parse_text,
        "",
        "The tokenizer of a remote model (openai+URL#MODEL), for haystacks of exact token "
        "lengths: a folder with tokenizer.json, a tokenizer.json file, 'packaged-minilm', "
        "a hub name in the local Hugging Face cache, or a tiktoken encoding "
        "('tiktoken:cl100k_base', read from tiktoken's cache, never downloaded; or "
        "'tiktoken:/path/to/FILE.tiktoken'). Required for remote models without a preset "
        "(text-embedding-3-small/-large: tiktoken:cl100k_base; voyage-3).",
        metavar="NAME|PATH",
        default_text="none (required with an openai+ model without a preset)",
    ),
    _opt(
        "api-key-env",
        p.parse_env_name,
        "OPENAI_API_KEY",
        "Environment variable holding a remote model's API key, sent as 'Authorization: "
        "Bearer'; the key is never written to results, logs or reports. Unset: no key is sent.",
        metavar="NAME",
    ),
    _opt(
        "remote-concurrency",
        num.int_parser(1, num.MAX_BATCH),
        4,
        "Most requests in flight to a remote model's server at once.",
        metavar="N",
    ),
    _opt(
        "remote-timeout",
        num.parse_seconds,
        60.0,
        "Seconds to wait for one response of a remote model's server before retrying it "
        f"(at most {num.MAX_SECONDS:,.0f}).",
        metavar="SECONDS",
    ),
    _opt(
        "cache-dir",
        p.parse_text,
        "",
        "Folder of the persistent embedding cache (embeddings.sqlite) and results cache.",
        metavar="DIR",
        env=paths.CACHE_ENV,
        experiment=False,
        path_unless="",
        default_text="the user cache folder",
    ),
    _opt(
        "no-cache",
        p.parse_bool,
        False,
        "Neither read nor write the embedding and results caches.",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    _opt(
        "min-auc",
        gate.parse_thresholds,
        gate.Thresholds(),
        "Gate: fail a length whose AUC is below this; one value, or per length like "
        "'128=0.7,1024=0.6', or both '0.55,128=0.7'.",
        metavar="T|L=T,...",
        experiment=False,
    ),
    _opt(
        "min-ratio",
        gate.parse_thresholds,
        gate.Thresholds(),
        "Gate on the comparative ratio (same syntax as --niah-min-auc).",
        metavar="T|L=T,...",
        experiment=False,
    ),
    _opt(
        "inconclusive",
        p.choice_parser(INCONCLUSIVE),
        "auto",
        "What a gate does when its 95% interval cannot tell: auto fails it when the point "
        "estimate is past the limit and warns otherwise (never weaker than a point gate); "
        "fail, warn or pass always.",
        metavar="auto|fail|warn|pass",
        experiment=False,
    ),
    _opt(
        "strict",
        p.parse_bool,
        False,
        "A missed needle fails its test instead of xfailing.",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    _opt(
        "save",
        p.parse_text,
        "",
        "Save each model's results as run NAME in the run store (versioned JSON with "
        "machine and commit).",
        metavar="NAME",
        ini=None,
        experiment=False,
    ),
    _opt(
        "save-overwrite",
        p.parse_bool,
        False,
        "Let --niah-save replace a run saved under the same name (otherwise refused).",
        flag=True,
        ini=None,
        experiment=False,
    ),
    _opt(
        "compare",
        p.parse_text,
        "",
        "Compare with a saved run NAME, a results/run file PATH, or 'previous' (the newest "
        "run of the model saved on this kind of machine), paired on identical cells.",
        metavar="NAME|PATH",
        experiment=False,
    ),
    _opt(
        "compare-fail",
        gate.parse_allowances,
        (),
        "Fail a length whose metric fell more than allowed versus --niah-compare: "
        "'auc:0.02' (absolute drop), 'ratio:5%' (relative drop), comma-separated; metrics "
        "norm, ratio, auc, sep, effect.",
        metavar="EXPR,...",
        experiment=False,
        default_text="none",
    ),
    _opt(
        "compare-allow",
        p.choices_parser(COMPARED),
        (),
        "Compare with a baseline that differs in these fields (comma list), e.g. 'seed' "
        "or 'positions'; any other difference is refused (a tokenizer's never is: each "
        "run's lengths are in its own model's tokens).",
        metavar="FIELDS",
        ini="linelist",
        experiment=False,
        default_text="none",
    ),
    _opt(
        "storage",
        p.parse_text,
        "",
        "Folder of saved runs.",
        metavar="DIR",
        experiment=False,
        path_unless="",
        default_text=str(paths.store_dir(paths.ROOTDIR)),
    ),
    _opt(
        "report",
        p.parse_text,
        "",
        "Write report.html (figures embedded), results.json, cases.csv and summary.md to DIR.",
        metavar="DIR",
        experiment=False,
        path_unless="",
    ),
    _opt(
        "export-haystacks",
        p.parse_text,
        "",
        "Write every haystack each model embeds to FILE as JSON lines: model, id, length, "
        "text, token ids and the needle's token span (null for a control).",
        metavar="FILE",
        experiment=False,
        path_unless="",
    ),
    _opt(
        "snapshot",
        p.parse_bool,
        False,
        "Assert each model's rounded metric table against a syrupy snapshot "
        "(--snapshot-update writes them and implies this option).",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    _opt(
        "speed",
        p.parse_bool,
        False,
        "Record the model's tokens/s per length (and a served model's latency) in the "
        "results and the report, and add test_speed[LENGTH]: times one batch of the run's "
        "shape per round (fresh haystacks, the embedding cache bypassed) in pytest-benchmark's "
        "pedantic mode, beside a fixed reference workload (needs pytest-benchmark, in [all]; "
        "--benchmark-json, --benchmark-save work as usual; --niah-speed-fail gates its speed). "
        "Off: outputs stay identical bytes run to run.",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    _opt(
        "speed-fail",
        parse_speed_fail,
        None,
        "Fail test_speed[LENGTH] when the model's relative_speed (tokens per reference "
        "workload, in CPU time: the same on a fast and a slow runner) fell by more than this "
        "percentage versus pytest-benchmark's --benchmark-compare run, e.g. 20%; needs "
        "--niah-speed and --benchmark-compare.",
        metavar="PERCENT",
        experiment=False,
        default_text="none (no speed gate)",
    ),
    _opt(
        "snapshot-digits",
        num.int_parser(0, num.MAX_DIGITS),
        3,
        "Digits floats keep in snapshots, so last-bit changes do not churn them.",
        metavar="N",
        experiment=False,
    ),
    _opt(
        "snapshot-dir",
        p.parse_text,
        "",
        "Folder of the snapshots, one sub-folder per model label.",
        metavar="DIR",
        experiment=False,
        path_unless="",
        default_text=str(paths.snapshot_dir(paths.ROOTDIR)),
    ),
    _opt(
        "json",
        p.parse_text,
        "",
        "Write the results to this JSON file (FILE.<label>.json per model when several).",
        metavar="FILE",
        ini=None,
        experiment=False,
        path_unless="",
    ),
    _opt(
        "shard",
        num.parse_shard,
        None,
        "Embed only job K's share of N (balanced by tokens) into a part file in "
        f"--niah-shard-dir, and run no gates: one job of a CI matrix (N at most "
        f"{num.MAX_SHARDS:,}).",
        metavar="K/N",
        ini=None,
        experiment=False,
        default_text="none",
    ),
    _opt(
        "shard-dir",
        p.parse_text,
        "",
        "Folder the --niah-shard job writes its part file to (DIR/LABEL/ when several models).",
        metavar="DIR",
        ini=None,
        experiment=False,
        path_unless="",
    ),
    _opt(
        "from-shards",
        p.parse_text,
        "",
        "Gate and report from the part files of every --niah-shard job gathered in DIR, "
        "loading no model.",
        metavar="DIR",
        ini=None,
        experiment=False,
        path_unless="",
    ),
)

BY_NAME: Mapping[str, Option] = {o.name: o for o in OPTIONS}
DEFAULTS: Mapping[str, Any] = {o.field: o.default for o in OPTIONS}


def default(field: str) -> Any:
    """The default of the option that fills ``field`` (a :class:`NiahConfig` field)."""
    return DEFAULTS[field]


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


def markdown_table(options: Sequence[Option] = OPTIONS) -> str:
    """The option table of ``docs/reference/options.md``.

    Columns: option, ini key, environment variable, default, meaning.
    """
    lines = [
        "| option | ini | env | default | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    for option in options:
        flag = f"`{option.flag_name}`" + ("" if option.flag else f" `{option.metavar}`")
        ini = f"`{option.dest}`" if option.ini else ""
        env = f"`{option.env}`" if option.env else ""
        shown = option.shown_default()
        default_cell = _html(shown) if option.default_text else f"`{shown}`"
        cells = [flag, ini, env, default_cell, _html(option.described)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
