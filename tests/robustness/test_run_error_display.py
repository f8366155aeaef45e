"""How a run-time error is shown: once per test, as one paragraph, without exception chains.

(Found by these tests and fixed in suite/test_niah.py: results_of() called pytest.fail()
inside ``except NiahRunError``, so every failure printed the exception chain.)

The other robustness tests check that the message is there and that no traceback is; these
check that nothing else is: Python's "During handling of the above exception" chain would
repeat the message (and show the low-level cause) in every failed test.
"""

from __future__ import annotations

MESSAGE = "holds no .txt files"


def run_with_empty_corpus(niah_run, *args, subprocess=False):
    (niah_run.path / "books").mkdir()
    return niah_run.run("--niah-corpus=books", *args, subprocess=subprocess)


def test_every_test_fails_with_the_message(niah_run):
    sections = niah_run.assert_run_error(run_with_empty_corpus(niah_run), MESSAGE)
    assert len(sections) == 5  # 4 cases and 1 gate


def test_the_message_is_shown_once_per_test_without_a_chain(niah_run):
    result = run_with_empty_corpus(niah_run)
    sections = niah_run.sections(result)
    assert sections
    for name, body in sections.items():
        for marker in niah_run.chain_markers:
            assert marker not in body, f"{name}:\n{body}"
        assert body.count(MESSAGE) == 1, f"{name}:\n{body}"


def test_the_message_is_shown_once_per_test_under_xdist(niah_run):
    cache = niah_run.path / "cache"
    cache.mkdir()
    (cache / "embeddings.sqlite").write_bytes(b"not a database " * 1000)
    result = niah_run.run("--niah-cache-dir=cache", "-n", "2", subprocess=True)
    niah_run.assert_run_error(result, "is not a valid SQLite cache")
    for name, body in niah_run.sections(result).items():
        for marker in niah_run.chain_markers:
            assert marker not in body, f"{name}:\n{body}"
        assert body.count("is not a valid SQLite cache") == 1, f"{name}:\n{body}"
