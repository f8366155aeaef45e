"""What the engine needs from a model: its identity, its tokenizer, its windows, and vectors."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pytest_niah.embed.identity import ModelIdentity
from pytest_niah.haystacks.plan import ModelInput
from pytest_niah.haystacks.tokens import Tokenizer


@dataclass(frozen=True)
class Windows:
    """How many tokens of an input the model reads, prompt and special tokens aside.

    ``None`` reads every token (a static model, the lexical baseline).
    """

    query: int | None
    document: int | None


@runtime_checkable
class Embedder(Protocol):
    """A model under test.

    ``identity`` must be cheap (no model load) where it can be: a warm run needs nothing
    else. ``tokenizer``, ``windows`` and ``encode`` may load the model.
    """

    name: str

    @property
    def identity(self) -> ModelIdentity:
        """Everything that changes the model's embeddings (see :mod:`.identity`)."""
        ...

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's own tokenizer, for haystacks of exact token lengths."""
        ...

    @property
    def windows(self) -> Windows:
        """What the model reads of queries and documents."""
        ...

    @property
    def reads_text(self) -> bool:
        """The backend embeds text (``ModelInput.text``), not token ids."""
        ...

    @property
    def fits_on_documents(self) -> bool:
        """The backend learns from the documents (TF-IDF): it needs all of them, once, first."""
        ...

    def encode(self, inputs: Sequence[ModelInput]) -> Any:
        """One row per input, float32: an ndarray (or a scipy sparse matrix)."""
        ...

    def close(self) -> None:
        """Release processes, pools and connections; closing twice is fine."""
        ...
