"""Rules of ``embed/server_noise.py`` beside tests/embed/test_served_answers.py (#34.6).

The packaged static model stands in for a server's model; what a broken server sends back
is its answer passed through a fault (as tests/embed/openai_server.py's faults do), without
the HTTP round trip that the remote client's own checks would answer first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from pytest_niah.embed.server_noise import FIXED_TEXTS, measure_noise
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.haystacks.tokens import WordTokenizer


class _Answers:
    """A real model whose vectors pass through ``fault`` on their way back."""

    def __init__(self, model: Any, fault: Callable[[np.ndarray], np.ndarray]) -> None:
        self._model, self._fault = model, fault
        self.what = "the broken server"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        return self._fault(np.asarray(self._model.encode(inputs), dtype=np.float64))


def _nan_in_last_row(rows: np.ndarray) -> np.ndarray:
    rows[-1, 0] = np.nan
    return rows


def test_a_model_that_repeats_itself_exactly_measures_no_noise(static):
    noise = measure_noise(_Answers(static, lambda rows: rows))
    assert noise.pair == noise.calls == 0.0 < noise.signal


@pytest.mark.parametrize(
    "fault",
    [_nan_in_last_row, lambda rows: rows[:-1], lambda rows: np.vstack([rows, rows[:1]])],
    ids=["a NaN", "a row short", "a row too many"],
)
def test_unusable_answers_to_the_fixed_texts_are_refused_naming_the_server(static, fault):
    # Found (mutation seed 1954570716, server_noise.py:120): a NaN in rows of the right
    # count, or finite rows of the wrong count, is each enough to refuse the answers.
    with pytest.raises(EmbedderError) as info:
        measure_noise(_Answers(static, fault))
    assert "the broken server returned unusable vectors" in info.value.problem


def test_a_model_answering_zero_vectors_is_refused_as_ignoring_the_text(static):
    # Found (mutation seed 1954570716, server_noise.py:131): vectors of length 0 have no
    # direction; the distance between them is 0, not a division by 0.
    with pytest.raises(EmbedderError) as info:
        measure_noise(_Answers(static, np.zeros_like))
    assert "the broken server returns vectors that do not depend on the input" in str(
        info.value.problem
    )


def test_the_signal_is_relative_to_the_vectors_length(static):
    # Found (mutation seed 981343202, server_noise.py:131): distances are divided by the
    # vectors' length, so a server answering the same directions 10x longer measures the same.
    unit = measure_noise(_Answers(static, lambda rows: rows))
    longer = measure_noise(_Answers(static, lambda rows: 10.0 * rows))
    assert longer.signal == pytest.approx(unit.signal, rel=1e-6)


class _Exact:
    """A server of exact answers: fixed text i is ``BASE[i]``, plus ``moves[c]`` along a
    fourth axis in call ``c`` (its noise); call ``flipped_call`` comes back negated; in
    call 2 (the pair: text 1 twice) the second row becomes ``second`` if given. The fixed
    texts lie sqrt(5)/2 apart at the least (texts 0-1 and 1-2), sqrt(2) at the most (0-2).
    """

    BASE = np.array([[1.0, 0, 0, 0], [0, 2.0, 0, 0], [0, 0, 1.0, 0]])

    def __init__(
        self,
        moves: Sequence[float] = (0, 0, 0),
        second: Sequence[float] | None = None,
        *,
        flipped_call: int | None = None,
    ) -> None:
        self.tokenizer, self.reads_text, self.name = WordTokenizer(), True, "exact"
        self.what = "the exact server"
        self.moves, self.second, self.calls = moves, second, 0
        self.flipped_call = flipped_call

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        rows = np.array([self.BASE[FIXED_TEXTS.index(i.text)] for i in inputs])
        rows[:, 3] += self.moves[self.calls]
        if self.second is not None and self.calls == 2:
            rows[1] = self.second
        if self.calls == self.flipped_call:
            rows = -rows
        self.calls += 1
        return rows


def _moving(ratio: float) -> _Exact:
    """A server whose same text moves between calls by ``ratio`` of the least signal."""
    moved = ratio * np.sqrt(5) / 2  # |move| / sqrt(1 + move^2): the distance, text 0 or 2
    return _Exact((0.0, moved / np.sqrt(1 - moved**2), 0.0))


def test_the_same_text_may_move_by_less_than_a_quarter_of_the_least_signal():
    # Found (mutation, server_noise.py:37 REFUSED, :59 and :79 max -> min, :74 min -> max,
    # :75 the pairs of texts): the noise is the MOST the same text moved (here only across
    # calls, never in the pair); the signal the LEAST two different texts differ.
    kept = measure_noise(_moving(0.2))
    assert kept.pair == 0.0 and kept.spread == kept.calls
    assert kept.signal == pytest.approx(np.sqrt(5) / 2)
    assert kept.calls == pytest.approx(0.2 * kept.signal)
    with pytest.raises(EmbedderError) as info:
        measure_noise(_moving(0.3))
    assert "the exact server returns vectors that do not depend on the input" in str(
        info.value.problem
    )


def test_a_server_that_flips_a_vector_within_one_request_is_named_as_flipping():
    # Found (mutation, server_noise.py:84): the sign check covers the pair sent in one call.
    with pytest.raises(EmbedderError) as info:
        measure_noise(_Exact(second=(0, -2.0, 0, 0)))
    assert "the exact server flips the sign of its vectors between requests" in str(
        info.value.problem
    )


def test_unit_vectors_that_flip_between_calls_are_named_as_flipping():
    # Found (mutation, server_noise.py:136 `scale > 0` -> `> 1`): vectors of length 1 (the
    # usual normalised answer) have a direction too. Call 1 holds texts 2 and 0, of length 1.
    with pytest.raises(EmbedderError) as info:
        measure_noise(_Exact(flipped_call=1))
    assert "the exact server flips the sign of its vectors" in str(info.value.problem)


def test_pointing_exactly_a_third_of_the_way_round_is_not_a_flip():
    # Found (mutation, server_noise.py:84-136, the sign rule): a flip is a cosine BELOW -0.5;
    # (0, 2, 0, 0) and (2, -2, 2, 2) meet at exactly -0.5 (-4 / (2 x 4)): refused as noise,
    # not named as a flip.
    with pytest.raises(EmbedderError) as info:
        measure_noise(_Exact(second=(2.0, -2.0, 2.0, 2.0)))
    assert "returns vectors that do not depend on the input" in str(info.value.problem)


def test_the_pairs_own_spread_is_measured_and_a_noise_is_frozen():
    # Found (mutation, server_noise.py:78 pair[0] -> pair[1], :40 frozen): the pair's two
    # rows are compared with each other; what was measured cannot be changed afterwards.
    noise = measure_noise(_Exact(second=(0, 2.0, 0, 0.02)))
    assert noise.pair == pytest.approx(0.02 / np.hypot(2.0, 0.02)) and noise.calls == 0.0
    assert noise.spread == noise.pair
    with pytest.raises(dataclasses.FrozenInstanceError):
        noise.pair = 0.0  # type: ignore[misc]


def test_zero_vectors_are_reported_as_no_distance_at_all(static):
    # Found (mutation, server_noise.py:131 `else 0.0`): vectors of length 0 lie 0 apart, and
    # the refusal says so.
    with pytest.raises(EmbedderError) as info:
        measure_noise(_Answers(static, np.zeros_like))
    assert "moved by 0 of its length, while two different texts lie 0 apart" in str(
        info.value.problem
    )
