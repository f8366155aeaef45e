"""The stand-ins kept between test runs, in pytest's cache, under a key of what builds them.

Training the stand-ins' tokenizers and building their folders takes seconds per test process
(sentencepiece, then transformers' conversion), paid again by every xdist worker of every run.
A build is kept under a key hashed from everything it depends on: the two build scripts, the
packaged books they train on, and the versions of the libraries that write the files. Each
test session gets its own copy, so nothing a test writes reaches the kept build.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILT_BY = ("benchmarks/standin_tokenizers.py", "benchmarks/make_seed_standins.py")
BOOKS = Path("pytest_niah", "data", "corpus")
LIBRARIES = (
    "tokenizers",
    "sentencepiece",
    "transformers",
    "sentence-transformers",
    "torch",
    "safetensors",
)


def build_key(repo: Path = REPO) -> str:
    """A hash of the scripts, the books and the library versions a stand-in is built with."""
    digest = hashlib.sha256()
    for name in BUILT_BY:
        digest.update((repo / name).read_bytes())
    books = repo / BOOKS
    for path in sorted(p for p in books.rglob("*") if p.is_file()):
        digest.update(path.relative_to(books).as_posix().encode())
        digest.update(path.read_bytes())
    for library in LIBRARIES:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}=={version}\n".encode())
    return digest.hexdigest()[:20]


def kept_build(
    cache: Path | None, name: str, build: Callable[[Path], object], session_dir: Path
) -> Path:
    """``session_dir/name``: a copy of ``build``'s folder, built once per key under ``cache``
    and copied once per session.

    ``build(folder)`` fills a folder that does not exist yet. ``cache`` is the keyed folder
    (``None``: no cache, build in place). A build is renamed into place only once finished,
    so a kept folder is always whole; of two processes that build at once, the first to rename
    wins and the other's build is dropped.
    """
    target = session_dir / name
    if target.is_dir():  # asked for again in this session: the copy made the first time
        return target
    if cache is None:
        build(target)
        return target
    kept = cache / name
    if not kept.is_dir():
        work = cache / f".{name}-{uuid.uuid4().hex}"
        try:
            build(work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        try:
            os.rename(work, kept)
        except OSError:  # another process kept its build first
            shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(kept, target)
    return target
