"""Haystack sources: the pinned public-domain set, packaged or downloaded, or a folder.

:func:`load_corpus` turns a ``--niah-corpus`` spec into a corpus: folders are read here,
the pinned set ships inside the package (``packaged``, the default, read by
:mod:`pytest_niah.inputs.packaged_corpus`) or is downloaded and verified (``gutenberg``, by
:mod:`pytest_niah.inputs.gutenberg`). Books, corpora and file reading live in
:mod:`pytest_niah.inputs.books` (re-exported here), text cleaning in
:mod:`pytest_niah.inputs.text`. Imports go one way: corpus -> packaged_corpus -> gutenberg
-> books.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from pytest_niah.config.vocabulary import CORPUS_WORDS, GUTENBERG, PACKAGED
from pytest_niah.errors import CorpusError
from pytest_niah.inputs.books import Book, Corpus, read_book, read_files
from pytest_niah.inputs.gutenberg import DEFAULT_BASE_URL, ENV_BASE_URL, gutenberg_corpus
from pytest_niah.inputs.packaged_corpus import packaged_corpus

__all__ = [
    "Book",
    "Corpus",
    "CorpusError",
    "load_corpus",
    "load_folder",
    "read_book",
    "read_files",
]

_FOLDER_FIX = (
    f"pass --niah-corpus a folder of UTF-8 .txt files, or --niah-corpus={PACKAGED} "
    "for the pinned public-domain books shipped with pytest-niah."
)
# What each word of --niah-corpus gives, for the suggestion on a misspelt one.
_WORD_MEANS = {
    PACKAGED: "reads the pinned public-domain books shipped with pytest-niah",
    GUTENBERG: "downloads the pinned public-domain books",
}


# --------------------------------------------------------------------------- local folders


def load_folder(path: str | os.PathLike[str]) -> Corpus:
    """Load every ``*.txt`` file (non-recursive, dotfiles skipped) of a folder.

    Results are cached in-process, keyed by the absolute file paths, sizes and mtimes (ns),
    so loading an unchanged folder again returns the same books without re-reading.

    Args:
        path: The folder.

    Returns:
        A corpus named ``str(path)`` with books sorted by name.

    Raises:
        CorpusError: If the folder is missing, not a folder, holds no ``.txt`` file,
            holds only empty books, or a file cannot be read or decoded.
    """
    folder = Path(os.fspath(path)).expanduser()
    books = read_files(_book_files(folder))
    if not any(book.text.strip() for book in books):
        raise CorpusError(
            f"The .txt files in corpus folder {folder} hold no text once the Project "
            "Gutenberg boilerplate is removed",
            _FOLDER_FIX,
        )
    return Corpus(name=os.fspath(path), books=books)


def _book_files(folder: Path) -> list[Path]:
    if not folder.exists():
        raise CorpusError(f"Corpus folder {folder} does not exist", _FOLDER_FIX)
    if not folder.is_dir():
        raise CorpusError(f"Corpus path {folder} is not a folder", _FOLDER_FIX)
    try:
        files = [
            entry
            for entry in folder.iterdir()
            if entry.suffix.lower() == ".txt" and not entry.name.startswith(".") and entry.is_file()
        ]
    except OSError as exc:
        raise CorpusError(f"Cannot list corpus folder {folder}: {exc}", _FOLDER_FIX) from exc
    if not files:
        raise CorpusError(f"Corpus folder {folder} holds no .txt files", _FOLDER_FIX)
    return files


def load_corpus(
    spec: str | os.PathLike[str],
    *,
    cache_dir: Path | None = None,
    base_url: str | None = None,
) -> Corpus:
    """Load a corpus from its command-line spec.

    Args:
        spec: ``"packaged"`` for the pinned books shipped inside the package,
            ``"gutenberg"`` for the same books downloaded (a local folder of either
            name must be given as ``./packaged`` or ``./gutenberg``), otherwise a folder
            path.
        cache_dir: Cache root for downloads; :func:`default_cache_dir` when None.
        base_url: Download server root; else ``$NIAH_GUTENBERG_URL``, else
            :data:`pytest_niah.inputs.gutenberg.DEFAULT_BASE_URL`.

    Returns:
        The corpus.

    Raises:
        CorpusError: If the corpus cannot be loaded.
    """
    if isinstance(spec, str) and spec == PACKAGED:
        return packaged_corpus()
    if isinstance(spec, str) and spec == GUTENBERG:
        url = base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        return gutenberg_corpus(cache_dir, url)
    _did_you_mean_a_word(spec)
    return load_folder(spec)


def _did_you_mean_a_word(spec: str | os.PathLike[str]) -> None:
    """Refuse a missing folder whose name looks like a misspelt ``packaged`` or ``gutenberg``.

    Raises:
        CorpusError: If the folder does not exist and its name is close to one of them.
    """
    folder = Path(os.fspath(spec)).expanduser()
    name = folder.name.lower()
    if folder.exists() or not name:
        return
    for word in difflib.get_close_matches(name, CORPUS_WORDS, n=1, cutoff=0.7):
        raise CorpusError(
            f"Corpus folder {folder} does not exist",
            f"did you mean --niah-corpus={word}? It {_WORD_MEANS[word]}; otherwise pass "
            "--niah-corpus a folder of UTF-8 .txt files.",
        )
