"""tiktoken encodings as haystack tokenizers: ``--niah-tokenizer=tiktoken:cl100k_base``.

OpenAI-style embedding APIs count input tokens in a tiktoken encoding (text-embedding-3-* in
``cl100k_base``). Two forms are accepted:

- ``tiktoken:NAME``: an encoding tiktoken knows (``tiktoken.list_encoding_names()``). tiktoken
  reads its ranks file from its cache (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``,
  else ``<tmp>/data-gym-cache``; the file is named by the sha1 of its download URL). pytest-niah
  never lets it download: without the cached file the run stops with a :class:`ConfigError`
  before any haystack is built (offline, a download would fail late or hang).
- ``tiktoken:PATH``: a ranks file (``*.tiktoken``: base64 token and rank per line), split into
  pieces by ``cl100k_base``'s pattern (:data:`FILE_PATTERN`), with no special tokens.

Texts are encoded as ordinary text (no special tokens; the APIs add none). The identity hashes
the encoding's name, pattern, special tokens and every rank's bytes, so two files with the same
ranks are one tokenizer and a changed rank is another.

tiktoken is imported only when such a tokenizer is asked for (the ``api`` extra).
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.embed.remote_presets import TIKTOKEN_PREFIX
from pytest_niah.errors import ConfigError, ExtraMissingError

# cl100k_base's split pattern (tiktoken_ext/openai_public.py), used for a ranks file: the
# encoding of OpenAI's embedding models, and the one most other tiktoken files were made for.
FILE_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CACHE_HINT = (
    "set TIKTOKEN_CACHE_DIR to a folder holding that file (copy it from a machine where "
    "tiktoken.get_encoding({name!r}) ran), or fill the cache once online with python -c "
    '"import tiktoken; tiktoken.get_encoding({name!r})" under the same TIKTOKEN_CACHE_DIR; '
    "or give the ranks file itself as --niah-tokenizer=tiktoken:/path/to/{name}.tiktoken"
)


class NotCached(ConfigError):
    """tiktoken wanted to download a file (raised instead of the download).

    Caught where the encoding is loaded and re-raised naming the cache folder; a usage error
    with its own fix where it escapes (tiktoken called outside that path).
    """

    def __init__(self, problem: str, hint: str, url: str = "") -> None:
        super().__init__(problem, hint)
        self.url = url


class TiktokenEncoding:
    """An :class:`~pytest_niah.haystacks.tokens.Encoded` of one text: ids and character spans.

    A token that holds part of a multi-byte character spans that whole character, as Hugging
    Face's byte-level offsets do.
    """

    __slots__ = ("_ends", "_starts", "ids")

    def __init__(self, ids: list[int], starts: np.ndarray, ends: np.ndarray) -> None:
        self.ids = ids
        self._starts = starts
        self._ends = ends

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """Every token's character span."""
        return list(zip(self._starts.tolist(), self._ends.tolist(), strict=True))

    def char_to_token(self, char_pos: int) -> int | None:
        """The first token covering ``char_pos``."""
        index = int(np.searchsorted(self._starts, char_pos, side="right")) - 1
        if index < 0 or char_pos >= self._ends[index]:
            return None
        while index > 0 and self._starts[index - 1] == self._starts[index]:
            index -= 1  # tokens that split one character share its span
        return index

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The span of a token."""
        if not 0 <= token_index < len(self.ids):
            return None
        return int(self._starts[token_index]), int(self._ends[token_index])


class TiktokenTokenizer:
    """A tiktoken ``Encoding`` as a counting haystack tokenizer.

    Args:
        encoding: The ``tiktoken.Encoding``.
    """

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding
        self.name: str = encoding.name
        values: list[bytes] = encoding.token_byte_values()
        ranks = [int(encoding.encode_single_token(value)) for value in values]
        order = np.argsort(np.asarray(ranks, dtype=np.int64), kind="stable")
        digest = hashlib.sha256()
        # tiktoken has no public accessor for the pattern; the specials are public by name.
        pattern = str(getattr(encoding, "_pat_str", ""))
        specials = sorted((t, encoding.encode_single_token(t)) for t in encoding.special_tokens_set)
        for part in (self.name, pattern, repr(specials)):
            digest.update(part.encode() + b"\0")
        lengths = np.zeros(max(ranks, default=-1) + 1, dtype=np.int64)
        for i in order.tolist():
            digest.update(b"%d %s\n" % (ranks[i], base64.b64encode(values[i])))
            lengths[ranks[i]] = len(values[i])
        self.identity = digest.hexdigest()
        self._byte_lengths = lengths

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts, no special tokens."""
        return [len(ids) for ids in self._ids(texts)]

    def encode_batch(self, texts: Sequence[str]) -> list[TiktokenEncoding]:
        """Encodings without special tokens, with character spans."""
        return [self._spans(text, ids) for text, ids in zip(texts, self._ids(texts), strict=True)]

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        if len(texts) == 1:  # no thread pool for one text (the builder's usual call)
            return [self.encoding.encode_ordinary(texts[0])]
        return list(self.encoding.encode_ordinary_batch(list(texts)))

    def _spans(self, text: str, ids: list[int]) -> TiktokenEncoding:
        byte_ends = np.cumsum(self._byte_lengths[np.asarray(ids, dtype=np.int64)])
        byte_starts = byte_ends - self._byte_lengths[np.asarray(ids, dtype=np.int64)]
        if text.isascii():
            return TiktokenEncoding(ids, byte_starts, byte_ends)
        raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
        # The character of each byte: count the bytes that start a UTF-8 character.
        char_of_byte = np.cumsum((raw & 0xC0) != 0x80) - 1
        starts = char_of_byte[byte_starts] if ids else byte_starts
        ends = char_of_byte[byte_ends - 1] + 1 if ids else byte_ends
        return TiktokenEncoding(ids, starts, ends)


def import_tiktoken() -> Any:
    """The tiktoken module, or the error that installs it."""
    try:
        import tiktoken
    except ImportError:
        raise ExtraMissingError(
            "--niah-tokenizer=tiktoken:...: the tiktoken package is not installed",
            "pip install 'pytest-niah[api]' (or pip install tiktoken)",
        ) from None
    return tiktoken


_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def load_tiktoken(spec: str) -> TiktokenTokenizer:
    """The tokenizer ``tiktoken:NAME`` or ``tiktoken:PATH`` names; nothing is downloaded.

    Memoised: the plugin checks it at configure time and the model reads it again.

    Raises:
        ConfigError: an unknown encoding, an unreadable ranks file, or an encoding whose file is
            not in tiktoken's cache.
        ExtraMissingError: tiktoken is not installed.
    """
    target = spec[len(TIKTOKEN_PREFIX) :].strip()
    tiktoken = import_tiktoken()
    if not target:
        raise ConfigError(
            f"--niah-tokenizer={spec!r} names no tiktoken encoding",
            "give one, e.g. --niah-tokenizer=tiktoken:cl100k_base, or a ranks file path",
        )
    if "/" in target or target.endswith(".tiktoken") or target.startswith(("~", ".")):
        return TiktokenTokenizer(_encoding_from_file(tiktoken, Path(target).expanduser()))
    names = sorted(tiktoken.list_encoding_names())
    if target not in names:
        raise ConfigError(
            f"--niah-tokenizer: tiktoken has no encoding {target!r}",
            f"use one of {', '.join(names)}, or give a ranks file as tiktoken:/path/to/FILE",
        )
    cache = tiktoken_cache_dir()
    before = _cached_names(cache)
    try:
        encoding = _get_encoding_offline(tiktoken, target)
    except NotCached as missing:
        key = hashlib.sha1(missing.url.encode()).hexdigest()
        if key in before and key not in _cached_names(cache):
            # tiktoken removes a cache file whose sha256 is not the one it expects.
            raise ConfigError(
                f"--niah-tokenizer=tiktoken:{target}: the cached ranks file {cache}/{key} "
                f"({missing.url}) failed tiktoken's hash check (damaged or another file), "
                "so tiktoken deleted it; pytest-niah never downloads it again",
                CACHE_HINT.format(name=target),
            ) from None
        where = (
            f"in {cache} (no file {key})"
            if cache
            else "anywhere: TIKTOKEN_CACHE_DIR is empty, which turns tiktoken's cache off"
        )
        raise ConfigError(
            f"--niah-tokenizer=tiktoken:{target}: the encoding's ranks file ({missing.url}) is "
            f"not cached {where}, and pytest-niah never downloads it",
            CACHE_HINT.format(name=target),
        ) from None
    return TiktokenTokenizer(encoding)


def _cached_names(cache: str) -> set[str]:
    """The files in tiktoken's cache folder now (none where it is off or absent)."""
    import os

    try:
        return set(os.listdir(cache)) if cache else set()
    except OSError:
        return set()


def tiktoken_cache_dir() -> str:
    """Where tiktoken looks for its files (its ``read_file_cached`` rule); '' when off."""
    import os
    import tempfile

    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _get_encoding_offline(tiktoken: Any, name: str) -> Any:
    """``tiktoken.get_encoding(name)`` with its downloads turned into :class:`NotCached`."""
    import tiktoken.load as load

    def no_download(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise NotCached(
                f"tiktoken wanted to download {blobpath}; pytest-niah never downloads",
                "fill tiktoken's cache (TIKTOKEN_CACHE_DIR) once on a machine with network",
                url=blobpath,
            )
        return bytes(original(blobpath))

    with _LOAD_LOCK:
        original = load.read_file
        load.read_file = no_download
        try:
            return tiktoken.get_encoding(name)
        finally:
            load.read_file = original


def _encoding_from_file(tiktoken: Any, path: Path) -> Any:
    """An encoding of a ranks file, read here (tiktoken's loader would copy it to its cache)."""
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise ConfigError(
            f"--niah-tokenizer: cannot read the tiktoken ranks file {str(path)!r} "
            f"({exc.strerror or type(exc).__name__})",
            "give an existing *.tiktoken file (a base64 token and its rank per line)",
        ) from None
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError:
            raise ConfigError(
                f"--niah-tokenizer: {str(path)!r} line {number} is not 'BASE64TOKEN RANK'",
                "give a tiktoken ranks file (*.tiktoken), as tiktoken caches them",
            ) from None
    if len(ranks) < 256:
        raise ConfigError(
            f"--niah-tokenizer: {str(path)!r} holds {len(ranks)} ranks, fewer than the 256 "
            "single bytes every byte-level encoding has",
            "give a complete tiktoken ranks file (*.tiktoken)",
        )
    return tiktoken.Encoding(
        name=path.name.removesuffix(".tiktoken"),
        pat_str=FILE_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={},
    )
