"""Presets of hosted embedding APIs: the tokenizer and window a served model name implies.

With a preset, ``--niah-model=openai+https://api.openai.com/v1#text-embedding-3-small`` is the
one option a run needs: ``--niah-tokenizer`` and ``--niah-max-seq-length`` default to the
preset's (either one given wins). A preset is looked up by the model name after ``#``, whatever
the endpoint (a gateway that relays the API serves the same model). The window applies when
the server reports no ``max_model_len`` (hosted APIs do not).

Kept apart from :data:`pytest_niah.embed.presets.MODEL_PRESETS`, which holds local models'
settings (prompts, adapters) that a served model cannot take.
"""

from __future__ import annotations

from dataclasses import dataclass

# --niah-tokenizer=tiktoken:NAME|PATH (pytest_niah.embed.tiktoken_tokenizer, which imports numpy).
TIKTOKEN_PREFIX = "tiktoken:"


def is_tiktoken(spec: str) -> bool:
    """``spec`` names a tiktoken encoding or ranks file."""
    return spec.startswith(TIKTOKEN_PREFIX)


@dataclass(frozen=True)
class RemotePreset:
    """What a hosted model reads.

    Attributes:
        tokenizer: Its tokenizer, as ``--niah-tokenizer`` takes it.
        max_seq_length: Its input limit in tokens, special tokens included.
        api_key_env: The environment variable its provider's clients read the key from (the
            run reads ``--niah-api-key-env``; the note names this one).
        source: Where the tokenizer and window are documented.
    """

    tokenizer: str
    max_seq_length: int
    api_key_env: str
    source: str

    def note(self, model: str) -> str:
        """What the preset set, printed when it applies."""
        return (
            f"{model}: preset: tokenizer {self.tokenizer}, a window of {self.max_seq_length} "
            f"tokens, the key from --niah-api-key-env (its provider's is {self.api_key_env})"
        )


# OpenAI: text-embedding-3-* and ada-002 read at most 8191 tokens of cl100k_base (the
# embeddings guide, https://platform.openai.com/docs/guides/embeddings, and the cookbook's
# "Embedding texts that are longer than the model's maximum context length": EMBEDDING_CTX_LENGTH
# = 8191, EMBEDDING_ENCODING = 'cl100k_base'). The API adds no special tokens.
_OPENAI = RemotePreset(
    tokenizer="tiktoken:cl100k_base",
    max_seq_length=8191,
    api_key_env="OPENAI_API_KEY",
    source="https://platform.openai.com/docs/guides/embeddings",
)
# Voyage AI publishes its tokenizers on the Hugging Face hub
# (https://docs.voyageai.com/docs/tokenization: "Voyage's tokenizers are available on Hugging
# Face"; voyageai/voyage-3 holds tokenizer.json) and gives voyage-3 a context length of 32,000
# tokens (https://docs.voyageai.com/docs/embeddings). Its POST /v1/embeddings takes and returns
# the OpenAI shape: openai+https://api.voyageai.com/v1#voyage-3 --niah-api-key-env=VOYAGE_API_KEY.
# The tokenizer is read from the local hub cache: download it once (its tokenizer.json).
_VOYAGE_3 = RemotePreset(
    tokenizer="voyageai/voyage-3",
    max_seq_length=32000,
    api_key_env="VOYAGE_API_KEY",
    source="https://docs.voyageai.com/docs/tokenization",
)

REMOTE_PRESETS: dict[str, RemotePreset] = {
    "text-embedding-3-small": _OPENAI,
    "text-embedding-3-large": _OPENAI,
    "text-embedding-ada-002": _OPENAI,
    "voyage-3": _VOYAGE_3,
}


def remote_preset(model: str) -> RemotePreset | None:
    """The preset of a served model name (the part after ``#``), or ``None``."""
    return REMOTE_PRESETS.get(model)


def served_tokenizer(given: str, model: str) -> str:
    """``--niah-tokenizer`` if given, else the model's preset tokenizer, else ``''``."""
    if given.strip():
        return given
    preset = remote_preset(model)
    return preset.tokenizer if preset is not None else ""
