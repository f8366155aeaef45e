"""The embedder a config asks for: the lexical baseline, a served model, or a local one."""

from __future__ import annotations

from pathlib import Path

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.lexical import LEXICAL_PREFIX, LexicalEmbedder
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.remote_address import is_remote
from pytest_niah.embed.st_backend import SentenceTransformerEmbedder


def load_embedder(config: NiahConfig, *, memo_dir: Path | None = None) -> Embedder:
    """The embedder of ``config.model`` (not loaded yet: that happens on first use).

    Args:
        config: The experiment.
        memo_dir: Where model file hashes are memoised (the cache root), or ``None``.
    """
    if config.model.startswith(LEXICAL_PREFIX):
        return LexicalEmbedder(config.model[len(LEXICAL_PREFIX) :])
    if is_remote(config.model):
        from pytest_niah.embed.remote import RemoteEmbedder

        embedder = RemoteEmbedder(
            config.model,
            tokenizer=config.tokenizer,
            max_seq_length=config.max_seq_length,
            query_prompt=config.query_prompt,
            doc_prompt=config.doc_prompt,
            api_key_env=config.api_key_env,
            concurrency=config.remote_concurrency,
            timeout=config.remote_timeout,
            batch_size=config.batch_size,
        )
        ignored = [
            flag
            for flag, value in (
                ("--niah-model-kwargs", config.model_kwargs),
                ("--niah-encode-kwargs", config.encode_kwargs),
            )
            if value
        ]
        if ignored:
            embedder.notes.append(
                f"{embedder.remote.model}: {' and '.join(ignored)} apply to local models only; "
                "nothing of them is sent to the server"
            )
        return embedder
    return SentenceTransformerEmbedder(
        config.model,
        device=config.device,
        dtype=config.dtype,
        trust_remote_code=config.trust_remote_code,
        model_kwargs=config.model_kwargs,
        encode_kwargs=config.encode_kwargs,
        query_prompt=config.query_prompt,
        doc_prompt=config.doc_prompt,
        max_seq_length=config.max_seq_length,
        memo_dir=memo_dir,
        scorings=config.scoring,  # a late-interaction model is refused all but maxsim
    )
