from __future__ import annotations

import math

import numpy as np
import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.embedders import LexicalEmbedder
from pytest_niah.experiment import EmbeddingError, run_experiment
from pytest_niah.results.niah_results import NiahResults

GROUPS = ("dietary-01", "medical-02", "location-03", "language-04", "hobby-01", "vehicle-02")


def lexical_config(shared_corpus_dir, **changes) -> NiahConfig:
    base = dict(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        groups=GROUPS,
        lengths=(64, 512),
        positions=4,
        arms=("onehop", "literal"),
    )
    return NiahConfig(**(base | changes))


@pytest.fixture(scope="module")
def lexical_results(shared_corpus_dir) -> NiahResults:
    return run_experiment(lexical_config(shared_corpus_dir))


def test_grid_is_complete(lexical_results):
    config = lexical_results.config
    expected = len(GROUPS) * len(config.arms) * len(config.orders) * len(config.lengths) * 4
    assert len(lexical_results.cases) == expected
    assert len({c.id for c in lexical_results.cases}) == expected
    assert lexical_results.case("dietary-01-literal-inverted-L512-p03").position == 3
    # Negatives: every question against every control of its length.
    assert len(lexical_results.negatives) == len(GROUPS) * 2 * 2
    assert all(len(n.scores) == len(GROUPS) for n in lexical_results.negatives)


def test_two_runs_give_identical_json(shared_corpus_dir, lexical_results):
    again = run_experiment(lexical_config(shared_corpus_dir))
    assert again.to_json() == lexical_results.to_json()


def test_json_round_trip_is_exact(lexical_results, tmp_path, frozen):
    # NaN must survive too: the lexical baseline leaves some normalized similarities undefined.
    assert any(math.isnan(c.normalized) for c in lexical_results.cases)
    loaded = NiahResults.load(lexical_results.save(tmp_path / "r.json"))
    assert frozen(loaded) == frozen(lexical_results)
    assert loaded.to_json() == lexical_results.to_json()


def test_lexical_baseline_sees_literal_needles_not_one_hop(lexical_results):
    for length in (64, 512):
        literal = lexical_results.row("literal", length)
        onehop = lexical_results.row("onehop", length)
        assert literal.auc > 0.9
        assert literal.comparative_ratio > 0.9
        assert literal.auc - onehop.auc > 0.3


def test_tables_have_every_split(lexical_results):
    rows = lexical_results.rows("category", "onehop")
    assert {r.key for r in rows} == {g.split("-")[0] for g in GROUPS}
    assert {r.key for r in lexical_results.rows("order")} == {"default", "inverted"}
    assert {r.key for r in lexical_results.rows("position")} == {"p00", "p01", "p02", "p03"}
    row = lexical_results.row("literal", 64)
    assert row.found + row.missed == row.n_cases == len(GROUPS) * 2 * 4
    assert row.truncated == 0  # TF-IDF reads everything


def test_results_record_provenance(lexical_results):
    assert lexical_results.seed == 42
    assert lexical_results.model.name == "lexical:tfidf"
    assert len(lexical_results.model.fingerprint) == 64
    assert len(lexical_results.corpus["books"]) == 10
    assert lexical_results.needle_set["groups"] == len(GROUPS)
    assert {"numpy", "scikit-learn", "pytest"} <= set(lexical_results.versions)
    assert lexical_results.audit.snippets_used > 0


class WindowedLexical(LexicalEmbedder):
    """TF-IDF that pretends to read only the first tokens, to check truncation marks."""

    @property
    def max_tokens(self) -> int:
        return 100


def test_needles_past_the_window_are_marked_truncated(shared_corpus_dir):
    config = lexical_config(shared_corpus_dir, lengths=(512,), arms=("onehop",))
    results = run_experiment(config, embedder=WindowedLexical())
    for case in results.cases:
        assert case.truncated == (case.needle_offset >= 100)
    assert results.row("onehop", 512).truncated == sum(c.truncated for c in results.cases) > 0


class BrokenEmbedder(LexicalEmbedder):
    """Returns NaN for one needle text and a zero vector for one query."""

    def encode_documents(self, texts):
        matrix = super().encode_documents(texts).toarray()
        for i, text in enumerate(texts):
            if text.startswith("Being") or "dietary" in text:
                matrix[i, 0] = np.nan
        return matrix

    def encode_queries(self, texts):
        matrix = super().encode_queries(texts).toarray()
        matrix[0] = 0.0
        return matrix


def test_bad_embeddings_mark_cases_invalid_not_crash(shared_corpus_dir):
    config = lexical_config(shared_corpus_dir, lengths=(64,), arms=("onehop",))
    results = run_experiment(config, embedder=BrokenEmbedder())
    invalid = [c for c in results.cases if c.problem]
    assert invalid, "the zero query must invalidate its group's cases"
    assert all("non-finite or zero embedding" in c.problem for c in invalid)
    row = results.row("onehop", 64)
    assert row.invalid == len(invalid)
    assert results.to_json()  # NaN is written as null, never as invalid JSON


class ShortEmbedder(LexicalEmbedder):
    def encode_documents(self, texts):
        return super().encode_documents(texts)[:-1]


def test_wrong_number_of_embeddings_is_an_error(shared_corpus_dir):
    config = lexical_config(shared_corpus_dir, lengths=(64,), arms=("onehop",))
    with pytest.raises(EmbeddingError, match=r"returned embeddings of shape .* for .* texts"):
        run_experiment(config, embedder=ShortEmbedder())
