"""Plain-text cleaning for haystack books: line endings, Gutenberg boilerplate, sentences.

Pure functions of strings; nothing here reads files.
"""

from __future__ import annotations

import re

__all__ = ["normalize_text", "split_sentences", "strip_gutenberg_boilerplate"]

# --------------------------------------------------------------------------- text cleaning

_START_RE = re.compile(
    r"^[ \t]*\*{3}[ \t]*START OF (?:THE|THIS) PROJECT GUTENBERG\b.*$", re.M | re.I
)
_END_RE = re.compile(r"^[ \t]*\*{3}[ \t]*END OF (?:THE|THIS) PROJECT GUTENBERG\b.*$", re.M | re.I)
# Pre-2000s files open with a licence that ends at this line ("*END*THE SMALL PRINT! ...").
_SMALL_PRINT_END_RE = re.compile(r"^[ \t]*\*END\*?[ \t]*THE SMALL PRINT\b.*$", re.M | re.I)
_END_OF_BOOK_RE = re.compile(
    r"^[ \t]*End of (?:the )?Project Gutenberg(?:['’]s)?\b.*$", re.M | re.I
)
_CREDITS_RE = re.compile(
    r"^[ \t]*(?:Produced by|E-?text prepared by|This e-?text was prepared by|Transcribed by)\b",
    re.I,
)
# One or more blank (whitespace-only) lines.
_PARAGRAPH_BREAK_RE = re.compile(r"\n(?:[^\S\n]*\n)+")


def normalize_text(raw: str) -> str:
    r"""Strip a leading BOM and turn CRLF and bare CR line endings into ``"\n"``.

    Args:
        raw: Decoded text.

    Returns:
        The normalized text.
    """
    if raw.startswith("\ufeff"):
        raw = raw[1:]
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def strip_gutenberg_boilerplate(text: str) -> str:
    r"""Keep only the book between the Project Gutenberg start and end markers.

    Recognized start markers: ``*** START OF THIS/THE PROJECT GUTENBERG EBOOK ...``
    (with or without a space after ``***``) and, for old files, the
    ``*END*THE SMALL PRINT!`` line that closes a licence header. End markers:
    ``*** END OF THIS/THE PROJECT GUTENBERG EBOOK ...``, else an
    ``End of (the) Project Gutenberg...`` line. When a marker is found, a leading
    ``Produced by ...`` credits paragraph and a trailing ``End of the Project
    Gutenberg EBook of ...`` paragraph are dropped too, and surrounding whitespace is
    stripped.

    Args:
        text: Text with ``"\n"`` line endings (see :func:`normalize_text`).

    Returns:
        The book text, or ``text`` unchanged when it has no marker.
    """
    end_match = _END_RE.search(text)
    limit = end_match.start() if end_match else len(text)
    start = _body_start(text, limit)
    if end_match is None:
        fallback = _END_OF_BOOK_RE.search(text, start or 0)
        if fallback is not None:
            end_match, limit = fallback, fallback.start()
    if start is None and end_match is None:
        return text
    body = _drop_credits(text[start or 0 : limit].strip())
    return _drop_end_line(body).strip()


def _body_start(text: str, limit: int) -> int | None:
    """Return where the book starts (after the last header marker), or None."""
    ends = [m.end() for m in _START_RE.finditer(text, 0, limit)]
    # The small print sits at the end of some files (after the book); only a copy in
    # the first half can be the header.
    ends += [m.end() for m in _SMALL_PRINT_END_RE.finditer(text, 0, min(limit, len(text) // 2))]
    return max(ends) if ends else None


def _drop_credits(body: str) -> str:
    if not _CREDITS_RE.match(body):
        return body
    parts = _PARAGRAPH_BREAK_RE.split(body, maxsplit=1)
    return parts[1] if len(parts) == 2 else ""


def _drop_end_line(body: str) -> str:
    breaks = list(_PARAGRAPH_BREAK_RE.finditer(body))
    tail_start = breaks[-1].end() if breaks else 0
    if _END_OF_BOOK_RE.match(body, tail_start):
        return body[:tail_start]
    return body


# --------------------------------------------------------------------------- sentences

_CLOSERS = "\"'”’»)]_"
_OPENERS = "\"'“‘«([_"
# Terminal punctuation, optional closers, then the single space left by collapsing.
_BOUNDARY_RE = re.compile(f"[.!?][{re.escape(_CLOSERS)}]* ")
# Titles and Latin short forms that are almost never sentence ends.
_ABBREVIATIONS = frozenset(
    (
        "Mr", "Mrs", "Ms", "Messrs", "Mme", "Mlle", "Mons", "Dr", "St", "Ste", "Mt", "Prof",
        "Rev", "Revd", "Hon", "Gen", "Col", "Capt", "Lieut", "Lt", "Sgt", "Maj", "Gov", "Sen",
        "Jr", "Sr", "Gr", "Lat", "cf", "Cf", "viz", "vs", "e.g", "i.e",
    )
)  # fmt: skip
# Short forms that end a sentence as often as not ("No."), unless a number follows.
_NUMBER_ABBREVIATIONS = frozenset(
    (
        "No", "no", "Nos", "nos", "p", "pp", "ver", "vv", "vol", "Vol", "ch", "Ch", "chap",
        "Chap", "fig", "Fig", "art", "Art", "sect", "Sect", "l", "ll",
    )
)  # fmt: skip


def split_sentences(text: str) -> tuple[str, ...]:
    r"""Split text into sentences.

    Paragraphs are blocks separated by blank lines; inside one, whitespace runs collapse
    to single spaces. A sentence ends after ``.``, ``!`` or ``?`` (plus any closing
    quotes or brackets) when whitespace and then an uppercase letter, a digit or an
    opening quote follow; not after titles such as ``Mr.`` or single-letter initials
    (``H. G. Wells``; ``I.`` does split), nor after ``No.``/``p.``/``vol.`` when a digit
    follows. Pieces without any letter are dropped.

    Args:
        text: Text with ``"\n"`` line endings.

    Returns:
        The sentences, in order, each non-empty and stripped.
    """
    sentences: list[str] = []
    for block in _PARAGRAPH_BREAK_RE.split(text):
        paragraph = " ".join(block.split())
        if paragraph:
            sentences.extend(_split_paragraph(paragraph))
    return tuple(sentences)


def sentence_starts(paragraph: str) -> list[int]:
    """Character offsets where the sentences of one paragraph start, ``0`` first.

    The rules are :func:`split_sentences`' own; the paragraph is expected with single
    spaces (as haystacks are: sentences joined by one space).
    """
    starts = [0]
    for match in _BOUNDARY_RE.finditer(paragraph):
        end = match.end()
        if end < len(paragraph) and _is_sentence_end(paragraph, starts[-1], match.start(), end):
            starts.append(end)
    return starts


def _split_paragraph(paragraph: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(paragraph):
        end = match.end()
        if not _is_sentence_end(paragraph, start, match.start(), end):
            continue
        _append_piece(pieces, paragraph[start : end - 1])
        start = end
    _append_piece(pieces, paragraph[start:])
    return pieces


def _is_sentence_end(paragraph: str, start: int, punct: int, end: int) -> bool:
    """Whether the punctuation at ``punct`` ends a sentence (``end`` is past the space)."""
    following = paragraph[end]
    if not (following.isupper() or following in "0123456789" or following in _OPENERS):
        return False
    if paragraph[punct] != "." or end - punct != 2:
        return True  # "!", "?", or "." followed by closing quotes
    space = paragraph.rfind(" ", start, punct)
    word = paragraph[start if space < 0 else space + 1 : punct].lstrip(_OPENERS)
    if word in _ABBREVIATIONS:
        return False
    if word in _NUMBER_ABBREVIATIONS:
        return not following.isdigit()
    # Single capital initials ("H. G. Wells"), but "I." is the pronoun or a numeral.
    return not (len(word) == 1 and word.isupper() and word != "I")


def _append_piece(pieces: list[str], piece: str) -> None:
    if any(map(str.isalpha, piece)):
        pieces.append(piece)
