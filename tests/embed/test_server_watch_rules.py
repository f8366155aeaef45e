"""Rules of ``embed/server_watch.py`` and the encoder's checked writes, without a server.

A fake served model answers each text with a vector of its own (a hash of the text), the
whole batch moved by ``shift`` when told: a change of model between two checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from pytest_niah.embed.identity import model_identity
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.runner import Encoder
from pytest_niah.embed.server_watch import (
    CHECK_TEXTS,
    CHECK_TOKENS,
    MATCH_FLOOR,
    MATCH_MARGIN,
    CheckedBatch,
    ServerWatch,
    answer_alone,
    check_inputs,
    moved,
    tolerance,
    watch_batch,
)
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, ModelInput, make_input
from pytest_niah.haystacks.tokens import WordTokenizer
from pytest_niah.inputs.books import Book, Corpus

WORDS = " ".join(f"word{i}" for i in range(400))
CORPUS = Corpus("test", (Book("a", WORDS, "a", "0"), Book("b", WORDS.upper(), "b", "1")))


class Served:
    """Answers a vector per text; ``shift`` moves every answer (another model)."""

    reads_text, fits_on_documents, name, what = True, False, "fake", "the fake server"

    def __init__(self, window: int | None = 64) -> None:
        self.tokenizer = WordTokenizer()
        self.windows = Windows(window, window)
        self.identity = model_identity({"kind": "test"}, {})
        self.shift = 0.0
        self.requests = 0
        self.alone: list[int] = []  # sizes of the requests sent by `answer`

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        self.requests += 1
        rows = [np.random.default_rng(abs(hash(i.text)) % 2**32).random(8) for i in inputs]
        return np.array(rows) + self.shift

    def answer(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        self.alone.append(len(inputs))
        self.requests -= 1  # the checks' requests are not counted here
        return self.encode(inputs)


def inputs_of(texts: Sequence[str]) -> list[ModelInput]:
    encodings = WordTokenizer().encode_batch(list(texts))
    return [make_input(DOCUMENT, e, t, None, True) for e, t in zip(encodings, texts, strict=True)]


def watch_of(model: Served, every: int = 2, seconds: float = 3600.0) -> ServerWatch:
    batch = watch_batch(model, "the fixed texts", inputs_of(["one text", "another text"]))
    return ServerWatch(model, (batch,), lambda: model.requests, every, seconds)


def test_moved_is_the_most_any_row_moved_relative_to_the_longer_length():
    a = np.array([[3.0, 4.0], [1.0, 0.0]])
    b = np.array([[3.0, 4.5], [1.0, 0.0]])
    assert moved(a, b) == pytest.approx(0.5 / np.hypot(3.0, 4.5))
    assert moved(b, a) == moved(a, b)
    assert moved(a, a[:1]) == float("inf")  # another shape never matches
    assert moved(np.zeros((2, 2)), np.zeros((2, 2))) == 0.0
    assert moved(np.zeros((0, 2)), np.zeros((0, 2))) == 0.0


def test_the_tolerance_is_a_margin_over_the_larger_repeat_noise_never_below_the_floor():
    assert tolerance(0.0, 0.0) == tolerance() == MATCH_FLOOR
    assert tolerance(1e-3, 2e-3) == MATCH_MARGIN * 2e-3 == 8e-3
    assert tolerance(MATCH_FLOOR / 10) == MATCH_FLOOR


def test_check_texts_are_drawn_from_the_books_by_the_seed_and_cut():
    model = Served()
    drawn = check_inputs(model, CORPUS, 7)
    assert len(drawn) == CHECK_TEXTS
    assert all(0 < item.tokens <= CHECK_TOKENS for item in drawn)
    assert max(item.tokens for item in drawn) == CHECK_TOKENS
    assert all(item.text.split()[0].lower() in WORDS for item in drawn)  # whole words
    assert [i.key for i in check_inputs(model, CORPUS, 7)] == [i.key for i in drawn]
    assert [i.key for i in check_inputs(model, CORPUS, 8)] != [i.key for i in drawn]
    assert max(i.tokens for i in check_inputs(Served(window=10), CORPUS, 7)) == 10
    assert check_inputs(model, Corpus("empty", (Book("e", "  ", "e", "2"),)), 7) == []
    assert max(i.tokens for i in check_inputs(Served(window=None), CORPUS, 7)) == CHECK_TOKENS


def test_a_batch_is_sent_alone_and_unusable_answers_are_refused():
    model = Served()
    batch = watch_batch(model, "texts", inputs_of(["one", "two", "three"]))
    assert model.alone == [3, 3] and batch.repeat == 0.0 and batch.vectors.shape == (3, 8)
    model.answer = lambda inputs: np.full((len(inputs), 8), np.nan)  # type: ignore[method-assign]
    with pytest.raises(EmbedderError, match="the fake server returned unusable vectors"):
        answer_alone(model, inputs_of(["one"]))
    del model.answer
    assert answer_alone(model, inputs_of(["one"])).shape == (1, 8)  # encode, without `answer`


def test_a_check_is_due_after_enough_requests_or_seconds():
    model = Served()
    watch = watch_of(model, every=2)
    assert not watch.due()
    model.requests += 1
    assert not watch.due()
    model.requests += 1
    assert watch.due()
    watch.check("now")
    assert not watch.due() and watch.checks == 1
    assert watch_of(model, seconds=0.0).due()  # a check every 0 seconds: always due


def test_a_changed_server_stops_the_run_naming_the_batch_and_the_numbers():
    model = Served()
    watch = watch_of(model)
    model.shift = 1e-6  # under the floor
    watch.check("after 2 requests")
    model.shift = 0.1
    with pytest.raises(EmbedderError) as info:
        watch.check("after 4 requests")
    problem = info.value.problem
    assert problem.startswith("the server changed during the run: the fake server answered ")
    assert "the fixed texts after 4 requests" in problem and "within 1e-05" in problem
    assert "one deployment serves the whole run" in info.value.hint
    assert watch.checks == 1
    assert "checked 1 time(s)" in watch.summary() and "2 texts" in watch.summary()


def test_the_encoder_writes_vectors_only_after_a_check_passed(tmp_path: Path):
    model = Served()
    watch = watch_of(model, every=2)
    with EmbeddingStore(tmp_path / "e.sqlite") as store:
        encoder = Encoder(model, store, budget=0, batch_size=1, watch=watch)
        encoder.submit(inputs_of(["alpha"]))
        encoder.submit(inputs_of(["beta"]))
        assert store.count() == 0  # not checked yet
        encoder.submit(inputs_of(["gamma"]))  # the check before it passes: alpha, beta written
        assert store.count() == 2 and watch.checks == 1
        model.shift = 0.5  # another model from here on
        encoder.submit(inputs_of(["delta"]))
        with pytest.raises(EmbedderError, match="the server changed during the run"):
            encoder.submit(inputs_of(["epsilon"]))  # the check before it fails
        assert store.count() == 2  # gamma and delta came after the last good check
        unchanged = Served()
        encoder = Encoder(unchanged, store, budget=0, batch_size=1, watch=watch_of(unchanged))
        encoder.submit(inputs_of(["zeta"]))
        encoder.finish()  # the final check writes what came before it
        assert store.count() == 3


def test_a_checked_batch_keeps_what_it_was_given():
    batch = CheckedBatch("what", (), np.zeros((0, 8)), 0.5)
    assert (batch.what, batch.inputs, batch.repeat) == ("what", (), 0.5)


def test_the_served_models_page_gives_the_checks_numbers():
    # The docs state how often and with what the run checks its server: they are these.
    from pytest_niah.embed.server_watch import EVERY_REQUESTS, EVERY_SECONDS

    page = (Path(__file__).parents[2] / "docs" / "served-models.md").read_text(encoding="utf-8")
    text = " ".join(page.split())
    words = {3: "three"}
    assert f"every {EVERY_REQUESTS} requests or {EVERY_SECONDS / 60:g} minutes" in text
    assert f"{words[CHECK_TEXTS]} texts of {CHECK_TOKENS} tokens" in text
    assert f"within {MATCH_MARGIN:g} times the larger same-batch noise" in text.replace("four", "4")
    assert f"never closer than {MATCH_FLOOR:g} of its length".replace("e-05", "e-5") in text


def test_short_vectors_move_relative_to_their_own_length():
    # Found (mutation, server_watch.py:68 `scale > 0` -> `> 1`): vectors shorter than 1 are
    # divided by their own length too.
    a, b = np.array([[0.3, 0.4]]), np.array([[0.3, 0.45]])
    assert moved(a / 10, b / 10) == pytest.approx(moved(a, b))


def test_a_piece_starts_at_the_first_whole_word_and_a_one_word_book_still_gives_text():
    # Found (mutation, server_watch.py:90-92): a book shorter than the piece is read from
    # its start (its first word cut, as a word the start may split), and a book of one
    # word gives that word, never an empty text.
    letters = " ".join("abcdefghijklmnopqrstuvwxyz")
    short = Corpus("short", (Book("s", letters, "s", "3"),))
    for seed in range(20):
        assert {i.text.split()[0] for i in check_inputs(Served(), short, seed)} == {"b"}, seed
    one = Corpus("one", (Book("o", "lighthouse", "o", "4"),))
    assert [i.text for i in check_inputs(Served(), one, 1)] == ["lighthouse"] * CHECK_TEXTS
    assert [i.tokens for i in check_inputs(Served(window=1), CORPUS, 1)] == [1] * CHECK_TEXTS


def test_an_answer_of_another_row_count_is_refused():
    # Found (mutation, server_watch.py:54 drop clause 1 of Or): rows for every input.
    model = Served()
    model.answer = lambda inputs: np.zeros((len(inputs) + 1, 8))  # type: ignore[method-assign]
    with pytest.raises(EmbedderError, match="unusable vectors"):
        answer_alone(model, inputs_of(["one"]))


def test_a_check_is_due_the_moment_its_seconds_are_up(monkeypatch):
    # Found (mutation, server_watch.py:150 `>=` -> `>`): at exactly the interval, it is due.
    monkeypatch.setattr("pytest_niah.embed.server_watch.time.monotonic", lambda: 100.0)
    assert watch_of(Served(), every=10, seconds=0.0).due()


def test_a_batch_that_moved_exactly_the_tolerance_still_matches():
    # Found (mutation, server_watch.py:162 `>` -> `>=`): the tolerance is inclusive, as the
    # fingerprint's match (`<=`) is.
    model = Served()
    model.answer = lambda inputs: np.array([[0.0, 0.75]])  # type: ignore[method-assign]
    batch = CheckedBatch("the batch", tuple(inputs_of(["one"])), np.array([[0.0, 1.0]]), 0.0625)
    watch = ServerWatch(model, (batch,), lambda: 0)
    assert watch.limit == 0.25
    watch.check("now")  # moved 0.25 of its length: within 4 x 0.0625
    assert watch.checks == 1


def test_each_run_draws_a_fresh_32_bit_seed():
    # Found (mutation, server_watch.py:200): a seed of 32 bits, fresh each time.
    from pytest_niah.embed.server_watch import run_seed

    seeds = [run_seed() for _ in range(200)]
    assert all(isinstance(s, int) and 0 <= s < 2**32 for s in seeds)
    assert len(set(seeds)) > 190 and max(seeds) >= 2**31
