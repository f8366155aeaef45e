"""The words a run is described in: arms, scorings, orders, dtypes and the gated metrics.

These are facts every layer needs (options parse them, the haystack builder and the
metrics use them, reports print them), so they live here, at the bottom, once.
"""

from __future__ import annotations

from typing import Final

# What --niah-corpus takes besides a folder: the ten pinned public-domain books, shipped
# inside the package (the default), or the same books downloaded.
PACKAGED: Final = "packaged"
GUTENBERG: Final = "gutenberg"
CORPUS_WORDS: Final = (PACKAGED, GUTENBERG)
# The models installed with the ``packaged`` extra (pytest_niah.embed.models.PACKAGED says
# where each lives): they run offline.
PACKAGED_MODELS: Final = ("packaged-minilm", "packaged-static")
# What --niah-needles and --niah-expansions take besides a file: the sets shipped inside.
BUILTIN: Final = "builtin"

# Needle/query variants: the study's one-hop arm, its literal diagnostic, query expansions.
ARMS: Final = ("onehop", "literal", "expand100", "expand150", "expand250")
# How a haystack is scored: its own embedding, its best chunk, the mean of its chunks, or
# (models with multi-vector output) late interaction of its token vectors with the question's.
MAXSIM: Final = "maxsim"
SCORINGS: Final = ("whole", "chunk-max", "chunk-mean", MAXSIM)
# The scorings that read a haystack as one input, cut at the model's window (no chunks).
WHOLE_HAYSTACK: Final = ("whole", MAXSIM)
# Needle word orders.
ORDERS: Final = ("default", "inverted")
DTYPES: Final = ("auto", "float32", "float16", "bfloat16")
# What an inconclusive verdict does: fail when the point estimate is past the limit and
# warn otherwise (auto), or always fail, warn or pass.
INCONCLUSIVE: Final = ("auto", "fail", "warn", "pass")

# What two compared runs must share (``--niah-compare-allow`` names the ones that may differ).
COMPARED: Final = (
    "seed",
    "corpus",
    "needles",
    "expansions",
    "lengths",
    "positions",
    "controls",
    "orders",
    "arms",
    "scoring",
    "chunk-tokens",
    "tokenizer",
)

# The study's metrics, in table order: internal name -> what the user reads.
METRIC_LABELS: Final = {
    "normalized": "normalized similarity",
    "comparative_ratio": "comparative ratio",
    "auc": "AUC",
    "auc_study": "AUC (study)",
    "separation": "separation",
    "effect_size": "effect size",
}
# Short names accepted on the command line (any case; "-" for "_").
METRIC_ALIASES: Final = {
    **{name: name for name in METRIC_LABELS},
    "norm": "normalized",
    "ratio": "comparative_ratio",
    "auc-study": "auc_study",
    "sep": "separation",
    "effect": "effect_size",
    "d": "effect_size",
}
