"""Late-interaction (ColBERT-style) models through sentence-transformers' MultiVectorEncoder.

A tiny MultiVectorEncoder is built once per session from the packaged MiniLM
(``late_interaction_model.py``): ``[Q] ``/``[D] `` markers, 32-token queries with ``[MASK]``
expansion, a punctuation skiplist and 200-token documents. The tests check that such a
folder loads as what it is, reads its own markers and lengths, is scored by maxsim exactly
as the brute-force definition says, and is refused every scoring but maxsim up front.
"""

from __future__ import annotations

import json
import shutil
import string
from pathlib import Path

import numpy as np
import pytest
from embed_fakes import link_into_blobs
from late_interaction_model import (
    DOCUMENT_LENGTH,
    PROMPTS,
    QUERY_LENGTH,
    build_late_interaction_model,
    minilm_folder,
)

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.loader import load_embedder
from pytest_niah.embed.presets import MODEL_PRESETS
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.st_backend import SentenceTransformerEmbedder
from pytest_niah.embed.st_late_interaction import is_late_interaction_folder
from pytest_niah.embed.st_loading import set_window, token_limits
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, input_key, multi_kind
from pytest_niah.measure.similarity import Scored

REPO = Path(__file__).resolve().parents[2]
COLBERT = "lightonai/GTE-ModernColBERT-v1"
REVISION = "fedcba9876543210fedcba9876543210fedcba98"
SPECIALS = 2  # [CLS] ... [SEP]
MARKER = 3  # "[Q] " and "[D] " are three MiniLM tokens each: "[", "q"/"d", "]"
QUESTION = "Which character never eats pork?"
NEEDLE = "For many years, Priya has kept a strictly kosher kitchen."
FILLER = "The harbour was quiet; boats rested, and gulls argued over the nets at dawn!"


@pytest.fixture(scope="session")
def colbert_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_late_interaction_model(tmp_path_factory.mktemp("late") / "tiny-colbert")


@pytest.fixture(scope="session")
def colbert(colbert_folder: Path) -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder(str(colbert_folder), device="cpu", scorings=("maxsim",))
    embedder.model  # noqa: B018 - loaded once for the session
    return embedder


def inputs(embedder: SentenceTransformerEmbedder, kind: str, texts: list[str]) -> list[ModelInput]:
    """Inputs of ``kind`` for whole texts, as the plan makes them (ids and text)."""
    encodings = embedder.tokenizer.encode_batch(texts)
    return [
        ModelInput(input_key(kind, np.asarray(e.ids)), kind, np.asarray(e.ids), t)
        for e, t in zip(encodings, texts, strict=True)
    ]


def with_prompts(
    colbert: SentenceTransformerEmbedder, **prompts: str
) -> SentenceTransformerEmbedder:
    """The session's model (not loaded again) under other prompts."""
    other = SentenceTransformerEmbedder(colbert.name, device="cpu", scorings=("maxsim",), **prompts)
    other.__dict__["model"] = colbert.model
    return other


# -- detection ---------------------------------------------------------------------------


def test_a_folder_is_late_interaction_by_the_config_its_library_writes(colbert_folder, tmp_path):
    settings = json.loads((colbert_folder / "config_sentence_transformers.json").read_text())
    assert settings["model_type"] == "MultiVectorEncoder"
    assert is_late_interaction_folder(colbert_folder)
    assert not is_late_interaction_folder(minilm_folder())
    assert not is_late_interaction_folder(REPO / "fixtures" / "models" / "jina-v4-like")
    assert not is_late_interaction_folder(None)

    def folder(name: str, settings: dict | None = None, config: dict | None = None) -> Path:
        path = tmp_path / name
        path.mkdir()
        if settings is not None:
            (path / "config_sentence_transformers.json").write_text(json.dumps(settings))
        if config is not None:
            (path / "config.json").write_text(json.dumps(config))
        return path

    assert is_late_interaction_folder(folder("pylate3", {"model_type": "ColBERT"}))
    # PyLate 1 and 2 (GTE-ModernColBERT-v1's) wrote no model type, only their own keys.
    assert is_late_interaction_folder(folder("pylate1", {"query_prefix": "[Q] "}))
    assert is_late_interaction_folder(folder("stanford", None, {"architectures": ["HF_ColBERT"]}))
    assert not is_late_interaction_folder(folder("dense", {"model_type": "SentenceTransformer"}))
    assert not is_late_interaction_folder(folder("sparse", {"model_type": "SparseEncoder"}))
    assert not is_late_interaction_folder(folder("plain", {}, {"architectures": ["BertModel"]}))


# -- loading, lengths, prompts ---------------------------------------------------------------


def test_it_loads_as_a_multi_vector_encoder_and_reads_its_own_lengths(colbert):
    model = colbert.model
    assert type(model).__name__ == "MultiVectorEncoder"  # not converted to a dense model
    assert colbert.multi_vector and colbert.reads_text
    assert model.prompts == PROMPTS
    # The document window is the model's document length, not the backbone's 512 tokens;
    # questions read the 32 tokens of the query expansion.
    assert model.max_seq_length == 512
    assert token_limits(model) == (QUERY_LENGTH, DOCUMENT_LENGTH)
    assert colbert.windows == Windows(
        QUERY_LENGTH - SPECIALS - MARKER, DOCUMENT_LENGTH - SPECIALS - MARKER
    )
    settings = colbert.identity.parts["settings"]
    assert settings["model_class"] == "MultiVectorEncoder"


def test_max_seq_length_sets_the_document_length_within_the_backbone(colbert):
    model = colbert.model
    try:
        set_window(colbert.name, model, 96)
        assert token_limits(model) == (QUERY_LENGTH, 96)
        assert model[0].document_length == 96 and model.max_seq_length == 512
        long_text = " ".join(["lantern"] * 300)
        (vectors,) = model.encode_document([long_text], convert_to_numpy=True)
        # 96 tokens read ([CLS] [ d ] lantern... [SEP]), the marker's brackets not scored.
        assert len(vectors) == 96 - 2
        with pytest.raises(ConfigError, match="position embeddings stop at 512"):
            set_window(colbert.name, model, 513)
    finally:
        model[0].document_length = DOCUMENT_LENGTH


def test_questions_and_documents_get_the_models_markers_and_documents_its_skiplist(colbert):
    model = colbert.model
    questions = inputs(colbert, multi_kind(QUERY), [QUESTION])
    documents = inputs(colbert, multi_kind(DOCUMENT), [NEEDLE, FILLER])
    (question,) = colbert.encode(questions)
    assert np.array_equal(question, model.encode_query([QUESTION], convert_to_numpy=True)[0])
    assert len(question) == QUERY_LENGTH  # padded with [MASK] expansion tokens, all scored
    got = colbert.encode(documents)
    expected = model.encode_document([NEEDLE, FILLER], prompt="[D] ", convert_to_numpy=True)
    for vectors, want in zip(got, expected, strict=True):
        assert np.array_equal(vectors, want)
    # Punctuation (the marker's brackets among it) is dropped from documents, not questions.
    tokens = model.tokenizer.tokenize("[D] " + FILLER)
    kept = [t for t in tokens if t not in string.punctuation]
    assert len(got[1]) == len(kept) + SPECIALS < len(tokens) + SPECIALS
    assert got[0].shape[1] == got[1].shape[1] == 32

    # A prompt given as text replaces the model's marker (unlike jina-embeddings-v4's).
    plain = with_prompts(colbert, doc_prompt="passage: ")
    (other,) = plain.encode(documents[:1])
    assert len(other) != len(got[0]) or not np.allclose(other, got[0])
    assert np.array_equal(other, model.encode_document([NEEDLE], prompt="passage: ")[0].numpy())


def test_plain_inputs_read_the_mean_of_the_token_vectors_for_the_window_probe(colbert):
    documents = inputs(colbert, DOCUMENT, [NEEDLE, FILLER])
    pooled = colbert.encode(documents)
    token_vectors = colbert.encode(inputs(colbert, multi_kind(DOCUMENT), [NEEDLE, FILLER]))
    assert pooled.shape == (2, 32)
    for row, vectors in zip(pooled, token_vectors, strict=True):
        assert np.allclose(row, vectors.mean(axis=0), atol=1e-6)


def test_maxsim_is_the_brute_force_mean_of_each_question_tokens_best_cosine(colbert):
    model = colbert.model
    texts = [NEEDLE, FILLER, "Priya never eats pork."]
    questions = inputs(colbert, multi_kind(QUERY), [QUESTION, "Who keeps kosher?"])
    documents = inputs(colbert, multi_kind(DOCUMENT), texts)
    multi = dict(
        zip(
            [i.key for i in (*questions, *documents)],
            [*colbert.encode(questions), *colbert.encode(documents)],
            strict=True,
        )
    )
    scored = Scored.of(np.zeros((0, 32)), {}, multi)
    got = scored.scores([q.key for q in questions], [[d.key] for d in documents], "maxsim")

    query_vectors = model.encode_query([QUESTION, "Who keeps kosher?"], convert_to_numpy=True)
    document_vectors = model.encode_document(texts, convert_to_numpy=True)
    for i, q in enumerate(query_vectors):
        for j, d in enumerate(document_vectors):
            best = []
            for token in q:  # by the definition, one token at a time
                cosines = [
                    float(token @ other) / (np.linalg.norm(token) * np.linalg.norm(other))
                    for other in d
                ]
                best.append(max(cosines))
            assert got[i, j] == pytest.approx(sum(best) / len(best), abs=1e-5)
            # The library's own MaxSim (a sum over the question's tokens), per token.
            library = float(model.similarity([q], [d])[0, 0]) / len(q)
            assert got[i, j] == pytest.approx(library, abs=1e-5)
    assert len({round(float(v), 6) for v in got.ravel()}) == got.size  # not a constant


# -- refusals and the preset ---------------------------------------------------------------


@pytest.mark.parametrize("scorings", [("whole",), ("maxsim", "chunk-max"), ("chunk-mean",)])
def test_every_scoring_but_maxsim_is_refused_before_the_model_loads(colbert_folder, scorings):
    with pytest.raises(ConfigError) as refused:
        SentenceTransformerEmbedder(str(colbert_folder), device="cpu", scorings=scorings)
    error = refused.value
    assert "late-interaction (multi-vector, ColBERT-style) model" in error.problem
    assert error.problem.startswith(
        f"--niah-scoring={','.join(s for s in scorings if s != 'maxsim')}:"
    )
    assert (
        error.hint
        == "use --niah-scoring=maxsim for this model (it scores its token vectors by MaxSim)"
    )

    config = NiahConfig(model=str(colbert_folder), scoring=scorings)
    with pytest.raises(ConfigError, match="late-interaction"):
        load_embedder(config)
    embedder = load_embedder(NiahConfig(model=str(colbert_folder), scoring=("maxsim",)))
    assert "model" not in embedder.__dict__  # nothing loaded to decide


def test_encode_kwargs_are_refused_since_they_would_reach_nothing(colbert_folder):
    with pytest.raises(ConfigError) as refused:
        SentenceTransformerEmbedder(
            str(colbert_folder), scorings=("maxsim",), encode_kwargs={"task": "query"}
        )
    assert refused.value.problem.startswith("--niah-encode-kwargs: model ")
    assert "'task' would not reach" in refused.value.problem
    assert refused.value.hint.startswith("drop --niah-encode-kwargs for this model")


@pytest.fixture
def colbert_hub(colbert_folder, tmp_path, monkeypatch) -> Path:
    """A hub cache in which lightonai/GTE-ModernColBERT-v1 is the tiny model."""
    import huggingface_hub.constants

    root = tmp_path / "hub"
    repo = root / ("models--" + COLBERT.replace("/", "--"))
    link_into_blobs(Path(shutil.copytree(colbert_folder, repo / "snapshots" / REVISION)))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION, encoding="utf-8")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(root))
    return root


def test_the_colbert_preset_reads_8192_token_documents_and_only_maxsim(colbert_hub):
    preset = MODEL_PRESETS[COLBERT]
    assert preset.max_seq_length == 8192 and not preset.remote_code
    assert (preset.query_prompt, preset.doc_prompt) == ("", "")  # its own [Q]/[D] markers
    assert (preset.query_prompt_name, preset.doc_prompt_name) == ("", "")
    assert preset.encode_kwargs == {}

    embedder = SentenceTransformerEmbedder(COLBERT, device="cpu", scorings=("maxsim",))
    assert embedder.max_seq_length == 8192
    assert embedder.notes == [f"{COLBERT}: {preset.note}"]
    settings = embedder.identity.parts["settings"]
    assert settings["max_seq_length"] == 8192 and settings["model_class"] == "MultiVectorEncoder"
    assert embedder.identity.parts["source"]["revision"] == REVISION
    assert "model" not in embedder.__dict__  # the preset resolves without a load
    with pytest.raises(ConfigError, match="late-interaction"):
        SentenceTransformerEmbedder(COLBERT, device="cpu", scorings=("whole",))


# -- end to end ------------------------------------------------------------------------------

ARMS = ("onehop", "literal", "expand100", "expand150", "expand250")
GROUPS = ("dietary-01", "medical-01")


def run_niah(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        "-p",
        "no:xdist",
        "-p",
        "no:randomly",
        "--niah-corpus=packaged",
        "--niah-lengths=128,256",
        "--niah-positions=2",
        f"--niah-groups={','.join(GROUPS)}",
        *args,
    )


def brute_force_maxsim(question: np.ndarray, document: np.ndarray) -> float:
    unit_q = question / np.linalg.norm(question, axis=1, keepdims=True)
    unit_d = document / np.linalg.norm(document, axis=1, keepdims=True)
    return float(np.mean([max(float(t @ o) for o in unit_d) for t in unit_q]))


@pytest.mark.slow
def test_a_maxsim_run_on_the_tiny_colbert_scores_every_arm_and_gates_them(
    pytester, colbert_folder, colbert, monkeypatch
):
    from pytest_niah.inputs.needles import builtin_needle_set

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = run_niah(
        pytester,
        f"--niah-model={colbert_folder}",
        "--niah-scoring=maxsim",
        f"--niah-arms={','.join(ARMS)}",
        "--niah-json=out.json",
        "-rA",
    )
    text = result.stdout.str() + result.stderr.str()
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), text
    assert "Traceback" not in text and "INTERNALERROR" not in text
    outcomes = result.parseoutcomes()
    cases = len(GROUPS) * len(ARMS) * 2 * 2 * 2  # groups x arms x orders x lengths x positions
    gates = [f"gate-{arm}-maxsim-L{n}" for arm in ARMS for n in (128, 256)]
    ran = sum(outcomes.get(k, 0) for k in ("passed", "failed", "xfailed", "xpassed"))
    assert ran == cases + len(gates), outcomes
    assert outcomes.get("xfailed", 0) > 0  # needles past the 200-token documents
    for gate in gates:
        assert f"test_gate[{gate}]" in text, gate

    data = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert data["model"]["identity"]["settings"]["model_class"] == "MultiVectorEncoder"
    assert {c["scoring"] for c in data["cases"]} == {"maxsim"}
    assert {c["arm"] for c in data["cases"]} == set(ARMS) and len(data["cases"]) == cases
    assert all(-1 <= c["cos_qh"] <= 1 and c["problem"] is None for c in data["cases"])
    assert {(r["arm"], r["scoring"]) for r in data["retrieval"]} == {(a, "maxsim") for a in ARMS}
    # The document window is the model's document length (the probe, on pooled token
    # vectors, sees it too): needles past it are unread.
    assert data["model"]["measured_window"] == DOCUMENT_LENGTH - SPECIALS - MARKER
    assert any(c["truncated"] for c in data["cases"] if c["length"] == 256)
    assert not any(c["truncated"] for c in data["cases"] if c["length"] == 128)

    # Question against needle alone, by the definition, from the library's own vectors.
    groups = {g.id: g for g in builtin_needle_set().groups}
    model = colbert.model
    checked = 0
    for case in data["cases"]:
        if case["arm"] != "onehop" or case["position"] != 0 or case["length"] != 128:
            continue
        group = groups[case["group_id"]]
        needle = group.needle("onehop", case["order"], case["name"])
        (question,) = model.encode_query([group.question], convert_to_numpy=True)
        (document,) = model.encode_document([needle], convert_to_numpy=True)
        assert case["cos_qn"] == pytest.approx(brute_force_maxsim(question, document), abs=1e-5)
        checked += 1
    assert checked == len(GROUPS) * 2


def test_the_default_whole_scoring_on_the_tiny_colbert_is_one_usage_error(pytester, colbert_folder):
    result = run_niah(pytester, f"--niah-model={colbert_folder}")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    assert "no tests ran" in text  # stopped before the model loads or anything is embedded
    assert text.count("pytest-niah could not run 'tiny-colbert': --niah-scoring=whole: model") == 1
    assert "late-interaction" in text and "Fix: use --niah-scoring=maxsim for this model" in text
    assert "Traceback" not in text


def test_a_pylate_dense_module_needs_no_trust_flag_but_other_code_does(tmp_path):
    """sentence-transformers maps PyLate's Dense to its own class without importing pylate."""
    import json

    from pytest_niah.embed.model_folder import modules_outside_sentence_transformers

    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Dense", "type": "pylate.models.Dense.Dense"},
    ]
    (tmp_path / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    assert modules_outside_sentence_transformers(tmp_path) == []
    modules.append({"idx": 2, "name": "2", "path": "", "type": "pylate.models.Other.Other"})
    (tmp_path / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    assert modules_outside_sentence_transformers(tmp_path) == ["pylate.models.Other.Other"]
