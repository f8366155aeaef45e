"""How a run-time error is shown: once per session, as one paragraph, before any test.

A problem that only shows while the experiment runs (here: a corpus folder without books,
or an embedding cache that is no database) stops the whole session in ``_prepare``, before
the first test: exit code 4 and ``pytest-niah could not run 'LABEL': <problem>. Fix:
<hint>`` printed exactly once -- not once per test, not repeated by xdist workers, without
Python's "During handling of the above exception" chain, without a traceback.

The other robustness tests check the message of each input; these check that nothing else
is printed around it, in-process, in a fresh interpreter and under xdist.
"""

from __future__ import annotations

import pytest

MESSAGE = "holds no .txt files"
LEXICAL = "lexical-tfidf"


def run_with_empty_corpus(niah_run, *args, subprocess=False):
    (niah_run.path / "books").mkdir()
    return niah_run.run("--niah-corpus=books", *args, subprocess=subprocess)


def test_the_session_stops_once_with_the_message(niah_run):
    result = run_with_empty_corpus(niah_run)
    message = niah_run.assert_stopped(result, LEXICAL, MESSAGE)
    corpus = niah_run.path / "books"
    assert message == (
        f"pytest-niah could not run 'lexical-tfidf': Corpus folder {corpus} holds no .txt "
        "files. Fix: pass --niah-corpus a folder of UTF-8 .txt files, or "
        "--niah-corpus=packaged for the pinned public-domain books shipped with pytest-niah."
    )
    assert "no tests ran" in result.stdout.str()


def test_no_test_is_reported_failed_or_run(niah_run):
    """-v lists every test that runs: none does, and no FAILURES block appears."""
    result = run_with_empty_corpus(niah_run, "-v")
    niah_run.assert_stopped(result, LEXICAL, MESSAGE)
    out = result.stdout.str()
    assert "collected 5 items" in out
    assert "test_needle[" not in out and "test_gate[" not in out
    assert "FAILURES" not in out


def test_the_message_is_one_paragraph_in_a_fresh_interpreter(niah_run):
    result = run_with_empty_corpus(niah_run, subprocess=True)
    message = niah_run.assert_stopped(result, LEXICAL, MESSAGE)
    # stdout's last line ends without a newline; stderr holds the phase lines.
    text = result.stdout.str() + "\n" + result.stderr.str()
    (line,) = [line for line in text.splitlines() if "could not run" in line]
    assert line.endswith(message + " !"), line


def test_the_message_is_shown_once_under_xdist(niah_run):
    """Only the xdist controller runs the experiment: one stop, no worker repeats it."""
    cache = niah_run.path / "cache"
    cache.mkdir()
    (cache / "embeddings.sqlite").write_bytes(b"not a database " * 1000)
    result = niah_run.run(
        "--niah-cache-dir=cache", "-n", "2", model="packaged-static", subprocess=True
    )
    niah_run.assert_stopped(
        result,
        "packaged-static",
        f"the embedding cache {cache / 'embeddings.sqlite'} is not a valid SQLite cache",
    )
    assert "[gw0]" not in result.stdout.str() and "[gw1]" not in result.stdout.str()


def test_the_failing_model_of_several_is_named(niah_run):
    """With two models, the stop names the one that failed (by its label).

    A folder whose config names no known model type: it fails only when loaded (a hub name
    missing offline is refused before the run, #31).
    """
    (niah_run.path / "books").mkdir()
    broken = niah_run.path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-type"}', encoding="utf-8")
    result = niah_run.run(
        "--niah-model=good=lexical:tfidf",
        f"--niah-model=bad={broken}",
        model=None,
    )
    niah_run.assert_stopped(result, "bad", f"could not load model '{broken}'", "Fix:")


@pytest.mark.parametrize("quiet", ["-q", "-qq"])
def test_quiet_runs_still_show_the_message(niah_run, quiet):
    result = run_with_empty_corpus(niah_run, quiet)
    niah_run.assert_stopped(result, LEXICAL, MESSAGE)


def test_a_corpus_and_a_model_that_both_fail_are_reported_by_one_run(niah_run, monkeypatch):
    """Offline, a book download and a hub model both fail: one run names both, each once."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("NIAH_GUTENBERG_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    # The model is in the cache, but only in part (a snapshot without its files): it passes
    # the check at configure (#31) and fails when located, beside the books.
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(niah_run.path / "hub"))
    snapshot = niah_run.path / "hub" / "models--acme--no-such-model" / "snapshots" / "0123"
    snapshot.mkdir(parents=True)
    (snapshot / "README.md").write_text("partly downloaded", encoding="utf-8")
    result = niah_run.run("--niah-corpus=gutenberg", model="acme/no-such-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert "pytest-niah could not run: 2 problems, each with its fix:" in text
    assert text.count(f"Downloading http://127.0.0.1:{port}/") == 1
    assert text.count("could not load model 'acme/no-such-model'") == 1
    assert "Traceback" not in text
    assert "no tests ran" in text  # stopped before the first test
