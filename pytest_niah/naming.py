"""The one rule that turns a model label (or any text) into a file name.

Store folders, snapshot and baseline files, shard parts and a report's results files are all
named by :func:`label_file_name`, so two labels never share a file, on any file system.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from itertools import groupby

__all__ = [
    "MAX_LABEL_LENGTH",
    "file_slug",
    "label_char",
    "label_file_name",
    "results_file_names",
]

MAX_LABEL_LENGTH = 100
"""The longest model label: labels name files and folders, which have a length limit."""
_HASH_DIGITS = 10
_HASH_TAIL = re.compile(rf"-[0-9a-f]{{{_HASH_DIGITS}}}$")  # how a hashed name ends
_SLUG_CHARS = 60


def label_char(ch: str) -> bool:
    """A character a label may hold: a letter, a digit, ``.``, ``_`` or ``-``."""
    return ch.isalnum() or ch in "._-"


def _file_char(ch: str) -> bool:
    """A character a file name made from a label keeps: an ASCII label character."""
    return ch.isascii() and label_char(ch)


def file_slug(text: str) -> str:
    """A single, portable file name from any text.

    Every run of characters that are not ASCII label characters becomes one ``-``; leading
    and trailing ``-`` and ``.`` go (no hidden file, no ``..``); ``unnamed`` when nothing is
    left.
    """
    runs = ("".join(run) if keep else "-" for keep, run in groupby(text, key=_file_char))
    return "".join(runs).strip("-.") or "unnamed"


def label_file_name(label: str) -> str:
    """The name every file and folder named after a model label is built from.

    The label itself when it is a plain name: at most :data:`MAX_LABEL_LENGTH` lowercase
    ASCII letters, digits, ``.``, ``_`` and ``-`` (not first or last), not ending like a
    hash (``-`` and ten hex digits). Any other label gets a readable slug (at most
    :data:`_SLUG_CHARS` characters) plus ``-`` and ten hex digits of the label's sha256. So
    the rule is one-to-one even where file names ignore case (``Prod`` and ``prod``, macOS
    and Windows): plain names are lowercase and never end like a hash, and every hashed name
    does; no name leaves its folder (``.``, ``..``, ``a/b``), and none is longer than 71
    characters.
    """
    plain = (
        len(label) <= MAX_LABEL_LENGTH
        and label == label.lower()
        and file_slug(label) == label
        and not _HASH_TAIL.search(label)
    )
    if plain:
        return label
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{file_slug(label)[:_SLUG_CHARS]}-{digest[:_HASH_DIGITS]}"


def results_file_names(labels: Sequence[str]) -> list[str]:
    """A report's results files: ``results.json`` for one model, else one per label.

    ``results.<name>.json`` with the label's :func:`label_file_name`: the same name for a
    label whatever the other labels are or their order, and distinct for distinct labels
    even where file names ignore case.
    """
    if len(labels) == 1:
        return ["results.json"]
    return [f"results.{label_file_name(label)}.json" for label in labels]
