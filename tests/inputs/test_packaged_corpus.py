"""Tests for pytest_niah.inputs.packaged_corpus: the pinned books shipped inside the package.

They are the default corpus, read offline, checked against the pinned checksums, the same
text and fingerprint as the downloaded or shared books, with no licence text in a haystack.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.options import BY_NAME
from pytest_niah.errors import CorpusError
from pytest_niah.experiment import run_experiment
from pytest_niah.inputs import packaged_corpus as packaged
from pytest_niah.inputs.corpus import load_corpus, load_folder
from pytest_niah.inputs.gutenberg import PinnedBook, gutenberg_books
from pytest_niah.inputs.packaged_corpus import describe, export, packaged_corpus

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_CORPUS = REPO_ROOT.parent / "shared" / "corpus" / "gutenberg"
needs_shared = pytest.mark.skipif(
    not (SHARED_CORPUS / "manifest.json").is_file(),
    reason=f"needs ../shared beside the checkout (outside this repository): no {SHARED_CORPUS}",
)
# Words of the Project Gutenberg header, licence and footer: in every packaged file, in no
# haystack text.
LICENCE_WORDS = (
    "Project Gutenberg-tm",
    "PROJECT GUTENBERG LICENSE",
    "Project Gutenberg License",
    "Literary Archive Foundation",
    "gutenberg.org",
    "gutenberg.net",
    "SMALL PRINT",
    "START OF THE PROJECT GUTENBERG",
    "START OF THIS PROJECT GUTENBERG",
    "END OF THE PROJECT GUTENBERG",
    "END OF THIS PROJECT GUTENBERG",
)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def damaged_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the packaged books that a test may damage; the package reads it instead."""
    copy = tmp_path / "corpus"
    shutil.copytree(Path(str(packaged.DATA)), copy)
    monkeypatch.setattr(packaged, "DATA", copy)
    packaged_corpus.cache_clear()
    yield copy
    packaged_corpus.cache_clear()


# --------------------------------------------------------------------------- the default


def test_the_packaged_books_are_the_default_corpus() -> None:
    assert BY_NAME["corpus"].default == "packaged"
    assert NiahConfig(model="lexical:tfidf").corpus == "packaged"


def test_corpus_words_are_not_resolved_as_paths() -> None:
    corpus = BY_NAME["corpus"]
    assert not corpus.is_path("packaged")
    assert not corpus.is_path("gutenberg")
    assert corpus.is_path("books")
    assert corpus.is_path("./packaged")
    assert not BY_NAME["needles"].is_path("builtin")
    assert BY_NAME["needles"].is_path("needles.json")
    assert not BY_NAME["lengths"].is_path("128")


def test_load_corpus_reads_the_packaged_books_without_network_or_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    corpus = load_corpus("packaged", cache_dir=cache)
    assert corpus is packaged_corpus()  # read and checked once per process
    assert corpus.name == "packaged"
    assert [book.name for book in corpus.books] == sorted(
        Path(b.file).stem for b in gutenberg_books()
    )
    assert not cache.exists()  # nothing downloaded, nothing written


@pytest.mark.parametrize("spec", ["packged", "Packaged", "pakaged/"])
def test_a_misspelt_packaged_suggests_packaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CorpusError) as info:
        load_corpus(spec)
    assert info.value.hint.startswith("did you mean --niah-corpus=packaged? It reads")


# --------------------------------------------------------------------------- the books


def test_describe_lists_every_pinned_book_with_its_checksum() -> None:
    rows = describe()
    pinned = gutenberg_books()
    assert [row.file for row in rows] == [book.file for book in pinned]
    for row, book in zip(rows, pinned, strict=True):
        assert (row.name, row.title, row.author) == (Path(book.file).stem, book.title, book.author)
        assert (row.sha256, row.bytes, row.gutenberg_id) == (
            book.sha256,
            book.bytes,
            book.gutenberg_id,
        )
        assert 0 < row.compressed_bytes < row.bytes / 2
    # About 2.4 MB in the wheel for 7.6 MB of text.
    assert sum(row.compressed_bytes for row in rows) < 3_000_000


def test_every_packaged_file_keeps_its_licence_and_no_haystack_text_holds_any() -> None:
    corpus = packaged_corpus()
    by_name = {book.name: book for book in corpus.books}
    for pinned in gutenberg_books():
        raw = lzma.decompress((Path(str(packaged.DATA)) / f"{pinned.file}.xz").read_bytes())
        text = raw.decode("utf-8-sig")
        assert "Project Gutenberg" in text[:3000], pinned.file  # the header is shipped
        assert "START OF TH" in text.upper(), pinned.file
        assert "END OF TH" in text.upper()[-40_000:] or "SMALL PRINT" in text, pinned.file
        book = by_name[Path(pinned.file).stem]
        for words in LICENCE_WORDS:
            assert words.lower() not in book.text.lower(), (pinned.file, words)
        assert len(book.text) > 0.8 * len(text), pinned.file  # the book itself is all there


def test_export_writes_the_pinned_files_and_loads_as_the_same_corpus(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "books"
    paths = export(folder)
    assert paths == [folder / book.file for book in gutenberg_books()]
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in paths)
    for path, book in zip(paths, gutenberg_books(), strict=True):
        assert sha256(path.read_bytes()) == book.sha256
    loaded = load_folder(folder)
    assert loaded.fingerprint() == packaged_corpus().fingerprint()
    assert [b.text for b in loaded.books] == [b.text for b in packaged_corpus().books]

    stamps = [p.stat().st_mtime_ns for p in paths]
    assert export(folder) == paths  # again: the same files are kept as they are
    assert [p.stat().st_mtime_ns for p in paths] == stamps


def test_export_never_overwrites_a_different_file(tmp_path: Path) -> None:
    (tmp_path / "walden.txt").write_text("my own notes\n", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        export(tmp_path)
    assert "walden.txt" in str(info.value)
    assert "empty or new folder" in info.value.hint
    assert (tmp_path / "walden.txt").read_text(encoding="utf-8") == "my own notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["walden.txt"]  # nothing written


def test_export_to_an_unwritable_place_names_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        export(blocker / "books")
    assert "Cannot write" in str(info.value)
    assert str(blocker) in str(info.value)


@pytest.mark.parametrize("damage", ["missing", "truncated", "altered"])
def test_a_damaged_packaged_book_is_refused(damaged_data: Path, damage: str) -> None:
    target = damaged_data / "dracula.txt.xz"
    if damage == "missing":
        target.unlink()
    elif damage == "truncated":
        target.write_bytes(target.read_bytes()[:1000])
    else:
        raw = lzma.decompress(target.read_bytes()).replace(b"Dracula", b"Draculb", 1)
        target.write_bytes(lzma.compress(raw))
    for read in (describe, packaged_corpus, lambda: export(damaged_data.parent / "out")):
        with pytest.raises(CorpusError) as info:
            read()
        assert "dracula.txt" in str(info.value)
        assert "reinstall pytest-niah" in info.value.hint
    assert not (damaged_data.parent / "out").exists()


# --------------------------------------------------------------------------- the same results


@pytest.mark.integration
def test_a_run_gives_the_same_results_on_the_packaged_books_and_a_folder_of_them(
    shared_corpus_dir: Path, tmp_path: Path
) -> None:
    folders = [shared_corpus_dir]
    if (SHARED_CORPUS / "manifest.json").is_file():
        folders.append(SHARED_CORPUS)
    small = {"model": "lexical:tfidf", "lengths": (128,), "bootstrap": 50}
    small["groups"] = ("medical-02", "hobby-01")
    default = run_experiment(NiahConfig(**small), cache_dir=tmp_path / "packaged")
    assert default.corpus["name"] == "packaged"
    expected = default.to_dict()
    for index, folder in enumerate(folders):
        # A cache of its own: the results are measured again, not read back.
        got = run_experiment(
            NiahConfig(corpus=str(folder), **small), cache_dir=tmp_path / str(index)
        )
        assert got.corpus["name"] == str(folder)
        assert got.corpus["fingerprint"] == default.corpus["fingerprint"]
        actual = got.to_dict()
        for part in ("cases", "tables", "negatives", "intervals", "retrieval", "effective_lengths"):
            assert actual[part] == expected[part], (folder, part)


@needs_shared
def test_the_packaged_books_are_the_shared_books() -> None:
    shared = load_folder(SHARED_CORPUS)
    corpus = packaged_corpus()
    assert corpus.fingerprint() == shared.fingerprint()
    assert [(b.name, b.sha256, b.text) for b in corpus.books] == [
        (b.name, b.sha256, b.text) for b in shared.books
    ]


@needs_shared
def test_pinned_books_match_shared_manifest() -> None:
    manifest = json.loads((SHARED_CORPUS / "manifest.json").read_text(encoding="utf-8"))
    assert gutenberg_books() == tuple(PinnedBook(**entry) for entry in manifest["books"])
    assert len(gutenberg_books()) == 10


# --------------------------------------------------------------------------- the wheel


def test_package_data_patterns_ship_every_packaged_book() -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["pytest_niah"]
    data = REPO_ROOT / "pytest_niah" / "data" / "corpus"
    shipped = [p for p in data.iterdir() if p.is_file()]
    assert {p.name for p in shipped} >= {f"{b.file}.xz" for b in gutenberg_books()}
    for path in shipped:
        relative = path.relative_to(REPO_ROOT / "pytest_niah").as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), relative


def test_the_default_corpus_loads_with_no_shared_folder_and_no_network(tmp_path: Path) -> None:
    code = (
        "from pytest_niah.inputs.corpus import load_corpus; "
        "from pytest_niah.config.niah import NiahConfig; "
        "c = load_corpus(NiahConfig(model='lexical:tfidf').corpus); "
        "print(c.name, len(c.books), c.fingerprint())"
    )
    env = {**os.environ, "NIAH_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    env["NIAH_GUTENBERG_URL"] = "http://127.0.0.1:9/nowhere"  # a download would fail
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env=env,
    )
    assert done.stdout.split() == ["packaged", "10", packaged_corpus().fingerprint()]
    assert not (tmp_path / "cache").exists()
