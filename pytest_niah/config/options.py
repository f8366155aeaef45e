"""Every ``--niah-*`` option, once: its parser, default, help, ini key and environment variable.

The argparse options and ini keys (:mod:`pytest_niah.plugin.hooks`), the defaults of
:class:`~pytest_niah.config.niah.NiahConfig` and the docs' option table,
``docs/reference/options.md`` (:func:`~pytest_niah.config.option_docs.markdown_table`), are
all produced from :data:`OPTIONS`. Precedence for every option: command line > environment
variable > ini > default (:func:`~pytest_niah.config.option_precedence.resolve`). One entry's
shape is :class:`~pytest_niah.config.option.Option`; this module is the table alone, with its
lookups by name and by field.

Only the standard library and the config layer are imported here: the plugin registers
these options in every pytest run, active or not.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_niah.config import bounded_numbers as num
from pytest_niah.config import gate_expressions as gate
from pytest_niah.config import parsers as p
from pytest_niah.config import paths
from pytest_niah.config.option import Option
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

OPTIONS: tuple[Option, ...] = (
    Option(
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
    Option(
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
    Option(
        "needles",
        p.parse_path,
        BUILTIN,
        f"Needle-set JSON file, or '{BUILTIN}'.",
        metavar="FILE",
        path_unless=BUILTIN,
    ),
    Option(
        "groups",
        p.parse_names,
        (),
        "Keep only these needle group ids or categories (comma list).",
        metavar="IDS",
        ini="linelist",
        default_text="all",
    ),
    Option(
        "lengths",
        num.parse_lengths,
        (128, 256, 512, 1024, 2048, 4096, 8192),
        "Haystack lengths in tokens of the model's tokenizer; A..B is the doubling grid from "
        "A to B (128..32768 runs 128, 256, ..., 32768: the default grid up to a 32K window).",
        metavar="N,N,...|A..B",
        ini="linelist",
    ),
    Option(
        "positions",
        num.int_parser(1, num.MAX_POSITIONS),
        10,
        "Needle positions per haystack, evenly spaced from start to end.",
        metavar="N",
    ),
    Option(
        "controls",
        num.int_parser(1, num.MAX_CONTROLS),
        1,
        "No-needle control haystacks per question and length.",
        metavar="N",
    ),
    Option(
        "arms",
        p.choices_parser(ARMS),
        ("onehop",),
        "Needle/query arms: onehop, literal (needles in the question's own words), "
        "expand100/expand150/expand250 (questions expanded with that many related terms).",
        metavar="ARMS",
        ini="linelist",
    ),
    Option(
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
    Option(
        "chunk-tokens",
        num.optional_int_parser(8, num.MAX_LENGTH),
        None,
        "Chunk size in tokens for chunk-max/chunk-mean.",
        metavar="N",
        default_text="the model's window",
    ),
    Option(
        "expansions",
        p.parse_path,
        BUILTIN,
        f"Expansion-terms JSON file for the expandN arms, or '{BUILTIN}'.",
        metavar="FILE",
        path_unless=BUILTIN,
    ),
    Option(
        "orders",
        p.choices_parser(ORDERS),
        ORDERS,
        "Needle word orders.",
        metavar="ORDERS",
        ini="linelist",
    ),
    Option(
        "seed",
        num.int_parser(0, num.MAX_SEED),
        42,
        "Seed of every random choice (snippets, names, the bootstrap).",
        metavar="N",
    ),
    Option(
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
    Option(
        "bootstrap",
        num.int_parser(0, num.MAX_BOOTSTRAP),
        1000,
        "Bootstrap resamples over needle groups for the 95% intervals; 0 turns them off.",
        metavar="N",
    ),
    Option(
        "device",
        p.parse_device,
        "auto",
        "Where the model runs: auto (cuda, then mps, then cpu), cpu, cuda, cuda:N, mps, or "
        "a comma list such as cuda:0,cuda:1 to encode on several GPUs.",
        metavar="DEVICE",
    ),
    Option(
        "dtype",
        p.choice_parser(DTYPES),
        "auto",
        "Model dtype; auto is bfloat16 (float16 without it) on a GPU and float32 elsewhere.",
        metavar="DTYPE",
    ),
    Option(
        "batch-size",
        num.int_parser(1, num.MAX_BATCH),
        16,
        "Texts per encode batch when the token budget is 0, and on several devices.",
        metavar="N",
    ),
    Option(
        "token-budget",
        num.int_parser(0, num.MAX_TOKEN_BUDGET),
        16384,
        "Tokens per encode batch (texts of one length packed under it). Left at the default, "
        "a GPU takes 32 full windows per batch, a window past 8,192 tokens counted as the "
        "longest haystack. 0 uses --niah-batch-size texts per batch.",
        metavar="N",
    ),
    Option(
        "max-seq-length",
        num.optional_int_parser(1, num.MAX_LENGTH),
        None,
        "Override the model's window in tokens, special tokens included (e.g. to simulate a "
        "shorter model); give a remote model's when neither its server nor its tokenizer folder "
        "says it.",
        metavar="N",
        default_text="the model's own",
    ),
    Option(
        "trust-remote-code",
        p.parse_bool,
        False,
        "Allow a model's own code from the hub to run (jina-embeddings-v3 needs it).",
        flag=True,
        ini="bool",
    ),
    Option(
        "model-kwargs",
        p.parse_json_object,
        {},
        "JSON object passed as SentenceTransformer(model_kwargs=...).",
        metavar="JSON",
    ),
    Option(
        "encode-kwargs",
        p.parse_json_object,
        {},
        'JSON object passed to every encode() call, e.g. \'{"task": "text-matching"}\'.',
        metavar="JSON",
    ),
    Option(
        "query-prompt",
        p.parse_text,
        "",
        "Text prepended to every question.",
        metavar="TEXT",
        default_text="the model's own query prompt",
    ),
    Option(
        "doc-prompt",
        p.parse_text,
        "",
        "Text prepended to every haystack and needle.",
        metavar="TEXT",
        default_text="the model's own document prompt",
    ),
    Option(
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
    Option(
        "api-key-env",
        p.parse_env_name,
        "OPENAI_API_KEY",
        "Environment variable holding a remote model's API key, sent as 'Authorization: "
        "Bearer'; the key is never written to results, logs or reports. Unset: no key is sent.",
        metavar="NAME",
    ),
    Option(
        "remote-concurrency",
        num.int_parser(1, num.MAX_BATCH),
        4,
        "Most requests in flight to a remote model's server at once.",
        metavar="N",
    ),
    Option(
        "remote-timeout",
        num.parse_seconds,
        60.0,
        "Seconds to wait for one response of a remote model's server before retrying it "
        f"(at most {num.MAX_SECONDS:,.0f}).",
        metavar="SECONDS",
    ),
    Option(
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
    Option(
        "no-cache",
        p.parse_bool,
        False,
        "Neither read nor write the embedding and results caches.",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    Option(
        "min-auc",
        gate.parse_thresholds,
        gate.Thresholds(),
        "Gate: fail a length whose AUC is below this; one value, or per length like "
        "'128=0.7,1024=0.6', or both '0.55,128=0.7'.",
        metavar="T|L=T,...",
        experiment=False,
    ),
    Option(
        "min-ratio",
        gate.parse_thresholds,
        gate.Thresholds(),
        "Gate on the comparative ratio (same syntax as --niah-min-auc).",
        metavar="T|L=T,...",
        experiment=False,
    ),
    Option(
        "inconclusive",
        p.choice_parser(INCONCLUSIVE),
        "auto",
        "What a gate does when its 95% interval cannot tell: auto fails it when the point "
        "estimate is past the limit and warns otherwise (never weaker than a point gate); "
        "fail, warn or pass always.",
        metavar="auto|fail|warn|pass",
        experiment=False,
    ),
    Option(
        "strict",
        p.parse_bool,
        False,
        "A missed needle fails its test instead of xfailing.",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    Option(
        "save",
        p.parse_text,
        "",
        "Save each model's results as run NAME in the run store (versioned JSON with "
        "machine and commit).",
        metavar="NAME",
        ini=None,
        experiment=False,
    ),
    Option(
        "save-overwrite",
        p.parse_bool,
        False,
        "Let --niah-save replace a run saved under the same name (otherwise refused).",
        flag=True,
        ini=None,
        experiment=False,
    ),
    Option(
        "compare",
        p.parse_text,
        "",
        "Compare with a saved run NAME, a results/run file PATH, or 'previous' (the newest "
        "run of the model saved on this kind of machine), paired on identical cells.",
        metavar="NAME|PATH",
        experiment=False,
    ),
    Option(
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
    Option(
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
    Option(
        "storage",
        p.parse_text,
        "",
        "Folder of saved runs.",
        metavar="DIR",
        experiment=False,
        path_unless="",
        default_text=str(paths.store_dir(paths.ROOTDIR)),
    ),
    Option(
        "report",
        p.parse_text,
        "",
        "Write report.html (figures embedded), results.json, cases.csv and summary.md to DIR.",
        metavar="DIR",
        experiment=False,
        path_unless="",
    ),
    Option(
        "export-haystacks",
        p.parse_text,
        "",
        "Write every haystack each model embeds to FILE as JSON lines: model, id, length, "
        "text, token ids and the needle's token span (null for a control).",
        metavar="FILE",
        experiment=False,
        path_unless="",
    ),
    Option(
        "snapshot",
        p.parse_bool,
        False,
        "Assert each model's rounded metric table against a syrupy snapshot "
        "(--snapshot-update writes them and implies this option).",
        flag=True,
        ini="bool",
        experiment=False,
    ),
    Option(
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
    Option(
        "speed-fail",
        gate.parse_speed_fail,
        None,
        "Fail test_speed[LENGTH] when the model's relative_speed (tokens per reference "
        "workload, in CPU time: the same on a fast and a slow runner) fell by more than this "
        "percentage versus pytest-benchmark's --benchmark-compare run, e.g. 20%; needs "
        "--niah-speed and --benchmark-compare.",
        metavar="PERCENT",
        experiment=False,
        default_text="none (no speed gate)",
    ),
    Option(
        "snapshot-digits",
        num.int_parser(0, num.MAX_DIGITS),
        3,
        "Digits floats keep in snapshots, so last-bit changes do not churn them.",
        metavar="N",
        experiment=False,
    ),
    Option(
        "snapshot-dir",
        p.parse_text,
        "",
        "Folder of the snapshots, one sub-folder per model label.",
        metavar="DIR",
        experiment=False,
        path_unless="",
        default_text=str(paths.snapshot_dir(paths.ROOTDIR)),
    ),
    Option(
        "json",
        p.parse_text,
        "",
        "Write the results to this JSON file (FILE.<label>.json per model when several).",
        metavar="FILE",
        ini=None,
        experiment=False,
        path_unless="",
    ),
    Option(
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
    Option(
        "shard-dir",
        p.parse_text,
        "",
        "Folder the --niah-shard job writes its part file to (DIR/LABEL/ when several models).",
        metavar="DIR",
        ini=None,
        experiment=False,
        path_unless="",
    ),
    Option(
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
