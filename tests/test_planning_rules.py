"""Planning's rules that need no model: the books split on a thread while the probe runs."""

from __future__ import annotations

import threading

import pytest

from pytest_niah.experiment.probe_step import books_split_meanwhile
from pytest_niah.inputs.books import Book, Corpus


def corpus() -> Corpus:
    books = tuple(
        Book(name=f"b{i}", text="One sentence here. Another one there.", source="", sha256=str(i))
        for i in range(3)
    )
    return Corpus(name="tiny", books=books)


def test_every_book_is_split_when_the_body_ends_and_the_body_ran_beside_it():
    books = corpus()
    seen: list[str] = []
    with books_split_meanwhile(books):
        seen.append(threading.current_thread().name)
    assert seen == [threading.main_thread().name]
    assert all("sentences" in vars(book) for book in books.books)
    assert books.books[0].sentences == ("One sentence here.", "Another one there.")
    assert not any(t.name == "niah-sentences" for t in threading.enumerate())


def test_a_failing_body_still_waits_for_the_thread():
    books = corpus()
    with pytest.raises(RuntimeError), books_split_meanwhile(books):
        raise RuntimeError("the probe failed")
    assert not any(t.name == "niah-sentences" for t in threading.enumerate())
