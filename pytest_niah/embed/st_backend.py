"""The sentence-transformers backend: any model by hub name, local folder or packaged alias.

Nothing heavy happens until it is needed: :attr:`identity` hashes the model's files (memoised)
without importing torch, which is all a warm run asks for; the model loads on first use of
:attr:`tokenizer`, :attr:`windows` or :meth:`encode`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config.options import default
from pytest_niah.embed import st_late_interaction as late
from pytest_niah.embed.device import Placement, confirmed_by_torch, resolve_placement
from pytest_niah.embed.fast_tokenizer import HaystackTokenizer
from pytest_niah.embed.identity import ModelIdentity, cached_hub_folder
from pytest_niah.embed.model_options import check_model_options
from pytest_niah.embed.models import (
    PACKAGED,
    check_model_name,
    is_static_model,
    looks_local,
    resolve_model_name,
)
from pytest_niah.embed.presets import MODEL_PRESETS
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.st_identity import hub_revision, st_identity
from pytest_niah.embed.st_ids_path import ids_path
from pytest_niah.embed.st_inputs import (
    FeatureBuilder,
    Specials,
    specials_of,
)
from pytest_niah.embed.st_inputs import forward as model_forward
from pytest_niah.embed.st_loading import (
    backend_tokenizer,
    declared_window,
    is_static_embedding,
    source_folder,
    text_tokenizer,
    text_windows,
    token_limits,
)
from pytest_niah.embed.st_model import load_model, sentence_transformer_class
from pytest_niah.embed.st_multi_vector import (
    encode_token_vectors,
    named_prompt,
    token_vector_encoder,
)
from pytest_niah.haystacks.plan import QUERY, ModelInput, base_kind, is_multi


class SentenceTransformerEmbedder:
    """Any sentence-transformers (or model2vec) model, loaded on first use.

    Args:
        name: Hub name, local path, or a packaged alias (``packaged-minilm``,
            ``packaged-static``).
        device: ``auto`` (cuda, mps, cpu), a torch device, or a comma list of GPUs.
        dtype: ``auto`` is bfloat16 (float16 without it) on a GPU, float32 elsewhere.
        trust_remote_code: Allow the model's own code from the hub to run.
        model_kwargs: Extra ``SentenceTransformer(model_kwargs=...)`` entries.
        encode_kwargs: Extra keyword arguments for every ``encode`` call (e.g. ``task``).
        query_prompt: Before every question; empty uses the preset's (its text, or its name
            among the model's prompts), else the model's own.
        doc_prompt: Before every document; likewise.
        max_seq_length: Override of the model's window (else the preset's, if it sets one).
        memo_dir: Where file hashes are memoised (the cache root); ``None``: not memoised.
        scorings: The run's scorings (a late-interaction model takes maxsim only), or ``None``.
    """

    fits_on_documents = False

    def __init__(
        self,
        name: str,
        *,
        device: str = default("device"),
        dtype: str = default("dtype"),
        trust_remote_code: bool = False,
        model_kwargs: Mapping[str, Any] | None = None,
        encode_kwargs: Mapping[str, Any] | None = None,
        query_prompt: str = "",
        doc_prompt: str = "",
        max_seq_length: int | None = None,
        memo_dir: Path | None = None,
        scorings: Sequence[str] | None = None,
    ) -> None:
        self.name = name
        self.scorings = tuple(scorings) if scorings is not None else None
        self.path = resolve_model_name(name)
        preset = MODEL_PRESETS.get(name)
        self.requested = (device, dtype)
        self.placement: Placement = resolve_placement(device, dtype)
        self.trust_remote_code = trust_remote_code
        self.model_kwargs = {
            k: v for k, v in dict(model_kwargs or {}).items() if k != "trust_remote_code"
        }
        self.encode_kwargs = dict(preset.encode_kwargs if preset else {}) | dict(
            encode_kwargs or {}
        )
        self.query_prompt = query_prompt or (preset.query_prompt if preset else "")
        self.doc_prompt = doc_prompt or (preset.doc_prompt if preset else "")
        # A prompt given as text wins over the preset's prompt name.
        self.query_prompt_name = "" if self.query_prompt or not preset else preset.query_prompt_name
        self.doc_prompt_name = "" if self.doc_prompt or not preset else preset.doc_prompt_name
        if max_seq_length is None and preset is not None:
            max_seq_length = preset.max_seq_length
        self.max_seq_length = max_seq_length
        self.memo_dir = memo_dir
        self.static = name in PACKAGED and PACKAGED[name].static
        self.notes: list[str] = [f"{name}: {preset.note}"] if preset and preset.note else []
        self._pool: Any = None
        check_model_options(
            name,
            self.model_kwargs,
            self.encode_kwargs,
            static=is_static_model(self.path),
        )
        if late.is_late_interaction_folder(self._local_folder()):  # refused before any load
            late.check_late_interaction_options(name, self.scorings, self.encode_kwargs)

    # -- identity (cheap) ---------------------------------------------------------------------

    @cached_property
    def identity(self) -> ModelIdentity:
        """Content of the model files (or hub revision), settings and library versions."""
        folder = self._local_folder()
        if folder is None:
            folder = source_folder(self.model)  # not cached: load (downloads) to find out
        return st_identity(self, folder)

    def _cached_revision(self) -> str | None:
        if looks_local(self.path) or self._local_folder() is None:
            return None  # not in the hub cache: the identity is taken after loading
        return hub_revision(self.identity)

    def _local_folder(self) -> Path | None:
        if looks_local(self.path):
            return Path(self.path)
        if "_hub_folder" not in self.__dict__:  # one answer per run, even if the hub moves
            self.__dict__["_hub_folder"] = cached_hub_folder(self.path)
        folder: Path | None = self.__dict__["_hub_folder"]
        return folder

    # -- the loaded model --------------------------------------------------------------------

    @cached_property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loads on first access)."""
        check_model_name(self.name, trust_remote_code=self.trust_remote_code)
        loader = sentence_transformer_class()
        revision = self._cached_revision()  # before any re-key below
        placement = confirmed_by_torch(*self.requested)
        if placement != self.placement:
            self.placement = placement
            self.__dict__.pop("identity", None)  # torch knows better than the probe: re-key
        return load_model(self, loader, placement, revision, self._local_folder)

    # -- what the engine reads ---------------------------------------------------------------

    @cached_property
    def tokenizer(self) -> HaystackTokenizer:
        """The model's tokenizer, for haystacks of exact token lengths."""
        backend = backend_tokenizer(self.name, self.model)
        unwrapped = getattr(self.model[0], "tokenizer", None) is backend
        return HaystackTokenizer(backend, reuse=unwrapped and is_static_embedding(self.model))

    @cached_property
    def specials(self) -> Specials:
        """The special tokens the tokenizer's template adds around a text."""
        if is_static_embedding(self.model):
            return Specials((), (), 0)  # an embedding bag: no template, no special tokens
        return specials_of(text_tokenizer(self.model))

    @cached_property
    def prompt_ids(self) -> dict[str, tuple[int, ...]]:
        """The token ids of the prompt before questions and before documents."""
        out = {}
        for kind, prompt in ((QUERY, self.prompt(QUERY)), ("document", self.prompt("document"))):
            ids = self.tokenizer.encode_batch([prompt])[0].ids if prompt else []
            out[kind] = tuple(int(i) for i in ids)
        return out

    def prompt(self, kind: str) -> str:
        """The prompt before every input of ``kind``: given, the preset's, else the model's."""
        explicit = self.query_prompt if kind == QUERY else self.doc_prompt
        if explicit:
            return explicit
        prompts = getattr(self.model, "prompts", None) or {}
        name = self.query_prompt_name if kind == QUERY else self.doc_prompt_name
        if name:
            return named_prompt(self.name, prompts, name)
        return str(prompts.get(kind, "") or "")

    @cached_property
    def windows(self) -> Windows:
        """Window minus special and prompt tokens, for questions and documents."""
        query_limit, window = token_limits(self.model)
        if window is None or query_limit is None:
            return Windows(None, None)
        return text_windows(self.name, query_limit, window, self.specials.count, self.prompt_ids)

    # -- embedding ---------------------------------------------------------------------------

    @cached_property
    def _features(self) -> FeatureBuilder | None:
        """How to build features from ids, or ``None`` where only ``encode`` is right."""
        return ids_path(self)

    @property
    def reads_text(self) -> bool:
        """Whether inputs go through ``encode`` as text (the ids path does not apply)."""
        return self._features is None

    @property
    def multi_vector(self) -> bool:
        """Whether the model gives token vectors (``--niah-scoring=maxsim``)."""
        model = self.model
        return late.is_late_interaction(model) or token_vector_encoder(model) is not None

    def encode(self, inputs: Sequence[ModelInput]) -> Any:
        """Embed inputs of one kind (a batch the runner formed).

        Inputs read as token vectors give one tokens x dimensions array each (a list).
        """
        if not inputs:
            return np.zeros((0, 0), dtype=np.float32)
        kind = inputs[0].kind
        if late.is_late_interaction(self.model):  # pooled for plain kinds: the window probe's
            return late.encode_inputs(
                self.model, [i.text for i in inputs], kind, self.prompt(base_kind(kind))
            )
        if is_multi(kind):
            query = base_kind(kind) == QUERY
            return encode_token_vectors(
                self.name,
                token_vector_encoder(self.model),
                [i.text for i in inputs],
                task=self.encode_kwargs.get("task"),
                prompt_name=self.query_prompt_name if query else self.doc_prompt_name,
                explicit_prompt=self.query_prompt if query else self.doc_prompt,
                max_length=declared_window(self.model),
            )
        build = self._features
        if build is None:
            return self.encode_texts([i.text for i in inputs], self.prompt(kind))
        return self.forward(build([i.ids for i in inputs], self.prompt_ids[kind]))

    def forward(self, features: dict[str, Any]) -> np.ndarray:
        """Embed features built from ids (the ids path)."""
        return model_forward(self.model, features)

    def encode_texts(self, texts: list[str], prompt: str) -> np.ndarray:
        """Embed texts through the model's own ``encode``, after ``prompt``."""
        kwargs = dict(self.encode_kwargs)
        if prompt:
            kwargs["prompt"] = prompt
        if len(self.placement.devices) > 1:
            if self._pool is None:
                self._pool = self.model.start_multi_process_pool(list(self.placement.devices))
            kwargs["pool"] = self._pool
        rows = self.model.encode(
            texts,
            batch_size=max(len(texts), 1),
            convert_to_numpy=True,
            show_progress_bar=False,
            **kwargs,
        )
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)

    def close(self) -> None:
        """Stop the multi-process pool, if one was started."""
        if self._pool is not None:
            self.model.stop_multi_process_pool(self._pool)
            self._pool = None
