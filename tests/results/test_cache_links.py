"""Nothing inside the cache folder is written through a symbolic link.

Found: a link in the cache's ``servers/`` folder made the next served run replace the
link's target (``write_atomic`` followed links), so anyone who can write into a shared or
restored cache could make a run overwrite any file the user can write.
"""

from __future__ import annotations

import os
from pathlib import Path

import niah_synthetic as synthetic
import pytest

from pytest_niah import run_experiment
from pytest_niah.config.cache_policy import OWN_ENTRIES, RESULTS_FOLDER, CachePolicy
from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.config.vocabulary import GUTENBERG
from pytest_niah.embed.file_hashes import MEMO_FILE
from pytest_niah.embed.server_fingerprint import REGISTRY_FOLDER
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import CacheError, NiahError
from pytest_niah.experiment.results_cache import keep_results
from pytest_niah.files import LinkRefused, write_atomic
from pytest_niah.haystacks.sentence_counts import SentenceCounts, counts_file
from pytest_niah.results.niah_results import NiahResults

PRECIOUS = b"the user's own file\n"

# Every kind of entry a run writes under the cache root: a file in each subfolder, the
# subfolder itself, and the root's own files (with their SQLite and lock companions).
PLANTED = [
    f"{REGISTRY_FOLDER}/abc.json",
    f"{REGISTRY_FOLDER}/abc.json.lock",
    REGISTRY_FOLDER,
    f"{RESULTS_FOLDER}/abc.json",
    RESULTS_FOLDER,
    CACHE_FILE,
    f"{CACHE_FILE}-wal",
    f"{CACHE_FILE}.lock",
    MEMO_FILE,
    "sentence-counts/abc.npz",
    "sentence-counts",
    f"{GUTENBERG}/1342.txt",
    f"{GUTENBERG}/.lock",
]


def plant(root: Path, entry: str, tmp_path: Path) -> Path:
    """A link at ``entry`` under ``root`` to a precious file (or folder holding one)."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    precious = outside / "precious.txt"
    precious.write_bytes(PRECIOUS)
    link = root / entry
    link.parent.mkdir(parents=True, exist_ok=True)
    is_folder = "/" not in entry and "." not in entry
    link.symlink_to(outside if is_folder else precious, target_is_directory=is_folder)
    return precious


def test_the_policy_knows_every_entry_the_stages_write():
    # Each stage names its own entry; the policy's list must hold them all.
    for name in (REGISTRY_FOLDER, RESULTS_FOLDER, CACHE_FILE, MEMO_FILE, GUTENBERG):
        assert name.startswith(OWN_ENTRIES)
    assert counts_file(Path("r"), "t", "c").parent.name in OWN_ENTRIES  # type: ignore[union-attr]


@pytest.mark.parametrize("entry", PLANTED)
def test_a_link_anywhere_the_cache_writes_is_refused_before_work(tmp_path, entry):
    root = tmp_path / "cache"
    precious = plant(root, entry, tmp_path)
    with pytest.raises(LinkRefused) as caught:
        CachePolicy(root).check_links()
    assert str(root / entry) in caught.value.problem
    assert "--niah-cache-dir" in caught.value.hint
    assert precious.read_bytes() == PRECIOUS


def test_the_cache_root_itself_may_be_a_link_and_other_files_are_not_its_business(tmp_path):
    real = tmp_path / "real"
    (real / RESULTS_FOLDER).mkdir(parents=True)
    (real / "notes").symlink_to(tmp_path)  # not something a run writes
    root = tmp_path / "cache"
    root.symlink_to(real, target_is_directory=True)
    CachePolicy(root).check_links()
    CachePolicy(tmp_path / "missing").check_links()


def test_a_run_refuses_a_planted_link_before_any_work(tmp_path, one_group_config):
    root = tmp_path / "cache"
    precious = plant(root, f"{REGISTRY_FOLDER}/abc.json", tmp_path)
    with pytest.raises(NiahError, match="symbolic link inside the cache folder"):
        run_experiment(one_group_config, cache_dir=root, progress=False)
    assert precious.read_bytes() == PRECIOUS
    assert not (root / RESULTS_FOLDER).exists()


def test_write_atomic_inside_a_cache_replaces_a_linked_file_not_its_target(tmp_path):
    root = tmp_path / "cache"
    precious = plant(root, f"{REGISTRY_FOLDER}/abc.json", tmp_path)
    write_atomic(root / REGISTRY_FOLDER / "abc.json", "[]", inside=root)
    assert precious.read_bytes() == PRECIOUS
    assert not (root / REGISTRY_FOLDER / "abc.json").is_symlink()
    assert (root / REGISTRY_FOLDER / "abc.json").read_text() == "[]"


def test_write_atomic_inside_a_cache_refuses_a_linked_folder(tmp_path):
    root = tmp_path / "cache"
    precious = plant(root, REGISTRY_FOLDER, tmp_path)
    with pytest.raises(LinkRefused, match="symbolic link"):
        write_atomic(root / REGISTRY_FOLDER / "precious.txt", "[]", inside=root)
    assert precious.read_bytes() == PRECIOUS


def test_a_linked_device_inside_a_cache_is_replaced_not_streamed_into(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    (root / "x.json").symlink_to(os.devnull)
    write_atomic(root / "x.json", "[]", inside=root)
    assert (root / "x.json").read_text() == "[]"


def test_the_results_cache_replaces_a_linked_results_file(tmp_path):
    tiny_results = synthetic.results()
    root = tmp_path / "cache"
    precious = plant(root, f"{RESULTS_FOLDER}/abc.json", tmp_path)
    keep_results(tiny_results, root / RESULTS_FOLDER / "abc.json")
    assert precious.read_bytes() == PRECIOUS
    assert NiahResults.load(root / RESULTS_FOLDER / "abc.json").to_json() == tiny_results.to_json()


def test_sentence_counts_replace_a_linked_counts_file(tmp_path, word_tokenizer):
    tokenizer = word_tokenizer
    root = tmp_path / "cache"
    target = counts_file(root, "tok", "corpus")
    assert target is not None
    precious = plant(root, f"sentence-counts/{target.name}", tmp_path)
    counts = SentenceCounts([["One sentence.", "Two more words here."]], tokenizer, target)
    counts.get(0, 0, 2)
    counts.save()
    assert precious.read_bytes() == PRECIOUS
    assert not target.is_symlink() and target.stat().st_size > 0


def test_the_embedding_store_refuses_a_linked_database(tmp_path):
    root = tmp_path / "cache"
    precious = plant(root, CACHE_FILE, tmp_path)
    with pytest.raises(CacheError, match="symbolic link"):
        EmbeddingStore(root / CACHE_FILE)
    assert precious.read_bytes() == PRECIOUS
