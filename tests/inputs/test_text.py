"""Text cleaning and sentence splitting of books (pytest_niah.inputs.text)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_niah.inputs.text import normalize_text, split_sentences, strip_gutenberg_boilerplate

# --------------------------------------------------------------------------- text cleaning


def test_normalize_text() -> None:
    assert normalize_text("\ufeffa\r\nb\rc\nd") == "a\nb\nc\nd"
    assert normalize_text("a\r\r\nb") == "a\n\nb"
    assert normalize_text("x\ufeff") == "x\ufeff"


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (
            "*** START OF THIS PROJECT GUTENBERG EBOOK FOO ***",
            "*** END OF THIS PROJECT GUTENBERG EBOOK FOO ***",
        ),
        (
            "*** START OF THE PROJECT GUTENBERG EBOOK FOO ***",
            "*** END OF THE PROJECT GUTENBERG EBOOK FOO ***",
        ),
        (
            "***START OF THE PROJECT GUTENBERG EBOOK FOO***",
            "***END OF THE PROJECT GUTENBERG EBOOK FOO***",
        ),
        (
            "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*",
            "End of the Project Gutenberg Etext of Foo",
        ),
    ],
)
def test_strip_marker_variants(start: str, end: str) -> None:
    text = (
        f"Title: Foo\n\nSome licence text.\n{start}\n\n\n\nProduced by Someone\nand Others\n\n\n"
        f"FOO\n\nIt began.\n\nIt ended.\n\n\n\nEnd of Project Gutenberg’s Foo, by Bar\n\n{end}\n\n"
        "*** START: FULL LICENSE ***\nTHE FULL PROJECT GUTENBERG LICENSE\n"
    )
    assert strip_gutenberg_boilerplate(text) == "FOO\n\nIt began.\n\nIt ended."


def test_strip_small_print_at_end_is_not_a_start() -> None:
    text = (
        "*** START OF THE PROJECT GUTENBERG EBOOK FOO ***\nBody.\n"
        "*** END OF THE PROJECT GUTENBERG EBOOK FOO ***\n"
        "***START**THE SMALL PRINT!**FOR PUBLIC DOMAIN EBOOKS**START***\nlegal\n"
        "*END THE SMALL PRINT! FOR PUBLIC DOMAIN EBOOKS*Ver.02/11/02*END*\n"
    )
    assert strip_gutenberg_boilerplate(text) == "Body."


def test_strip_without_markers_is_identity() -> None:
    text = "Produced by nobody.\n\nA plain text about the start of the project.\n"
    assert strip_gutenberg_boilerplate(text) == text
    assert strip_gutenberg_boilerplate("") == ""


def test_strip_keeps_only_start_when_no_end() -> None:
    text = "licence\n*** START OF THIS PROJECT GUTENBERG EBOOK FOO ***\nBody one.\nBody two.\n"
    assert strip_gutenberg_boilerplate(text) == "Body one.\nBody two."


# --------------------------------------------------------------------------- sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", ("One.", "Two!", "Three?", "Four")),
        (
            "Mr. Darcy met Mrs. Bennet and Dr. Seward on St. James Street. They talked.",
            ("Mr. Darcy met Mrs. Bennet and Dr. Seward on St. James Street.", "They talked."),
        ),
        ("“Mr. Holmes,” said he. “Come in.”", ("“Mr. Holmes,” said he.", "“Come in.”")),
        ("He read H. G. Wells. Then he slept.", ("He read H. G. Wells.", "Then he slept.")),
        ("“Stop!” he cried. “Now!” She ran.", ("“Stop!” he cried.", "“Now!”", "She ran.")),
        ('He said "go." Then left.', ('He said "go."', "Then left.")),
        ("(It was late.) Nobody came.", ("(It was late.)", "Nobody came.")),
        ("See No. 5 above. No. It is not.", ("See No. 5 above.", "No.", "It is not.")),
        (
            "Chapter 1. It was 1815. 1816 was worse.",
            ("Chapter 1.", "It was 1815.", "1816 was worse."),
        ),
        ("He stopped. and went on. Slowly.", ("He stopped. and went on.", "Slowly.")),
        ("Said I. Then I left.", ("Said I.", "Then I left.")),
        ("e.g. this one. Etc.", ("e.g. this one.", "Etc.")),
        ("Wait... What? Fine.", ("Wait...", "What?", "Fine.")),
        ("Ünter den Linden. Élan vital.", ("Ünter den Linden.", "Élan vital.")),
        ("The end.\n\n* * * * *\n\n1. 2. 3.\n\nNext part", ("The end.", "Next part")),
        ("", ()),
        ("   \n\n  ", ()),
    ],
)
def test_split_sentences_examples(text: str, expected: tuple[str, ...]) -> None:
    assert split_sentences(text) == expected


def test_split_sentences_paragraphs() -> None:
    text = (
        "CHAPTER I\n\nIt was a dark\nand stormy   night\twithout\n  an end\n \n"
        "Paragraph two begins. It ends here\n\n\n\nThree."
    )
    assert split_sentences(text) == (
        "CHAPTER I",
        "It was a dark and stormy night without an end",
        "Paragraph two begins.",
        "It ends here",
        "Three.",
    )


_ALPHABET = st.sampled_from(
    [*"aAbBzZ019 .!?\"'“”‘’()[]_-,;:\n\t", "É", "ß", "²", "\xa0", "\u2028", "Mr", "Mrs", "No"]
)
texts = st.lists(_ALPHABET, max_size=80).map("".join)


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    remaining = iter(big)
    return all(word in remaining for word in small)


@given(texts)
def test_split_sentences_properties(text: str) -> None:
    pieces = split_sentences(text)
    assert all(piece and piece == piece.strip() for piece in pieces)
    assert all(any(ch.isalpha() for ch in piece) for piece in pieces)
    assert all("\n" not in piece for piece in pieces)
    words = [word for piece in pieces for word in piece.split()]
    assert _is_subsequence(words, text.split())
    for piece in pieces:
        assert split_sentences(piece) == (piece,)  # a piece never splits further


@given(texts)
def test_split_sentences_single_paragraph_round_trip(text: str) -> None:
    paragraph = text.replace("\n", " ")
    tokens = paragraph.split()
    pieces = split_sentences(paragraph)
    if all(any(ch.isalpha() for ch in token) for token in tokens):
        assert " ".join(pieces) == " ".join(tokens)


def test_split_sentences_handles_a_large_text() -> None:
    # Speed is measured by the benchmarks, not asserted here (noisy machines).
    text = ("Mr. Smith went to Washington. “Did he?” she asked! It was 1901. " * 5 + "\n\n") * 2000
    pieces = split_sentences(text)
    assert len(pieces) == 2000 * 5 * 3
