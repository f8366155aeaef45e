"""Settings a local model needs to be measured as its authors intend.

Served models' presets are in :mod:`pytest_niah.embed.remote_presets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Preset:
    """Settings a model needs to be measured as its authors intend; each one overridable.

    Attributes:
        encode_kwargs: Keyword arguments for every ``encode`` call (e.g. a task adapter).
        query_prompt: Text before every question, where the model wants one.
        doc_prompt: Text before every document.
        query_prompt_name: The name, among the model's own prompts (``prompt_name=``), of the
            prompt before every question; its text is read from the loaded model.
        doc_prompt_name: Likewise before every document.
        max_seq_length: The window to read, where the model's code sets a shorter one than
            its card gives.
        remote_code: The model runs its own code from the hub.
        note: What the preset does, printed when it is applied.
    """

    encode_kwargs: dict[str, Any] = field(default_factory=dict)
    query_prompt: str = ""
    doc_prompt: str = ""
    query_prompt_name: str = ""
    doc_prompt_name: str = ""
    max_seq_length: int | None = None
    remote_code: bool = False
    note: str = ""


# Settings a model needs to reproduce the study; users can still override each one.
MODEL_PRESETS: dict[str, Preset] = {
    "jinaai/jina-embeddings-v3": Preset(
        encode_kwargs={"task": "text-matching"},
        remote_code=True,
        note="the study's text-matching adapter (task='text-matching')",
    ),
    # The port to transformers' own JinaEmbeddingsV3 classes (in transformers 5) runs no
    # remote code, and takes no task: its LoRA adapters are PEFT adapters in subfolders
    # (retrieval_query, text_matching, ...) that model.load_adapter()/set_adapter() select.
    # sentence-transformers loads the base weights, and encode(task=...) would be silently
    # ignored, so the preset sets nothing and only says what is measured.
    "jinaai/jina-embeddings-v3-hf": Preset(
        note="the transformers port, measured without a task adapter (its base weights), "
        "not with the study's text-matching adapter; see jinaai/jina-embeddings-v3",
    ),
    # jina-embeddings-v4, from its hub repository (https://huggingface.co/jinaai/jina-embeddings-v4:
    # README.md, custom_st.py, modeling_jina_embeddings_v4.py). Through sentence-transformers,
    # encode(texts, task=..., prompt_name=...) reaches custom_st.Transformer.forward(task=...),
    # which returns the single vector (single_vec_emb, mean pooling); its prompts are named
    # "query" ("Query: ") and "passage" ("Passage: "). The model's own encode_text() reads every
    # text-matching text with the "Query" prefix (PREFIX_DICT["query"]), so questions and
    # haystacks both get prompt_name="query". Token vectors (--niah-scoring=maxsim: 128
    # dimensions each) come only from that encode_text(..., return_multivector=True), which the
    # module holds as its .model. custom_st.Transformer reads "max_seq_length or 8192" tokens;
    # the card gives 32768 ("Max Sequence Length").
    "jinaai/jina-embeddings-v4": Preset(
        encode_kwargs={"task": "text-matching"},
        query_prompt_name="query",
        doc_prompt_name="query",
        max_seq_length=32768,
        remote_code=True,
        note="the text-matching adapter (task='text-matching', prompt_name='query' for "
        "questions and haystacks), a 32,768-token window; --niah-scoring=maxsim scores its "
        "multi-vector output",
    ),
    "jinaai/jina-embeddings-v2-base-en": Preset(remote_code=True),
    # A PyLate ColBERT on gte-modernbert-base (8,192 positions), loaded as sentence-transformers'
    # MultiVectorEncoder (pytest_niah.embed.st_late_interaction), which reads its [Q]/[D]
    # markers, 32-token queries (with [MASK] expansion) and punctuation skiplist from its own
    # config. That config reads 300-token documents, its training length; the model card
    # (https://huggingface.co/lightonai/GTE-ModernColBERT-v1) evaluates LongEmbed with
    # document_length=8192, so the preset reads 8,192 (a late-interaction model's window is
    # its document length). Token vectors only: --niah-scoring=maxsim.
    "lightonai/GTE-ModernColBERT-v1": Preset(
        max_seq_length=8192,
        note="a late-interaction (ColBERT) model: 8,192-token documents, as its model card "
        "evaluates long documents (it was trained on 300); its own [Q]/[D] markers and "
        "32-token queries; scored by --niah-scoring=maxsim only",
    ),
    "nomic-ai/nomic-embed-text-v1.5": Preset(
        query_prompt="search_query: ",
        doc_prompt="search_document: ",
        remote_code=True,
        note="nomic's search_query:/search_document: prefixes",
    ),
    "nomic-ai/nomic-embed-text-v2-moe": Preset(
        query_prompt="search_query: ",
        doc_prompt="search_document: ",
        remote_code=True,
        note="nomic's search_query:/search_document: prefixes",
    ),
    "intfloat/e5-large-v2": Preset(
        query_prompt="query: ", doc_prompt="passage: ", note="e5's query:/passage: prefixes"
    ),
    "intfloat/multilingual-e5-large": Preset(
        query_prompt="query: ", doc_prompt="passage: ", note="e5's query:/passage: prefixes"
    ),
    "Snowflake/snowflake-arctic-embed-l-v2.0": Preset(
        query_prompt="query: ", note="arctic-embed's query: prefix (documents get none)"
    ),
    **{
        f"Qwen/Qwen3-Embedding-{size}": Preset(
            query_prompt=(
                "Instruct: Given a web search query, retrieve relevant passages that answer "
                "the query\nQuery:"
            ),
            note="Qwen3-Embedding's retrieval instruction before questions",
        )
        for size in ("0.6B", "4B", "8B")
    },
}
