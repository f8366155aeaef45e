"""A needle that starts exactly at the window is past it (README: "at or past" the window).

Found: the rule survived a ``>=`` -> ``>`` mutation of ``pytest_niah.measure.scoring``: no
test put a needle's first token exactly at the first token the model does not read.
"""

from __future__ import annotations

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import run_experiment


def config(shared_corpus_dir) -> NiahConfig:
    return NiahConfig(
        model="hashing",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01", "medical-02"),
        lengths=(256,),
        positions=5,
        arms=("onehop",),
        bootstrap=0,
    )


def test_a_needle_starting_exactly_at_the_window_is_truncated_and_unread(
    shared_corpus_dir, hashing_embedder
):
    whole = run_experiment(config(shared_corpus_dir), embedder=hashing_embedder(None))
    offsets = sorted(c.needle_offset for c in whole.cases if c.needle_offset > 0)
    window = offsets[len(offsets) // 2]
    results = run_experiment(config(shared_corpus_dir), embedder=hashing_embedder(window))
    assert [c for c in results.cases if c.needle_offset == window], "a needle starts there"
    for case in results.cases:
        past = case.needle_offset >= window
        assert case.truncated is past, (case.id, case.needle_offset, window)
        # The model reads none of a needle at or past its window: the case ties its control.
        assert case.unread is past, (case.id, case.needle_offset, window)
    # One token more, and that needle's first token is read.
    wider = run_experiment(config(shared_corpus_dir), embedder=hashing_embedder(window + 1))
    at = [c for c in wider.cases if c.needle_offset == window]
    assert at and not any(c.truncated or c.unread for c in at)
