"""Rules of the window probe (pytest_niah.embed.window_probe) that mutants found unchecked.

Beside tests/embed/test_window_probe.py, whose ``Reader`` (a model that reads the first
``cut`` tokens) these tests use too.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_window_probe import Reader

from pytest_niah.embed.runner import EmbeddingStats
from pytest_niah.embed.window_probe import (
    MOVED,
    NOISE_MARGIN,
    NOT_DETERMINISTIC,
    NOT_MEASURED,
    ProbeTexts,
    WindowMeasurement,
    falls_short,
    measure_window,
    one_token_words,
    slack,
)
from pytest_niah.haystacks.tokens import WordEncoding, WordTokenizer
from pytest_niah.inputs.books import Book, Corpus


def test_three_tokens_are_enough_to_probe(shared_corpus):
    # Found (mutation, window_probe.py:133 `probed < 3` -> `< 4`): the shortest probe is
    # three tokens (the two ends and one bisection step), not four.
    measured = measure_window(Reader(2, None), shared_corpus, 3, None)
    assert (measured.window, measured.probed) == (2, 3)
    assert measured.note == "reads only the first 2 tokens, though it declares no limit"


def test_the_slack_is_a_hundredth_of_the_declared_window_at_least_four():
    # Found (mutation, window_probe.py:57 `// 100` -> `// 101`): 512 and 8,192 round alike.
    assert [slack(n) for n in (10, 400, 499, 500, 10_000, 32_768)] == [4, 4, 4, 5, 100, 327]
    assert not falls_short(10_000, 9_900) and falls_short(10_000, 9_899)


def _first_move(corpus, cut: int, length: int) -> float:
    """How far the pair that differs from the second token on lies apart, to a Reader."""
    model = Reader(cut, length)
    texts = ProbeTexts.of(model.tokenizer, corpus, length)
    assert texts is not None
    a, b = model.encode(list(texts.inputs(1, False)))
    return float(
        np.linalg.norm(a.astype(np.float64) - b) / max(np.linalg.norm(a), np.linalg.norm(b))
    )


def test_a_served_models_threshold_is_ten_times_its_noise(shared_corpus):
    # Found (mutation, window_probe.py:45 NOISE_MARGIN 10 -> 11): noise just under a tenth of
    # what one probe token changes still lets the window be measured; just over it does not.
    length = 1000
    edge = _first_move(shared_corpus, 300, length) / length / 10
    assert NOISE_MARGIN == 10.0 and edge > MOVED  # the noise, not MOVED, sets the threshold
    below = measure_window(Reader(300, length), shared_corpus, length, None, noise=edge * 0.97)
    assert below.window == 300
    above = measure_window(Reader(300, length), shared_corpus, length, None, noise=edge * 1.03)
    assert above.note == f"{NOT_MEASURED}: {NOT_DETERMINISTIC}" and above.window is None


class _FewIds(WordTokenizer):
    """Reads each word as one token, but words of one length alike: the sides share ids."""

    def encode_batch(self, texts):
        return [WordEncoding([len(w) for w in t.split()], []) for t in texts]


class _ContextIds(WordTokenizer):
    """One token per word, each id depending on the text's last word: prefixes differ."""

    def encode_batch(self, texts):
        return [WordEncoding([hash((w, t.split()[-1])) for w in t.split()], []) for t in texts]


class _ExtraToken(WordTokenizer):
    """One token per word, and one more after a text ending in a word of even id."""

    def encode_batch(self, texts):
        out = super().encode_batch(texts)
        return [
            WordEncoding([*e.ids, 0], []) if len(e.ids) > 2 and e.ids[-1] % 2 == 0 else e
            for e in out
        ]


def _uneven_length(corpus) -> int:
    """A probe length at which only one side's last word gets the extra token."""
    for length in range(40, 400):
        texts = ProbeTexts.of(_ExtraToken(), corpus, length)
        assert texts is not None
        ends = WordTokenizer().encode_batch([texts.left[-1], texts.right[-1]])
        if ends[0].ids[0] % 2 != ends[1].ids[0] % 2:
            return length
    raise AssertionError("no length found")


@pytest.mark.parametrize("tokenizer", [_FewIds, _ContextIds, _ExtraToken])
def test_a_tokenizer_that_does_not_read_the_probe_one_token_per_word_is_named(
    shared_corpus, tokenizer
):
    # Found (mutation, window_probe.py:264, each clause of the check dropped or `and` ->
    # `or`): the pair must be as long as the probe, share its prefix and differ after it.
    model = Reader(None, None)
    model.tokenizer = tokenizer()
    length = _uneven_length(shared_corpus) if tokenizer is _ExtraToken else 300
    measured = measure_window(model, shared_corpus, length, None)
    assert measured.note == (
        f"{NOT_MEASURED}: the tokenizer does not read the probe's words one token each"
    )
    assert measured.window is None


class _TwoPoints(Reader):
    """Answers ``(1e5 - d, 0)``, ``d`` the sum of ``steps[i]`` over the positions ``i`` that
    hold the right side's word: pairs lie exactly ``d / 1e5`` apart (all exact in float32).
    """

    def __init__(self, corpus, length: int, steps: dict[int, float]) -> None:
        super().__init__(None, None)
        texts = ProbeTexts.of(self.tokenizer, corpus, length)
        assert texts is not None
        self.right = [e.ids[0] for e in self.tokenizer.encode_batch(list(texts.right))]
        assert all(texts.prefix[i] != texts.right[i] for i in steps)  # the prefix is neutral
        self.steps = steps

    def encode(self, inputs):
        self.texts += len(inputs)
        return np.asarray(
            [
                [1e5 - sum(w * (item.ids[i] == self.right[i]) for i, w in self.steps.items()), 0]
                for item in inputs
            ],
            dtype=np.float32,
        )


def test_a_pair_exactly_the_tolerance_apart_has_not_moved(shared_corpus):
    # Found (mutation, window_probe.py:182 `first <= threshold` -> `<`): a pair "moves" when
    # it lies MORE than MOVED apart; exactly MOVED apart is float noise, not a change.
    measured = measure_window(_TwoPoints(shared_corpus, 64, {-1: 1.0}), shared_corpus, 64, None)
    assert measured.note == (
        f"{NOT_MEASURED}: changing every token after the first did not move the embedding"
    )
    # A hair more (2 MOVED) moves it, at every k: no limit within the probe.
    moved = measure_window(_TwoPoints(shared_corpus, 64, {-1: 2.0}), shared_corpus, 64, None)
    assert moved.note == "no limit within 64 tokens (the longest haystack)"


def test_a_deterministic_model_is_never_called_noisy_however_small_a_tokens_change(
    shared_corpus,
):
    # Found (mutation, window_probe.py:180 `threshold > MOVED` -> `>=`): without noise the
    # threshold is MOVED and the noise check is skipped, even where one token moves the
    # vector by less than MOVED (here 2 MOVED over 8 tokens).
    measured = measure_window(_TwoPoints(shared_corpus, 8, {-1: 2.0}), shared_corpus, 8, None)
    assert measured.note == "no limit within 8 tokens (the longest haystack)"


def test_noise_exactly_at_one_tokens_change_hides_the_window(shared_corpus):
    # Found (mutation, window_probe.py:180 `first / length <= threshold` -> `<`): pairs 0.5
    # apart over 8 tokens, one token 0.0625; a noise of 0.00625 sets the threshold at exactly
    # 0.0625 (10 x 0.00625 is exact): the noise reaches one token's change, so not measured.
    assert NOISE_MARGIN * 0.00625 == 0.5 / 8
    model = _TwoPoints(shared_corpus, 8, {-1: 5e4})
    measured = measure_window(model, shared_corpus, 8, None, noise=0.00625)
    assert measured.note == f"{NOT_MEASURED}: {NOT_DETERMINISTIC}"
    # Just under it, the window is measured (every pair moves: no limit).
    quieter = measure_window(model, shared_corpus, 8, None, noise=0.0062)
    assert quieter.note == "no limit within 8 tokens (the longest haystack)"


def test_a_last_token_that_moves_the_vector_by_exactly_the_tolerance_is_not_read(shared_corpus):
    # Found (mutation, window_probe.py:184 `last > threshold` -> `>=`): the second token moves
    # the vector by 4 MOVED, the last by exactly MOVED: that is not a move, so the model is
    # seen to stop reading before the end (after token 2), not to read every token.
    model = _TwoPoints(shared_corpus, 64, {1: 4.0, -1: 1.0})
    measured = measure_window(model, shared_corpus, 64, None)
    assert measured.window == 2
    assert measured.note == "reads only the first 2 tokens, though it declares no limit"


def test_a_measurement_is_a_value_its_stats_and_dim_aside():
    # Found (mutation, window_probe.py:68, :87-88, :212): a measurement and the probe's texts
    # cannot change once made; two measurements of the same finding are equal whatever the
    # probe embedded or read from the cache.
    one = WindowMeasurement(512, 300, 512, "note", EmbeddingStats(embedded=4), 24)
    two = WindowMeasurement(512, 300, 512, "note", EmbeddingStats(read=4), None)
    assert one == two
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.window = 1  # type: ignore[misc]
    texts = ProbeTexts.of(WordTokenizer(), Corpus("two", (Book("b", "alpha beta", "x", "0"),)), 4)
    assert texts is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        texts.prefix = ()  # type: ignore[misc]


def test_what_could_not_be_measured_probed_nothing(shared_corpus):
    # Found (mutation, window_probe.py:143 probed 0 -> 1): a probe that stopped (here: the
    # embedding never moves) reports 0 tokens probed, as every other "not measured" does.
    constant = measure_window(Reader(constant=True, declared=256), shared_corpus, 512, None)
    assert constant.note.startswith(NOT_MEASURED) and constant.probed == 0


class _Scaled(Reader):
    """The Reader's vectors scaled to length ``size`` (0: zero vectors)."""

    def __init__(self, cut: int | None, declared: int | None, size: float) -> None:
        super().__init__(cut, declared)
        self.size = size

    def encode(self, inputs):
        rows = super().encode(inputs).astype(np.float64)
        return (self.size * rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_moves_are_relative_to_the_vectors_length_whatever_it_is(shared_corpus):
    # Found (mutation, window_probe.py:208 `scale > 0` -> `> 1`, `else 0.0` -> `1.0`): short
    # vectors move as long ones do; zero vectors never move (not measured, no division by 0).
    for size in (0.5, 1e3):
        assert measure_window(_Scaled(200, 510, size), shared_corpus, 1024, None).window == 200
    zero = measure_window(_Scaled(200, 510, 0.0), shared_corpus, 1024, None)
    assert zero.note == (
        f"{NOT_MEASURED}: changing every token after the first did not move the embedding"
    )


def test_the_probe_reads_the_corpus_words_in_order_from_its_first_letter():
    # Found (mutation, window_probe.py:241 `3 * length` -> `/`, :284-285 the scan's start):
    # the prefix is the corpus's first one-token words, in order, none skipped or cycled
    # while the corpus has enough.
    book = Book("b", "Alpha beta, gamma delta epsilon zeta eta theta iota kappa.", "x", "0")
    corpus = Corpus("greek", (book,))
    words = one_token_words(WordTokenizer(), corpus, 100)
    assert words[:4] == ["alpha", "beta", "gamma", "delta"] and len(words) == 10
    texts = ProbeTexts.of(WordTokenizer(), corpus, 3)
    assert texts is not None and texts.prefix == ("alpha", "beta", "gamma")
