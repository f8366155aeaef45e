"""--niah-cache-dir, --niah-no-cache and NIAH_CACHE_DIR: the embedding and results caches.

Under the cache root pytest-niah keeps finished results (``results/<key>.json``, reused when
the config, the model's identity, the data and the library versions are all the same) and
embeddings (``embeddings.sqlite``, an :class:`EmbeddingStore` keyed by the model's identity
and the exact tokens it reads). The lexical baseline stores no embeddings (it fits on each
run's documents), so it shows where the results go, quickly; ``packaged-static``, a small
static model shipped in a wheel, fills the embedding store.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_niah.config.paths import CACHE_FILE
from pytest_niah.embed.store import EmbeddingStore

LITERAL = ("--niah-arms=literal", "--niah-lengths=128")
PASSED = 2 * 1 * 2 * 1 * 3 + 1  # the literal cases of the tiny grid at one length, one gate
STATIC = "packaged-static"
# A small grid for the static model: 2 groups x 1 arm x 2 orders x 1 length x 2 positions.
STATIC_GRID = ("--niah-arms=literal", "--niah-lengths=128", "--niah-positions=2")
STATIC_PASSED = 2 * 2 * 2 + 1
EMBEDDED = re.compile(
    r"^(\d+) texts embedded, (\d+) read from the cache(?: \(cache (.+)\))?$", re.MULTILINE
)
REUSED = re.compile(
    r"^results reused from an identical earlier run \((.+)\): checked .+$", re.MULTILINE
)


def results_files(root: Path) -> list[Path]:
    """The results cache entries under ``root``."""
    return sorted(root.rglob("results/*.json"))


def embedded(result: pytest.RunResult) -> tuple[int, int, str | None]:
    """(texts embedded, texts read from the cache, the cache folder) of the summary line."""
    match = EMBEDDED.search(result.stdout.str())
    assert match is not None, result.stdout.str()
    return int(match.group(1)), int(match.group(2)), match.group(3)


def reused(result: pytest.RunResult) -> Path | None:
    """The results cache entry a run reused, if it says it did."""
    match = REUSED.search(result.stdout.str())
    return Path(match.group(1)) if match else None


def stored_rows(folder: Path) -> int:
    with EmbeddingStore(folder / CACHE_FILE) as store:
        return store.count()


@pytest.fixture
def static(monkeypatch):
    """Run the packaged static model offline."""
    pytest.importorskip("static_model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")


# -- where the cache lives ----------------------------------------------------------------------


def test_cache_dir_option_puts_the_results_there(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    target = tmp_path / "from-option"
    result = niah.run(*LITERAL, f"--niah-cache-dir={target}")
    result.assert_outcomes(passed=PASSED)
    [entry] = results_files(target)
    assert re.fullmatch(r"[0-9a-f]{64}\.json", entry.name)
    assert embedded(result)[2] == str(target)
    # The lexical baseline stores no embeddings; the option beats the environment.
    assert not (target / CACHE_FILE).exists()
    assert not env_dir.exists()


def test_relative_cache_dir_is_relative_to_the_invocation_folder(niah, monkeypatch):
    sub = niah.pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    niah.run(*LITERAL, "--niah-cache-dir=cache").assert_outcomes(passed=PASSED)
    assert [p.parent.parent for p in results_files(niah.pytester.path)] == [sub / "cache"]


def test_environment_is_used_without_the_option(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    result = niah.run(*LITERAL)
    result.assert_outcomes(passed=PASSED)
    assert len(results_files(env_dir)) == 1
    assert embedded(result)[2] == str(env_dir)
    assert not results_files(niah.pytester.path)


def test_ini_is_used_without_option_and_environment(niah, monkeypatch):
    monkeypatch.delenv("NIAH_CACHE_DIR")
    niah.pytester.makeini("[pytest]\nniah_cache_dir = ini-cache\n")
    sub = niah.pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    # Relative to the ini file, not to the folder pytest was started in.
    assert [p.parent.parent for p in results_files(niah.pytester.path)] == [
        niah.pytester.path / "ini-cache"
    ]


def test_environment_beats_the_ini(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    niah.pytester.makeini("[pytest]\nniah_cache_dir = ini-cache\n")
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    assert len(results_files(env_dir)) == 1
    assert not (niah.pytester.path / "ini-cache").exists()


# -- --niah-no-cache ----------------------------------------------------------------------------


def test_no_cache_writes_no_cache_files(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    target = tmp_path / "from-option"
    result = niah.run(*LITERAL, "--niah-no-cache", f"--niah-cache-dir={target}")
    result.assert_outcomes(passed=PASSED)
    # No cache named in the summary, and no file anywhere.
    assert embedded(result)[2] is None
    niah.run(*LITERAL, "--niah-no-cache").assert_outcomes(passed=PASSED)
    assert not target.exists()
    assert not env_dir.exists()
    assert not results_files(niah.pytester.path)


def test_no_cache_ini_switch(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    niah.pytester.makeini("[pytest]\nniah_no_cache = true\n")
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    assert not env_dir.exists()


# -- reuse ---------------------------------------------------------------------------------------


def test_a_first_run_does_not_claim_reused_results(niah, tmp_path):
    result = niah.run(*LITERAL, f"--niah-cache-dir={tmp_path / 'fresh'}")
    result.assert_outcomes(passed=PASSED)
    assert reused(result) is None
    assert embedded(result)[1] == 0


def test_an_identical_second_run_embeds_nothing_and_writes_the_same_bytes(niah, tmp_path, static):
    cache = tmp_path / "cache"
    grid = (*STATIC_GRID, f"--niah-cache-dir={cache}")
    first = niah.run(*grid, "--niah-json=first.json", model=STATIC)
    first.assert_outcomes(passed=STATIC_PASSED)
    texts, read, where = embedded(first)
    assert (read, where) == (0, str(cache))
    # Every text the model embedded is stored once: 2 questions, and per group the needle
    # alone, a control and 2 positions x 2 orders of haystacks at least.
    assert texts >= 2 + 2 * (1 + 1 + 4)
    assert stored_rows(cache) == texts
    [entry] = results_files(cache)

    second = niah.run(*grid, "--niah-json=second.json", model=STATIC)
    second.assert_outcomes(passed=STATIC_PASSED)
    assert reused(second) == entry
    assert embedded(second) == (0, 0, where)  # nothing embedded, no model loaded
    first_bytes = (niah.pytester.path / "first.json").read_bytes()
    assert (niah.pytester.path / "second.json").read_bytes() == first_bytes
    assert entry.read_bytes() == first_bytes
    assert stored_rows(cache) == texts  # nothing new to store
    # The summary tables are the same too.
    assert niah.tables(first, STATIC) == niah.tables(second, STATIC)

    # --niah-no-cache neither reads the full cache nor touches it.
    before = {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()}
    uncached = niah.run(*grid, "--niah-no-cache", "--niah-json=third.json", model=STATIC)
    uncached.assert_outcomes(passed=STATIC_PASSED)
    assert reused(uncached) is None
    assert embedded(uncached) == (texts, 0, None)
    assert {p: p.read_bytes() for p in cache.rglob("*") if p.is_file()} == before
    # Embedded again: the same results but for the speed record, which is measured anew.
    third = niah.load("third.json").without_speed()
    assert third.to_json() == niah.load("first.json").without_speed().to_json()


def test_what_other_settings_reuse(niah, tmp_path, static):
    """Another bootstrap: other results, but the very same texts, so the store answers; a
    document prompt changes every vector the model gives, so nothing stored fits."""
    cache = tmp_path / "cache"
    grid = (*STATIC_GRID, f"--niah-cache-dir={cache}")
    first = niah.run(*grid, "--niah-json=first.json", model=STATIC)
    texts = embedded(first)[0]
    second = niah.run(*grid, "--niah-json=second.json", "--niah-bootstrap=500", model=STATIC)
    second.assert_outcomes(passed=STATIC_PASSED)
    assert reused(second) is None
    assert embedded(second) == (0, texts, str(cache))
    assert len(results_files(cache)) == 2
    # The stored vectors give the very same scores.
    a, b = niah.load("first.json"), niah.load("second.json")
    assert [(c.id, c.cos_qh, c.control_score) for c in a.cases] == [
        (c.id, c.cos_qh, c.control_score) for c in b.cases
    ]
    other = niah.run(*grid, "--niah-doc-prompt=passage: ", model=STATIC)
    other.assert_outcomes(passed=STATIC_PASSED)
    assert reused(other) is None
    assert embedded(other) == (texts, 0, str(cache))
    assert stored_rows(cache) == 2 * texts
    assert len(results_files(cache)) == 3


def test_a_cache_written_by_another_model_is_not_reused(niah, tmp_path, static):
    cache = tmp_path / "cache"
    grid = (*STATIC_GRID, f"--niah-cache-dir={cache}")
    niah.run(*grid).assert_outcomes(passed=STATIC_PASSED)  # the lexical baseline
    [lexical_entry] = results_files(cache)
    result = niah.run(*grid, model=STATIC)
    result.assert_outcomes(passed=STATIC_PASSED)
    assert reused(result) is None
    texts, read, _ = embedded(result)
    assert read == 0
    assert stored_rows(cache) == texts
    assert len(results_files(cache)) == 2
    assert lexical_entry in results_files(cache)


def test_two_labels_of_one_model_share_the_results(niah, tmp_path):
    """The same model and config under two labels: computed once, reused for the second."""
    cache = tmp_path / "cache"
    result = niah.run(
        *LITERAL,
        "--niah-model=a=lexical:tfidf",
        "--niah-model=b=lexical:tfidf",
        f"--niah-cache-dir={cache}",
        "--niah-json=out.json",
    )
    result.assert_outcomes(passed=2 * PASSED)
    [entry] = results_files(cache)
    a_section = result.stdout.str().split("pytest-niah: a ")[1].split("pytest-niah: b ")[0]
    b_section = result.stdout.str().split("pytest-niah: b ")[1]
    assert REUSED.search(a_section) is None
    assert EMBEDDED.search(a_section)
    assert REUSED.search(b_section).group(1) == str(entry)
    assert niah.load("out.a.json").to_json() == niah.load("out.b.json").to_json()
