"""Scores do not depend on the order a plan lists its inputs in (#42: shards byte-identical).

A gate job reads the plan back from shard parts whose manifests list the needles and
questions in another order than the whole run planned them; a matrix product's last bits
depend on where an entry sits, so the scores are taken in key order.
"""

from __future__ import annotations

import numpy as np
import pytest

from pytest_niah.measure.similarity import Scored


def scored(count: int, dim: int, seed: int) -> Scored:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, dim)).astype(np.float32)
    return Scored.of(matrix, {f"k{i:04d}": i for i in range(count)})


@pytest.mark.parametrize("scoring", ["whole", "chunk-max", "chunk-mean"])
def test_scores_are_the_same_bits_whatever_the_order_of_questions_and_haystacks(scoring):
    table = scored(400, 384, seed=3)
    keys = list(table.index)
    queries, docs = keys[:61], keys[61:]
    size = 1 if scoring == "whole" else 3  # a whole haystack is one input
    pieces = [docs[i : i + size] for i in range(0, len(docs) - size, size)]
    first = table.scores(queries, pieces, scoring)
    rng = np.random.default_rng(7)
    q_order = rng.permutation(len(queries))
    p_order = rng.permutation(len(pieces))
    moved = table.scores([queries[i] for i in q_order], [pieces[j] for j in p_order], scoring)
    assert np.array_equal(moved, first[np.ix_(q_order, p_order)])


def test_a_question_asked_twice_and_a_haystack_listed_twice_score_alike():
    table = scored(50, 64, seed=5)
    keys = list(table.index)
    out = table.scores([keys[0], keys[1], keys[0]], [[keys[9]], [keys[8]], [keys[9]]], "whole")
    assert out.shape == (3, 3)
    assert np.array_equal(out[0], out[2]) and np.array_equal(out[:, 0], out[:, 2])
