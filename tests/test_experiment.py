"""The whole pipeline on small grids (pytest_niah.experiment)."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.lexical import LexicalEmbedder
from pytest_niah.errors import EmbeddingError
from pytest_niah.experiment import RunReport, block_weights, plan_inputs, run_experiment
from pytest_niah.experiment.run_inputs import load_inputs
from pytest_niah.measure.metric_tables import negatives_by_key, question_scores
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.snapshots import metric_table

GROUPS = ("dietary-01", "medical-02", "location-03", "language-04", "hobby-01", "vehicle-02")


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path_factory):
    """The fake embedders here share the lexical model's identity: each test gets its own
    cache, so no test reads another fake's finished results."""
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path_factory.mktemp("niah-cache-own")))


def config(shared_corpus_dir, **changes) -> NiahConfig:
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
    return run_experiment(config(shared_corpus_dir))


def test_grid_is_complete(lexical_results):
    c = lexical_results.config
    expected = len(GROUPS) * len(c.arms) * len(c.orders) * len(c.lengths) * c.positions
    assert len(lexical_results.cases) == expected
    assert len({case.id for case in lexical_results.cases}) == expected
    assert lexical_results.case("dietary-01-literal-inverted-L512-p03").position == 3
    # Negatives: every question against the control of every group of the set, by id.
    assert len(lexical_results.negatives) == len(GROUPS) * 2 * 2
    for negative in lexical_results.negatives:
        assert len(negative.control_ids) == len(negative.scores) == 28
        assert f"{negative.group_id}-control-L{negative.length}-c0" in negative.control_ids


def test_two_runs_give_identical_json(shared_corpus_dir, lexical_results):
    again = run_experiment(config(shared_corpus_dir))
    # Everything but the speed record, which is measured.
    assert again.without_speed().to_json() == lexical_results.without_speed().to_json()


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


def test_results_record_provenance(lexical_results):
    assert lexical_results.seed == 42
    assert lexical_results.model.name == "lexical:tfidf"
    assert len(lexical_results.model.fingerprint) == 64
    assert lexical_results.model.tokenizer == "word-regex-v1"
    assert len(lexical_results.corpus["books"]) == 10
    assert lexical_results.needle_set["groups"] == len(GROUPS)
    assert {"numpy", "scikit-learn", "pytest"} <= set(lexical_results.versions)
    assert lexical_results.audit.snippets_used > 0


def test_a_subset_of_groups_measures_its_cells_as_the_whole_run_does(
    shared_corpus_dir, hashing_embedder
):
    # Found: metrics over --niah-groups differed from the same cells in the full run, because
    # each question's negatives were "every control of that length" of the selected groups.
    whole = run_experiment(config(shared_corpus_dir, arms=("onehop",)), embedder=hashing_embedder())
    part = run_experiment(
        config(shared_corpus_dir, arms=("onehop",), groups=("medical-02", "hobby-01")),
        embedder=hashing_embedder(),
    )
    for length in (64, 512):
        mine = [
            c
            for c in whole.cases
            if c.group_id in ("medical-02", "hobby-01") and c.length == length
        ]
        theirs = [c for c in part.cases if c.length == length]
        assert [c.cos_qh for c in mine] == [c.cos_qh for c in theirs]
        a = question_scores(mine, negatives_by_key(whole.negatives))
        b = question_scores(theirs, negatives_by_key(part.negatives))
        assert [q.per_question() for q in a] == [q.per_question() for q in b]


def test_cells_past_the_window_count_one_half(shared_corpus_dir, hashing_embedder):
    # Found: a needle past the window scored exactly cos(q, its own control), so its rank
    # among the other questions' controls was a coin flip: each question's AUC one draw.
    results = run_experiment(
        config(shared_corpus_dir, lengths=(512,), arms=("onehop",)), embedder=hashing_embedder(100)
    )
    unread = [c for c in results.cases if c.unread]
    assert unread and all(c.truncated for c in unread)
    assert all(c.cos_qh == c.control_score for c in unread)  # the same input, the same vector
    assert sum(c.truncated for c in results.cases) == len(unread)
    row = results.row("onehop", 512)
    assert row.unread == len(unread)
    # A question whose every positive is unread has an AUC of exactly one half.
    negatives = negatives_by_key(results.negatives)
    position_zero = {c.id for c in results.cases if c.needle_offset < 100}
    blind = [c for c in results.cases if c.id not in position_zero]
    for q in question_scores(blind, negatives):
        assert q.per_question()["auc"] == 0.5
        assert q.per_question()["separation"] == 0.0


def test_identical_rerun_reuses_results_and_loads_no_model(
    shared_corpus_dir, hashing_embedder, tmp_path
):
    c = config(shared_corpus_dir, arms=("onehop",), lengths=(64,))
    first = run_experiment(c, embedder=hashing_embedder(), cache_dir=tmp_path)
    embedder = hashing_embedder()
    report = RunReport()
    again = run_experiment(c, embedder=embedder, cache_dir=tmp_path, report=report)
    assert report.reused and embedder.calls == 0
    assert again.to_json() == first.to_json()


def test_a_partly_warm_cache_gives_the_cold_table(shared_corpus_dir, hashing_embedder, tmp_path):
    import sqlite3

    c = config(shared_corpus_dir, arms=("onehop",))
    cold = run_experiment(c, embedder=hashing_embedder(64), cache_dir=tmp_path)
    (results,) = (tmp_path / "results").glob("*.json")
    results.unlink()
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as conn:
        # The questions' batches lost, the haystacks' kept: some batches read, some embedded.
        conn.execute("DELETE FROM vectors WHERE space LIKE '%:query'")
    report = RunReport()
    warm = run_experiment(c, embedder=hashing_embedder(64), cache_dir=tmp_path, report=report)
    assert report.embedding.read > 0 and report.embedding.embedded > 0
    assert metric_table(warm) == metric_table(cold)
    assert warm.to_json() == cold.to_json()


def batch_noisy(hashing_embedder, scale: float = 1e-6):
    """A :class:`HashingEmbedder` with batch effects, as real models have on real hardware.

    Each vector moves by about ``scale`` of its norm, in a direction drawn from the batch's
    contents: the same text embedded in another batch (a partly warm cache re-embeds only
    what it lacks) gets a vector that differs in the last bits.
    """

    class BatchNoisy(hashing_embedder):
        def encode(self, inputs):
            clean = super().encode(inputs)
            digest = hashlib.sha256(repr([tuple(i.ids) for i in inputs]).encode()).digest()
            rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
            noise = rng.standard_normal(clean.shape) / math.sqrt(clean.shape[1])
            norms = np.linalg.norm(clean, axis=1, keepdims=True)
            return (clean + scale * norms * noise).astype(np.float32)

    return BatchNoisy


@pytest.mark.parametrize("scoring", [("whole",), ("whole", "chunk-max", "chunk-mean")])
def test_a_partly_warm_cache_gives_the_cold_table_despite_batch_effects(
    shared_corpus_dir, hashing_embedder, tmp_path, scoring
):
    # Found: a partly warm cache (some vectors from an earlier run, embedded in other
    # batches) changed scores in the last bits, enough to flip near-ties, such as a needle
    # past the window against its own control. A window of 100 tokens makes such cells.
    # A batch the cache holds only in part is now embedded whole (#42.6), in its own
    # company: the warm run's scores are the cold run's, bit for bit.
    import sqlite3

    model = batch_noisy(hashing_embedder)
    chunks = {"chunk_tokens": 64} if len(scoring) > 1 else {}
    c = config(shared_corpus_dir, arms=("onehop",), scoring=scoring, **chunks)
    cold = run_experiment(c, embedder=model(100), cache_dir=tmp_path)
    assert any(case.unread for case in cold.cases)
    for results in (tmp_path / "results").glob("*.json"):
        results.unlink()
    with sqlite3.connect(tmp_path / "embeddings.sqlite") as conn:
        conn.execute("DELETE FROM vectors WHERE substr(key, 1, 1) < '8'")  # about half
    report = RunReport()
    warm = run_experiment(c, embedder=model(100), cache_dir=tmp_path, report=report)
    assert report.embedding.embedded > 0
    assert [case.cos_qh for case in warm.cases] == [case.cos_qh for case in cold.cases]
    # The batch effects are real: the same texts in other company move in the last bits.
    texts = plan_inputs(c, embedder=model(100), use_cache=False)[1][:6]
    alone, together = model(100).encode(texts[:1]), model(100).encode(texts)
    assert not np.array_equal(alone[0], together[0])
    assert metric_table(warm) == metric_table(cold)
    assert [(case.found, case.unread) for case in warm.cases] == [
        (case.found, case.unread) for case in cold.cases
    ]


class BrokenEmbedder(LexicalEmbedder):
    """Returns NaN for needles that open with 'Being', and a zero vector for one query."""

    def encode(self, inputs):
        matrix = super().encode(inputs).toarray()
        for i, item in enumerate(inputs):
            if item.kind == "document" and item.text.startswith("Being"):
                matrix[i, 0] = np.nan
            if item.kind == "query" and i == 0:
                matrix[i] = 0.0
        return matrix


def test_bad_embeddings_mark_cases_invalid_not_crash(shared_corpus_dir):
    c = config(shared_corpus_dir, lengths=(64,), arms=("onehop",))
    results = run_experiment(c, embedder=BrokenEmbedder())
    invalid = [case for case in results.cases if case.problem]
    assert invalid, "the zero query must invalidate its group's cases"
    assert all("non-finite or zero embedding" in case.problem for case in invalid)
    assert results.row("onehop", 64).invalid == len(invalid)
    assert results.to_json()  # NaN is written as null, never as invalid JSON


class ShortEmbedder(LexicalEmbedder):
    def encode(self, inputs):
        return super().encode(inputs)[:-1]


def test_wrong_number_of_embeddings_is_an_error(shared_corpus_dir):
    c = config(shared_corpus_dir, lengths=(64,), arms=("onehop",))
    with pytest.raises(EmbeddingError, match=r"returned embeddings of shape .* for .* texts"):
        run_experiment(c, embedder=ShortEmbedder())


def test_a_results_entry_of_another_model_identity_is_computed_again(
    shared_corpus_dir, hashing_embedder, tmp_path
):
    # Same config, same vectors, another identity: the entry under this run's key holds
    # the other model's results (copied, or left by a key clash). It must not answer.
    c = config(shared_corpus_dir, arms=("onehop",), lengths=(64,))
    run_experiment(c, embedder=hashing_embedder(name="other"), cache_dir=tmp_path / "other")
    [foreign] = (tmp_path / "other" / "results").glob("*.json")
    mine = run_experiment(c, embedder=hashing_embedder(), cache_dir=tmp_path)
    [entry] = (tmp_path / "results").glob("*.json")
    assert NiahResults.load(foreign).config.to_dict() == mine.config.to_dict()
    entry.write_bytes(foreign.read_bytes())
    embedder, report = hashing_embedder(), RunReport()
    again = run_experiment(c, embedder=embedder, cache_dir=tmp_path, report=report)
    assert not report.reused and report.embedding.read > 0  # recomputed (from the store)
    assert again.model.fingerprint == embedder.identity.digest
    assert NiahResults.load(entry).model.fingerprint == embedder.identity.digest  # replaced


class FakePlacement:
    def __init__(self, device_type: str) -> None:
        self.device_type = device_type


class FakeModel:
    """What :func:`budget` reads of a model: where it runs and its document window."""

    def __init__(self, device_type: str | None, window: int | None) -> None:
        from pytest_niah.embed.protocol import Windows

        if device_type is not None:
            self.placement = FakePlacement(device_type)
        self.windows = Windows(None, window)


@pytest.mark.parametrize(
    ("device_type", "window", "lengths", "token_budget", "expected"),
    [
        ("cuda", 512, None, None, 32 * (512 + 2)),  # full windows, special tokens too
        ("cuda", 8192, None, None, 32 * (8192 + 2)),  # the default grid ends at 8,192
        # A 32K window (jina-embeddings-v4's) on an 8K grid: 32 of the 8K haystacks, not
        # 128 of them (38.7 GiB for a 358M-parameter stand-in on an H200).
        ("cuda", 32768, None, None, 32 * (8192 + 2)),
        ("cuda", 32768, (128, 16384), None, 32 * (16384 + 2)),  # the longest, in any order
        ("cuda", 32768, (20000, 128), None, 32 * (20000 + 2)),
        ("cuda", 32768, (128, 512), None, 32 * (8192 + 2)),  # at least an 8K model's batch
        ("cuda", 8192, (128, 512), None, 32 * (8192 + 2)),  # a short grid: full windows
        ("cuda", 512, (128, 16384), None, 32 * (512 + 2)),  # never more than the window
        ("cuda", None, None, None, "default"),  # no window: the configured budget
        ("cuda", 512, None, 1000, 1000),  # a budget given explicitly wins, on a GPU too
        ("cpu", 512, None, None, "default"),
        ("cpu", None, None, None, "default"),
        ("cpu", 512, None, 1000, 1000),
        (None, 512, None, None, "default"),  # a model without a placement (remote, lexical)
    ],
)
def test_the_batch_budget(device_type, window, lengths, token_budget, expected):
    from pytest_niah.experiment import CPU_TOKEN_BUDGET, GPU_BATCH, budget

    assert GPU_BATCH == 32
    given = {} if token_budget is None else {"token_budget": token_budget}
    if lengths is not None:
        given["lengths"] = lengths
    c = NiahConfig(model="m", **given)
    model = FakeModel(device_type, window)
    assert budget(c, model) == (CPU_TOKEN_BUDGET if expected == "default" else expected)


def test_block_weights_follow_the_blocks_length_then_draw_then_group():
    # The time left is read off these weights block by block: one per block, in build order.
    one = NiahConfig(model="lexical:tfidf", lengths=(128, 256), groups=("dietary-01",))
    inputs = load_inputs(one)
    per_length = len(inputs.needle_set.groups)
    single = block_weights(one, inputs)
    pooled = block_weights(one.replace(seeds=(1, 2)), inputs)
    assert len(single) == 2 * per_length
    assert pooled == single[:per_length] * 2 + single[per_length:] * 2
