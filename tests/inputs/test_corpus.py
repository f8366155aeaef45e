"""Tests for pytest_niah.inputs.corpus: local folders of books and the shared books folder.

Downloads are tested in test_corpus_download.py, text cleaning and sentences in
test_text.py, the packaged books in test_packaged_corpus.py.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from pytest_niah.inputs import corpus
from pytest_niah.inputs.corpus import Book, Corpus, CorpusError, load_corpus, load_folder, read_book
from pytest_niah.inputs.gutenberg import (
    gutenberg_books,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY_CORPUS = REPO_ROOT / "fixtures" / "corpus" / "tiny"
# The pinned books as a folder come from the repo conftest's `shared_corpus_dir` fixture
# (the packaged books, exported once per session).


# --------------------------------------------------------------------------- books folder


@pytest.fixture(scope="module")
def shared_corpus(shared_corpus_dir: Path) -> Corpus:
    return load_folder(shared_corpus_dir)


def test_shared_folder_books(shared_corpus: Corpus) -> None:
    pinned = {b.file[:-4]: b for b in gutenberg_books()}
    assert [b.name for b in shared_corpus.books] == sorted(pinned)
    for book in shared_corpus.books:
        assert book.sha256 == pinned[book.name].sha256
        assert len(book.text) >= 300_000, book.name
        assert "\r" not in book.text
        assert not book.text.startswith("\ufeff")
    assert shared_corpus.total_chars == sum(len(b.text) for b in shared_corpus.books)


@pytest.mark.parametrize("edge", ["head", "tail"])
def test_shared_boilerplate_stripped(shared_corpus: Corpus, edge: str) -> None:
    for book in shared_corpus.books:
        piece = book.text[:2000] if edge == "head" else book.text[-2000:]
        for marker in ("PROJECT GUTENBERG LICENSE", "*** START", "*** END", "***START", "***END"):
            assert marker not in piece.upper(), (book.name, marker)
        assert "end of the project gutenberg" not in piece.lower(), book.name
        assert "produced by" not in piece.lower()[:300], book.name


def test_shared_sentences_are_reasonable(shared_corpus: Corpus) -> None:
    for book in shared_corpus.books:
        sentences = book.sentences
        assert len(sentences) > 2000, book.name
        lengths = [len(s.split()) for s in sentences]
        typical = sum(3 <= n <= 80 for n in lengths) / len(lengths)
        assert typical > 0.85, (book.name, typical)
        assert all(s == s.strip() and "\n" not in s and "  " not in s for s in sentences)


def test_shared_folder_load_is_cached(shared_corpus: Corpus, shared_corpus_dir: Path) -> None:
    again = load_folder(shared_corpus_dir)
    assert again.books is shared_corpus.books  # served from the in-process cache


# --------------------------------------------------------------------------- local folders


def test_tiny_fixture_corpus() -> None:
    tiny = load_folder(TINY_CORPUS)
    assert [b.name for b in tiny.books] == ["harbour", "orchard"]
    harbour = tiny.books[0]
    assert harbour.text.startswith("THE HARBOUR")
    assert harbour.text.endswith("onto the table of the customs house.")
    assert "Mr. Abernethy stood on the quay" in " ".join(harbour.sentences)
    assert harbour.source == str((TINY_CORPUS / "harbour.txt").absolute())


def test_read_book_bom_crlf_and_markers(tmp_path: Path) -> None:
    raw = (
        "\ufeffHeader\r\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\r\n\r\n"
        "Body line one.\r\nBody line two.\rThree.\r\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK X ***\r\n"
    ).encode()
    path = tmp_path / "x_book.txt"
    path.write_bytes(raw)

    book = read_book(path)

    assert book == Book(
        name="x_book",
        text="Body line one.\nBody line two.\nThree.",
        source=str(path),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def test_non_utf8_file_names_path_and_offset(tmp_path: Path) -> None:
    (tmp_path / "cafe.txt").write_bytes(b"caf\xe9")
    with pytest.raises(CorpusError) as info:
        load_folder(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "cafe.txt") in message
    assert "offset 3" in message
    assert "UTF-8" in message


def test_non_utf8_offset_counts_the_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfab\xff")
    with pytest.raises(CorpusError, match="offset 5"):
        read_book(path)


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("not a book", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nested.txt").write_text("Nested.", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"no \.txt files") as info:
        load_folder(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_missing_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(CorpusError, match="does not exist") as info:
        load_folder(missing)
    assert str(missing) in str(info.value)
    assert "--niah-corpus" in str(info.value)


@pytest.mark.parametrize("spec", ["gutenburg", "Gutenberg", "guttenberg", "gutenbrg/"])
def test_a_misspelt_gutenberg_suggests_gutenberg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.chdir(tmp_path)
    for as_given in (spec, str(tmp_path / spec)):
        with pytest.raises(CorpusError) as info:
            load_corpus(as_given)
        assert info.value.hint.startswith("did you mean --niah-corpus=gutenberg?")
        message = str(info.value)
        assert "does not exist. Fix: did you mean --niah-corpus=gutenberg?" in message
        assert str(Path(as_given)) in message


def test_no_gutenberg_suggestion_for_other_names_or_existing_folders(tmp_path: Path) -> None:
    with pytest.raises(CorpusError) as info:
        load_corpus(str(tmp_path / "my-books"))
    assert "did you mean" not in str(info.value)
    (tmp_path / "gutenburg").mkdir()
    with pytest.raises(CorpusError, match=r"no \.txt files") as info:
        load_corpus(str(tmp_path / "gutenburg"))
    assert "did you mean" not in str(info.value)


def test_path_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "book.txt"
    file.write_text("A book.", encoding="utf-8")
    with pytest.raises(CorpusError, match="not a folder") as info:
        load_folder(file)
    assert str(file) in str(info.value)


def test_folder_of_empty_books(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("\n\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="no text") as info:
        load_folder(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_folder_selection_and_order(tmp_path: Path) -> None:
    for name in ("b.txt", "a.txt", "c.TXT", ".hidden.txt", "d.md", ".x.txt.part"):
        (tmp_path / name).write_text(f"Text of {name}.", encoding="utf-8")
    (tmp_path / "dir.txt").mkdir()

    loaded = load_folder(str(tmp_path))

    assert loaded.name == str(tmp_path)
    assert [b.name for b in loaded.books] == ["a", "b", "c"]


def test_symlinked_book_keeps_link_name(tmp_path: Path) -> None:
    (tmp_path / "books").mkdir()
    (tmp_path / "books" / "alias.txt").symlink_to(TINY_CORPUS / "orchard.txt")
    loaded = load_folder(tmp_path / "books")
    assert [b.name for b in loaded.books] == ["alias"]
    assert loaded.books[0].text == load_folder(TINY_CORPUS).books[1].text


def test_folder_cache_sees_changes(tmp_path: Path) -> None:
    book = tmp_path / "a.txt"
    book.write_text("First version.", encoding="utf-8")
    first = load_folder(tmp_path)
    assert load_folder(tmp_path).books is first.books

    book.write_text("Second version!", encoding="utf-8")
    os.utime(book, ns=(10**18, 10**18))
    second = load_folder(tmp_path)

    assert second.books[0].text == "Second version!"


def test_corpus_fingerprint_and_totals() -> None:
    a = Book(name="a", text="Alpha.", source="a.txt", sha256="1" * 64)
    b = Book(name="b", text="Beta beta.", source="b.txt", sha256="2" * 64)
    first = Corpus(name="x", books=(a, b))
    assert first.fingerprint() == Corpus(name="y", books=(b, a)).fingerprint()
    assert first.fingerprint() != Corpus(name="x", books=(a,)).fingerprint()
    changed = Book(name="b", text="Beta beta.", source="b.txt", sha256="3" * 64)
    assert first.fingerprint() != Corpus(name="x", books=(a, changed)).fingerprint()
    assert first.total_chars == 16


def test_book_sentences_are_cached_on_frozen_book() -> None:
    book = Book(name="a", text="One. Two.", source="a.txt", sha256="0" * 64)
    assert book.sentences == ("One.", "Two.")
    assert book.sentences is book.sentences
    with pytest.raises(AttributeError):
        book.text = "x"  # type: ignore[misc]


def test_module_import_is_light() -> None:
    assert corpus.__name__ == "pytest_niah.inputs.corpus"
    import subprocess
    import sys

    code = (
        "import sys, pytest_niah.inputs.corpus; "
        "print(sorted(m for m in ('filelock', 'platformdirs', 'urllib.request', 'numpy') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert result.stdout.strip() == "[]"
