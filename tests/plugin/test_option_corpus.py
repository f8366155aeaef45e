"""--niah-corpus: a folder of books; NIAH_CORPUS and niah_corpus as fallbacks (CLI > env > ini)."""

from __future__ import annotations

import re
import shutil

import pytest

SMALL = (
    "--niah-lengths=128",
    "--niah-positions=1",
    "--niah-groups=dietary-01",
    "--niah-arms=literal",
)
BOOKS = ("walden", "dracula")


@pytest.fixture
def books(niah):
    """A two-book corpus folder inside the pytester folder."""
    folder = niah.pytester.mkdir("books")
    for name in BOOKS:
        shutil.copy(niah.corpus / f"{name}.txt", folder / f"{name}.txt")
    return folder


def _used_corpus(niah, result) -> str:
    result.assert_outcomes(passed=3)
    return niah.load("r.json").config.corpus


def test_folder_is_read(niah, books):
    result = niah.run(*SMALL, f"--niah-corpus={books}", "--niah-json=r.json")
    result.assert_outcomes(passed=3)
    corpus = niah.load("r.json").corpus
    assert corpus["name"] == str(books)
    assert corpus["books"] == sorted(BOOKS)


def test_relative_folder_is_resolved_against_the_invocation_folder(niah, books):
    result = niah.run(*SMALL, "--niah-corpus=books", "--niah-json=r.json")
    assert _used_corpus(niah, result) == str(books)


def test_environment_variable_is_a_fallback(niah, books, monkeypatch):
    monkeypatch.setenv("NIAH_CORPUS", str(books))
    result = niah.run(*SMALL, "--niah-json=r.json", omit=["corpus"])
    assert _used_corpus(niah, result) == str(books)


def test_command_line_beats_environment_and_ini(niah, books, monkeypatch):
    niah.pytester.makeini(f"[pytest]\nniah_corpus = {niah.pytester.path / 'ini-books'}\n")
    monkeypatch.setenv("NIAH_CORPUS", str(niah.pytester.path / "env-books"))
    result = niah.run(*SMALL, f"--niah-corpus={books}", "--niah-json=r.json")
    assert _used_corpus(niah, result) == str(books)


def test_environment_beats_ini(niah, books, monkeypatch):
    niah.pytester.makeini(f"[pytest]\nniah_corpus = {niah.pytester.path / 'ini-books'}\n")
    monkeypatch.setenv("NIAH_CORPUS", str(books))
    result = niah.run(*SMALL, "--niah-json=r.json", omit=["corpus"])
    assert _used_corpus(niah, result) == str(books)


def test_ini_is_used_last(niah, books):
    niah.pytester.makeini(f"[pytest]\nniah_corpus = {books}\n")
    result = niah.run(*SMALL, "--niah-json=r.json", omit=["corpus"])
    assert _used_corpus(niah, result) == str(books)


def test_relative_ini_folder_is_resolved_against_the_ini_file(niah, books, monkeypatch):
    niah.pytester.makeini("[pytest]\nniah_corpus = books\n")
    monkeypatch.chdir(niah.pytester.mkdir("sub"))
    result = niah.run(*SMALL, "--niah-json=r.json", omit=["corpus"])
    result.assert_outcomes(passed=3)


def test_missing_folder_is_named_with_the_fix(niah):
    result = niah.run(*SMALL, "--niah-corpus=no-such-books")
    cause = niah.stopped(result, "lexical-tfidf")
    assert cause == (
        f"Corpus folder {niah.pytester.path / 'no-such-books'} does not exist. Fix: pass "
        "--niah-corpus a folder of UTF-8 .txt files, or --niah-corpus=packaged for the pinned "
        "public-domain books shipped with pytest-niah."
    )


def test_tiny_fixture_corpus_fills_short_haystacks(niah):
    result = niah.run(*SMALL, f"--niah-corpus={niah.tiny_corpus}", "--niah-json=r.json")
    result.assert_outcomes(passed=3)
    assert niah.load("r.json").corpus["books"] == ["harbour", "orchard"]


def test_corpus_too_small_for_a_length_says_so(niah):
    result = niah.run(*SMALL, f"--niah-corpus={niah.tiny_corpus}", "--niah-lengths=128,256")
    cause = niah.stopped(result, "lexical-tfidf")
    assert re.fullmatch(
        rf"corpus '{re.escape(str(niah.tiny_corpus))}' holds about \d+ tokens of text, too little "
        r"for haystacks of 256 tokens \(it needs at least twice that\)\. Fix: add books to the "
        r"folder or lower the longest --niah-lengths value",
        cause,
    ), cause
