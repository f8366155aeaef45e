"""``pytest-niah corpus``: the packaged books, their checksums, and an export that loads."""

from __future__ import annotations

import hashlib

import pytest

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
    assert main(["corpus", "--export", str(target)]) == 4
    err = capsys.readouterr().err
    assert err.startswith("pytest-niah: error:")
    assert "Traceback" not in err


def test_corpus_export_to_a_file_says_the_path_is_a_file_and_keeps_it(tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("mine", encoding="utf-8")
    assert main(["corpus", "--export", str(target)]) == 4
    err = capsys.readouterr().err
    assert f"Cannot export the packaged books to {target}: it is a file, not a folder" in err
    assert "Fix: give a folder" in err and len(err.splitlines()) == 1
    assert target.read_text(encoding="utf-8") == "mine"  # nothing written over it


@pytest.mark.parametrize("value", ["", "  "])
def test_corpus_export_to_an_empty_name_is_refused(tmp_path, capsys, monkeypatch, value):
    """``--export "$DIR"`` with the variable unset: refused, not a plain listing."""
    monkeypatch.chdir(tmp_path)
    assert main(["corpus", "--export", value]) == 4
    captured = capsys.readouterr()
    assert "--export: the folder is empty (an unset variable?)" in captured.err
    assert captured.out == "" and list(tmp_path.iterdir()) == []
