"""A model's fast (Rust) tokenizer, read for haystacks of exact token lengths.

Both backends count haystack tokens with it: a sentence-transformers model's own tokenizer
(:mod:`pytest_niah.embed.st_backend`) and a served model's ``--niah-tokenizer``
(:mod:`pytest_niah.embed.remote`). :func:`check_vocabulary` refuses one that lost its
vocabulary files.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from pytest_niah.errors import EmbedderError

# Fewer texts than this are encoded one by one, outside the library's thread pool: a small
# batch call waits there behind any large one running. 4,000 calls of 8 sentences took 1.8 s
# alone and 81 s beside a large encode_batch; one by one, 3.7 s and 7.1 s.
_SERIAL_BELOW = 32
# Pre-tokenizers that split at white space first, and those that then act on each piece alone.
_SPLITTING = frozenset({"BertPreTokenizer", "WhitespaceSplit", "Whitespace"})
_PER_PIECE = _SPLITTING | {"Punctuation", "Digits"}
# Normalizers that map characters one by one (a character map, case, accents, Unicode forms).
_CHARWISE = frozenset(
    {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents", "Precompiled"}
)


def _piecewise(spec: Any) -> bool:
    if not isinstance(spec, dict):
        return False
    steps = spec.get("pretokenizers", []) if spec.get("type") == "Sequence" else [spec]
    if not steps or steps[0].get("type") not in _SPLITTING:
        return False
    # A Metaspace marks every piece alike only when it prepends to each one.
    return all(
        step.get("type") in _PER_PIECE
        or (step.get("type") == "Metaspace" and step.get("prepend_scheme") == "always")
        for step in steps[1:]
    )


def _charwise(spec: Any) -> bool:
    steps = spec.get("normalizers", []) if spec.get("type") == "Sequence" else [spec]
    return all(step.get("type") in _CHARWISE for step in steps)


class HaystackTokenizer:
    """A model's fast tokenizer with truncation and padding off: a copy, or the model's own.

    Args:
        backend: The model's ``tokenizers.Tokenizer``.
        reuse: The model reads ``backend`` only through ``encode_batch`` (no transformers
            wrapper re-configures it per call, as for sentence-transformers' static models):
            if it neither truncates nor pads, it is read as it is. That spares parsing a copy,
            half a second for a static model's large vocabulary.
    """

    def __init__(self, backend: Any, *, reuse: bool = False) -> None:
        from tokenizers import Tokenizer

        if reuse and backend.truncation is None and backend.padding is None:
            self._tokenizer = backend
            return
        self._tokenizer = Tokenizer.from_str(backend.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    @cached_property
    def identity(self) -> str:
        """sha256 of the tokenizer's full serialization."""
        import hashlib

        return hashlib.sha256(self._tokenizer.to_str().encode()).hexdigest()

    @cached_property
    def splits_at_spaces(self) -> bool:
        """Whether every token lies inside one white-space-separated piece, tokenized alone.

        Then a text's tokens are its pieces' tokens, and haystacks are spliced in token
        space (:mod:`pytest_niah.haystacks.splice`).
        """
        import json

        pre, norm = self._tokenizer.pre_tokenizer, self._tokenizer.normalizer
        return _piecewise(json.loads(pre.__getstate__()) if pre is not None else None) and (
            norm is None or _charwise(json.loads(norm.__getstate__()))
        )

    def encode_batch(self, texts: Sequence[str]) -> list[Any]:
        """Encodings without special tokens (multi-threaded in the Rust library)."""
        if len(texts) < _SERIAL_BELOW:  # a few sentences: not behind a large batch
            encode = self._tokenizer.encode
            return [encode(text, add_special_tokens=False) for text in texts]
        return list(self._tokenizer.encode_batch(list(texts), add_special_tokens=False))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts: the same ids as :meth:`encode_batch`, without tracking offsets."""
        if len(texts) < _SERIAL_BELOW:
            encode = self._tokenizer.encode
            return [len(encode(text, add_special_tokens=False)) for text in texts]
        encoded = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        return [len(encoding) for encoding in encoded]


# A plain English sentence: a real vocabulary knows most of its words.
VOCABULARY_PROBE = "The old sailor walked slowly along the river and thought about his family."
MIN_VOCABULARY = 100


def check_vocabulary(name: str, backend: Any) -> None:
    """Reject a tokenizer that maps everything to one unknown token (missing vocabulary files).

    Without vocabulary files transformers can still build a tokenizer of only the special
    tokens; every text then gets one embedding and the run would "succeed" at chance.
    """
    ids = backend.encode(VOCABULARY_PROBE, add_special_tokens=False).ids
    size = backend.get_vocab_size()
    if size < MIN_VOCABULARY or len(set(ids)) <= 1:
        raise EmbedderError(
            f"model {name!r} has a tokenizer with {size} tokens that reads every word as "
            "unknown: its vocabulary files (tokenizer.json, or vocab.txt / sentencepiece model) "
            "are missing",
            "copy the tokenizer files next to the model, or save it again with "
            "SentenceTransformer.save(...)",
        )
