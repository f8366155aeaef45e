"""``pytest-niah corpus``: which books ship with pytest-niah, their checksums, and an export."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pytest_niah.cli.common import EXIT_OK
from pytest_niah.errors import CliError


def add_corpus(commands: Any) -> None:
    """Register ``corpus`` on the command parser."""
    parser = commands.add_parser(
        "corpus",
        help="list the packaged books (title, sha256) or export them to a folder",
        description=(
            "List the ten pinned public-domain books that ship with pytest-niah "
            "(--niah-corpus=packaged, the default), each checked against its pinned sha256; "
            "with --export DIR, write them there as .txt files, byte for byte the pinned "
            "Project Gutenberg files (licence header and footer included)."
        ),
    )
    parser.add_argument(
        "--export", metavar="DIR", help="write the books into DIR (created if missing)"
    )
    parser.set_defaults(handler=run_corpus)


def run_corpus(args: argparse.Namespace) -> int:
    """List the packaged books, or export them."""
    from pytest_niah.inputs.packaged_corpus import describe, export

    if args.export is not None:
        if not args.export.strip():
            raise CliError(
                "--export: the folder is empty (an unset variable?), so nothing would be written",
                "give the folder to write the books into, e.g. --export books",
            )
        written = export(args.export)
        for path in written:
            sys.stdout.write(f"{path}\n")
        sys.stdout.write(f"{len(written)} books written to {args.export}\n")
        return EXIT_OK
    books = describe()
    width = max(len(book.file) for book in books)
    for book in books:
        sys.stdout.write(
            f"{book.file:<{width}}  {book.sha256}  {book.bytes:>9,} bytes  "
            f"{book.title} ({book.author}, Project Gutenberg #{book.gutenberg_id})\n"
        )
    total = sum(book.bytes for book in books)
    sys.stdout.write(f"{len(books)} books, {total:,} bytes, every one matches its pinned sha256\n")
    return EXIT_OK
