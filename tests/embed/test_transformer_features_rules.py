"""The ids path's batch features: specials and prompt around each row, padded, masked."""

from __future__ import annotations

import numpy as np

from pytest_niah.embed.st_inputs import Specials, TransformerFeatures


def test_rows_are_prefix_prompt_ids_suffix_then_padding() -> None:
    features = TransformerFeatures(Specials((0,), (2,), 1), with_types=True)
    batch = [np.array([10, 11, 12]), np.array([20])]
    out = features(batch, [7, 8])
    assert out["input_ids"].tolist() == [[0, 7, 8, 10, 11, 12, 2], [0, 7, 8, 20, 2, 1, 1]]
    assert out["attention_mask"].tolist() == [[1] * 7, [1, 1, 1, 1, 1, 0, 0]]
    assert out["token_type_ids"].tolist() == [[0] * 7, [0] * 7]
    assert out["prompt_length"] == 3
    assert str(out["input_ids"].dtype) == "torch.int64"


def test_no_specials_no_prompt_no_types() -> None:
    features = TransformerFeatures(Specials((), (), 5), with_types=False)
    out = features([np.array([3]), np.array([4, 4, 4])], [])
    assert out["input_ids"].tolist() == [[3, 5, 5], [4, 4, 4]]
    assert out["attention_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    assert "token_type_ids" not in out and "prompt_length" not in out


def test_a_suffix_of_two_and_an_empty_row() -> None:
    features = TransformerFeatures(Specials((9,), (8, 8), 0), with_types=False)
    out = features([np.array([], dtype=np.int64), np.array([1, 2])], [])
    assert out["input_ids"].tolist() == [[9, 8, 8, 0, 0], [9, 1, 2, 8, 8]]
    assert out["attention_mask"].tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]


def _agreement(ids_rows: list[list[float]], text_rows: list[list[float]]) -> float:
    from pytest_niah.embed.st_inputs import agrees_with_encode

    return agrees_with_encode(
        lambda batch: np.asarray(ids_rows[: len(batch)]),
        lambda texts: np.asarray(text_rows[: len(texts)]),
        lambda text: ([1, 2, 3], [1, 2, 3]),
        None,
    )


def test_agreement_of_zero_vectors_is_decided_without_a_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a 0/0 would warn
        assert _agreement([[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]) == 0.0
        assert _agreement([[1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 2.0]]) == 1.0
        assert _agreement([[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, -1.0]]) == 2.0
