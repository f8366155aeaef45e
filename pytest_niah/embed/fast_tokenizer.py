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


def _steps(spec: Any) -> list[dict[str, Any]]:
    if not isinstance(spec, dict):
        return []
    return list(spec.get("pretokenizers", [])) if spec.get("type") == "Sequence" else [spec]


def _resets_at_spaces(spec: Any) -> bool:
    """Whether a word after a space starts afresh: Metaspace or byte-level pre-tokenizers.

    A Metaspace reads the space as its word marker, a byte-level BPE's pre-token starts with
    the space; after a regex ``Split``, a ``ByteLevel`` without its own regex. Needles are
    spliced into such a tokenizer's haystacks with the space before them, and every junction
    is checked (:func:`pytest_niah.haystacks.splice.junctions_hold`).
    """
    types = [step.get("type") for step in _steps(spec)]
    if types == ["Metaspace"] or types == ["ByteLevel"]:
        return True
    return types == ["Split", "ByteLevel"] and not _steps(spec)[1].get("use_regex", True)


def _normalizes_locally(spec: Any) -> bool:
    """Character maps, and replacements (they are checked at every junction)."""
    steps = spec.get("normalizers", []) if spec.get("type") == "Sequence" else [spec]
    return all(step.get("type") in _CHARWISE | {"Replace"} for step in steps)


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
        return (
            _piecewise(json.loads(pre.__getstate__()) if pre is not None else None)
            and (norm is None or _charwise(json.loads(norm.__getstate__())))
            and not self._added_across_spaces
        )

    @cached_property
    def splices_needles(self) -> bool:
        """Whether needles may be spliced into a filler's tokens, every junction checked.

        Tokenizers that split at spaces, and those whose words after a space start afresh
        (Metaspace, byte-level BPEs: :func:`_resets_at_spaces`); never one with an added
        token that spans white space (it is matched across the pieces).
        """
        import json

        if self.splits_at_spaces:
            return True
        pre, norm = self._tokenizer.pre_tokenizer, self._tokenizer.normalizer
        return (
            pre is not None
            and _resets_at_spaces(json.loads(pre.__getstate__()))
            and (norm is None or _normalizes_locally(json.loads(norm.__getstate__())))
            and not self._added_across_spaces
        )

    @cached_property
    def _added_across_spaces(self) -> bool:
        """Whether an added token holds white space (``". the"``).

        Added tokens are matched in the raw text before any pre-tokenizer, so such a token
        spans the pieces a text is split into.
        """
        added = self._tokenizer.get_added_tokens_decoder().values()
        return any(any(c.isspace() for c in token.content) for token in added)

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
