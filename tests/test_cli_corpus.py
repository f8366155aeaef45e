"""``pytest-niah corpus``: the packaged books, their checksums, and an export that loads."""

from __future__ import annotations

import hashlib

from pytest_niah.cli import main
from pytest_niah.inputs.corpus import load_folder
from pytest_niah.inputs.packaged_corpus import describe, packaged_corpus


def test_corpus_lists_every_packaged_book_with_its_sha256(capsys):
    assert main(["corpus"]) == 0
    out = capsys.readouterr().out
    books = describe()
    assert len(books) == 10
    for book in books:
        assert f"{book.file}" in out
        assert book.sha256 in out
    assert "10 books" in out.splitlines()[-1]


def test_corpus_export_writes_the_pinned_bytes_and_loads_as_the_packaged_corpus(tmp_path, capsys):
    target = tmp_path / "books"
    assert main(["corpus", "--export", str(target)]) == 0
    assert "10 books written" in capsys.readouterr().out
    for book in describe():
        data = (target / book.file).read_bytes()
        assert hashlib.sha256(data).hexdigest() == book.sha256
    assert load_folder(target).fingerprint() == packaged_corpus().fingerprint()


def test_corpus_export_over_a_different_file_is_one_error_line(tmp_path, capsys):
    target = tmp_path / "books"
    target.mkdir()
    (target / describe()[0].file).write_text("something else", encoding="utf-8")
    assert main(["corpus", "--export", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pytest-niah: error:")
    assert "Traceback" not in err
