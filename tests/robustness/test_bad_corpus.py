"""Bad corpus folders: the run stops once, naming the folder or file and the fix.

The corpus is read when the experiment runs, before the first test, so each of these stops
the session with exit code 4 and one message (``pytest-niah could not run 'LABEL': ...``),
never a traceback and never one failure per test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_niah import NiahConfig, run_experiment
from pytest_niah.embed.lexical import LexicalEmbedder
from pytest_niah.errors import CorpusError, HaystackError
from pytest_niah.inputs.corpus import load_corpus, load_folder

REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO / "fixtures" / "robustness" / "corpus"
TINY_CORPUS = REPO / "fixtures" / "corpus" / "tiny"
FOLDER_FIX = "Fix: pass --niah-corpus a folder of UTF-8 .txt files"
LEXICAL = "lexical-tfidf"  # the label of --niah-model=lexical:tfidf


def test_empty_folder(niah_run):
    (niah_run.path / "books").mkdir()
    result = niah_run.run("--niah-corpus=books")
    niah_run.assert_stopped(
        result,
        LEXICAL,
        f"Corpus folder {niah_run.path / 'books'} holds no .txt files",
        FOLDER_FIX,
    )


def test_folder_without_txt_files(niah_run):
    books = niah_run.path / "books"
    books.mkdir()
    (books / "novel.md").write_text("# A novel\n\nIt was a dark night.\n")
    (books / ".hidden.txt").write_text("Hidden books are skipped. They hold text.\n")
    (books / "chapter.txt").mkdir()  # a folder named like a book
    result = niah_run.run("--niah-corpus=books")
    niah_run.assert_stopped(
        result, LEXICAL, f"Corpus folder {books} holds no .txt files", FOLDER_FIX
    )


def test_books_without_text(niah_run):
    folder = CORPORA / "no_text"
    result = niah_run.run(f"--niah-corpus={folder}")
    niah_run.assert_stopped(
        result, LEXICAL, f"corpus folder {folder} hold no text", "boilerplate", FOLDER_FIX
    )


def test_missing_folder_and_file_instead_of_folder(niah_run):
    result = niah_run.run("--niah-corpus=no-such-books")
    niah_run.assert_stopped(
        result,
        LEXICAL,
        f"Corpus folder {niah_run.path / 'no-such-books'} does not exist",
        FOLDER_FIX,
    )
    (niah_run.path / "book.txt").write_text("One book. Not a folder.\n")
    result = niah_run.run("--niah-corpus=book.txt")
    niah_run.assert_stopped(
        result, LEXICAL, f"Corpus path {niah_run.path / 'book.txt'} is not a folder", FOLDER_FIX
    )


def test_corpus_from_the_environment_is_named(niah_run, monkeypatch):
    monkeypatch.setenv("NIAH_CORPUS", str(niah_run.path / "env-books"))
    assert "corpus" not in niah_run.grid  # the grid leaves the corpus to the environment
    result = niah_run.run()
    niah_run.assert_stopped(
        result, LEXICAL, f"Corpus folder {niah_run.path / 'env-books'} does not exist"
    )


def test_corpus_too_small_for_the_longest_length(niah_run):
    result = niah_run.run(f"--niah-corpus={TINY_CORPUS}", "--niah-lengths=128,4096")
    niah_run.assert_stopped(
        result,
        LEXICAL,
        f"corpus '{TINY_CORPUS}' holds about",
        "too little for haystacks of 4,096 tokens",
        "add books to the folder or lower the longest --niah-lengths value",
    )


def test_corpus_too_small_with_the_real_model(niah_run):
    result = niah_run.run(
        f"--niah-corpus={TINY_CORPUS}", "--niah-lengths=4096", model="packaged-minilm"
    )
    niah_run.assert_stopped(
        result,
        "packaged-minilm",
        "too little for haystacks of 4,096 tokens",
        "--niah-lengths",
    )


def test_corpus_too_small_through_the_api():
    config = NiahConfig(model="lexical:tfidf", corpus=str(TINY_CORPUS), lengths=(4096,))
    with pytest.raises(HaystackError) as info:
        run_experiment(config, embedder=LexicalEmbedder())
    assert str(TINY_CORPUS) in str(info.value)
    assert "lower the longest --niah-lengths value" in str(info.value)


def test_non_utf8_book(niah_run):
    book = CORPORA / "non_utf8" / "cp1252_book.txt"
    result = niah_run.run(f"--niah-corpus={book.parent}")
    niah_run.assert_stopped(
        result,
        LEXICAL,
        f"Corpus file {book} is not valid UTF-8",
        "byte 0xe9 at offset 27",
        "Fix: re-save the file as UTF-8",
        "or remove it from the corpus folder",
    )


def test_non_utf8_book_through_the_api():
    book = CORPORA / "non_utf8" / "cp1252_book.txt"
    for load in (load_folder, load_corpus):
        with pytest.raises(CorpusError) as info:
            load(str(book.parent))
        assert str(book) in str(info.value)
        assert "Fix: re-save the file as UTF-8" in str(info.value)


def test_the_suggested_fix_works(niah_run):
    """Re-saving the book as UTF-8, as the message says, makes the same folder run."""
    folder = niah_run.path / "books"
    shutil.copytree(CORPORA / "non_utf8", folder)
    shutil.copy2(TINY_CORPUS / "orchard.txt", folder)
    book = folder / "cp1252_book.txt"
    niah_run.assert_stopped(niah_run.run("--niah-corpus=books"), LEXICAL, f"Corpus file {book}")
    book.write_text(book.read_bytes().decode("cp1252"), encoding="utf-8")
    result = niah_run.run("--niah-corpus=books")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


def test_every_snippet_leaks_the_answer(niah_run):
    """A corpus whose every sentence names the question's key word cannot hide a needle."""
    folder = CORPORA / "leaky"
    result = niah_run.run(f"--niah-corpus={folder}")
    niah_run.assert_stopped(
        result,
        LEXICAL,
        f"corpus '{folder}'",
        "rejected by the leak audit",
        "use other books",
    )


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        (lambda p: p.mkdir(), "holds no .txt files"),
        (lambda p: None, "does not exist"),
    ],
    ids=["empty", "missing"],
)
def test_bad_folder_through_the_api(tmp_path, setup, fragment):
    folder = tmp_path / "books"
    setup(folder)
    with pytest.raises(CorpusError) as info:
        run_experiment(NiahConfig(model="lexical:tfidf", corpus=str(folder)))
    assert f"{folder} {fragment}" in str(info.value)
    assert FOLDER_FIX in str(info.value)
