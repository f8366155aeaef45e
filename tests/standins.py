"""The tokenizers every tokenization test runs on, beside the packaged pair.

The stand-ins of the study's models (``benchmarks/make_seed_standins.py``): their tokenizers
are trained on the packaged books once per test run (``standin_tokenizers`` in
tests/conftest.py); each has a session fixture named ``<name>_tokenizer`` (``-`` as ``_``).
"""

from __future__ import annotations

STANDINS = ("v3", "v4", "gpt2", "metaspace", "ws-metaspace-first")
STANDIN_FIXTURES = tuple(f"{name.replace('-', '_')}_tokenizer" for name in STANDINS)
# Every family: WordPiece, static, the stand-ins.
EVERY_TOKENIZER = ("minilm_tokenizer", "static_tokenizer", *STANDIN_FIXTURES)


def variant(tokenizer: object, **pre_tokenizer: object) -> object:
    """A ``HaystackTokenizer`` of ``tokenizer``'s with its pre-tokenizer's fields changed."""
    import json

    from tokenizers import Tokenizer

    from pytest_niah.embed.fast_tokenizer import HaystackTokenizer

    spec = json.loads(tokenizer._tokenizer.to_str())  # type: ignore[attr-defined]
    spec["pre_tokenizer"].update(pre_tokenizer)
    return HaystackTokenizer(Tokenizer.from_str(json.dumps(spec)))


def with_added(tokenizer: object, *tokens: object) -> object:
    """A ``HaystackTokenizer`` of ``tokenizer``'s with added tokens (``AddedToken`` each)."""
    from tokenizers import Tokenizer

    from pytest_niah.embed.fast_tokenizer import HaystackTokenizer

    copy = Tokenizer.from_str(tokenizer._tokenizer.to_str())  # type: ignore[attr-defined]
    copy.add_tokens([t for t in tokens if not t.special])  # type: ignore[attr-defined]
    copy.add_special_tokens([t for t in tokens if t.special])  # type: ignore[attr-defined]
    return HaystackTokenizer(copy)
