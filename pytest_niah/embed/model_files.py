"""A model folder's files by content: which files count, and the sha256 of each.

Hidden files are left out, except those the model's own JSON config names (the loader
reads them); hashes are streamed and memoised (:mod:`pytest_niah.embed.file_hashes`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_niah.embed.file_hashes import HashMemo

# The largest JSON file read for the hidden paths a model's config names (configs are small;
# a tokenizer.json of many megabytes names none).
MAX_CONFIG_BYTES = 1 << 20
# Vocabularies: large, and never naming a file (their strings are tokens).
VOCABULARY_FILES = frozenset({"tokenizer.json", "vocab.json"})


def file_digests(folder: Path, memo_dir: Path | None = None) -> dict[str, str]:
    """sha256 of every regular file below ``folder``, by relative path.

    Hidden files are skipped (``.git``, download metadata, editor backups), except those the
    model's own JSON config names (see :func:`named_hidden_paths`): the loader reads them.
    Hashes are memoised by (absolute path, inode, size, mtime_ns, ctime_ns) in
    ``memo_dir``/file-hashes.sqlite when ``memo_dir`` is given and writable.
    """
    folder = Path(folder)
    named = named_hidden_paths(folder)
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file() and (not _is_hidden(path, folder) or _under_any(path, named))
    )
    with HashMemo(memo_dir) as memo:
        return {path.relative_to(folder).as_posix(): memo.digest(path) for path in files}


def named_hidden_paths(folder: Path) -> set[Path]:
    """The hidden files and folders below ``folder`` that its JSON files name.

    sentence-transformers reads a module from the folder ``modules.json`` gives as its
    ``path``, and a config may point to another file of the folder: if that is a hidden one
    (``.pooling``), it is as much the model as ``1_Pooling``. Every string of every JSON file
    of up to ``MAX_CONFIG_BYTES`` (hidden ones and vocabularies skipped) that names an
    existing hidden path inside the folder counts.
    """
    named: set[Path] = set()
    root = folder.resolve()
    for config in folder.rglob("*.json"):
        if config.name in VOCABULARY_FILES or _is_hidden(config, folder) or not config.is_file():
            continue
        try:
            if config.stat().st_size > MAX_CONFIG_BYTES:
                continue
            data = json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for text in _strings(data):
            relative = text.strip().removeprefix("./")
            if not any(p.startswith(".") and p not in (".", "..") for p in relative.split("/")):
                continue  # names no hidden path (most strings: a vocabulary's tokens)
            for base in {folder, config.parent}:
                target = base / relative
                try:
                    if target.exists() and target.resolve().is_relative_to(root):
                        named.add(target)
                except (OSError, RuntimeError, ValueError):  # a loop, a NUL byte
                    continue
    return named


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        if data and "\n" not in data and len(data) < 256:
            yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)


def _is_hidden(path: Path, folder: Path) -> bool:
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return False
    return any(part.startswith(".") and part not in (".", "..") for part in parts)


def _under_any(path: Path, roots: set[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)
