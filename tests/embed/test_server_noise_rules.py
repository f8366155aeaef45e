"""Rules of ``embed/server_noise.py`` beside tests/embed/test_served_answers.py (#34.6).

The packaged static model stands in for a server's model; what a broken server sends back
is its answer passed through a fault (as tests/embed/openai_server.py's faults do), without
the HTTP round trip that the remote client's own checks would answer first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from pytest_niah.embed.server_noise import measure_noise
from pytest_niah.errors import EmbedderError
from pytest_niah.haystacks.plan import ModelInput


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
