"""The sentence-transformers backend: any model by hub name, local folder or packaged alias.

Nothing heavy happens until it is needed: :attr:`identity` hashes the model's files (memoised)
without importing torch, which is all a warm run asks for; the model loads on first use of
:attr:`tokenizer`, :attr:`windows` or :meth:`encode`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.config.options import default
from pytest_niah.embed.device import Placement, confirmed_by_torch, resolve_placement
from pytest_niah.embed.identity import (
    ModelIdentity,
    cached_hub_folder,
    folder_source,
    model_identity,
)
from pytest_niah.embed.models import (
    MODEL_PRESETS,
    PACKAGED,
    check_model_name,
    is_model2vec_folder,
    looks_local,
    resolve_model_name,
)
from pytest_niah.embed.protocol import Windows
from pytest_niah.embed.st_inputs import (
    AGREEMENT,
    Specials,
    StaticFeatures,
    TransformerFeatures,
    agrees_with_encode,
    specials_of,
)
from pytest_niah.errors import ConfigError, EmbedderError
from pytest_niah.haystacks.plan import QUERY, ModelInput

# encode() arguments pytest-niah sets itself: a user value would break what it measures.
ENGINE_OWNED = {
    "batch_size": "pytest-niah batches inputs itself (see --niah-token-budget)",
    "convert_to_numpy": "pytest-niah reads float32 arrays",
    "convert_to_tensor": "pytest-niah reads float32 arrays",
    "output_value": "pytest-niah scores sentence embeddings",
    "precision": "pytest-niah scores float32 embeddings; quantized ones change the scores",
    "normalize_embeddings": "pytest-niah normalizes for the cosine itself",
    "show_progress_bar": "pytest-niah shows its own progress",
    "device": "use --niah-device",
    "pool": "use --niah-device=cuda:0,cuda:1",
    "chunk_size": "use --niah-device=cuda:0,cuda:1",
    "prompt": "use --niah-query-prompt / --niah-doc-prompt",
    "prompt_name": "use --niah-query-prompt / --niah-doc-prompt",
}


class HaystackTokenizer:
    """A model's fast tokenizer with truncation and padding off: a copy, or the model's own.

    Args:
        backend: The model's ``tokenizers.Tokenizer``.
        reuse: The model reads ``backend`` only through ``encode_batch`` (no transformers
            wrapper re-configures it per call, as for sentence-transformers' static models):
            if it neither truncates nor pads, it is read as it is. That spares parsing a copy,
            half a second for a static model's large vocabulary.
    """

    def __init__(self, backend: Any, *, reuse: bool = False) -> None:
        from tokenizers import Tokenizer

        if reuse and backend.truncation is None and backend.padding is None:
            self._tokenizer = backend
            return
        self._tokenizer = Tokenizer.from_str(backend.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    @cached_property
    def identity(self) -> str:
        """sha256 of the tokenizer's full serialization."""
        import hashlib

        return hashlib.sha256(self._tokenizer.to_str().encode()).hexdigest()

    def encode_batch(self, texts: Sequence[str]) -> list[Any]:
        """Encodings without special tokens (multi-threaded in the Rust library)."""
        return list(self._tokenizer.encode_batch(list(texts), add_special_tokens=False))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Token counts: the same ids as :meth:`encode_batch`, without tracking offsets."""
        encoded = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        return [len(encoding) for encoding in encoded]


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
        query_prompt: Before every question; empty uses the preset's, else the model's own.
        doc_prompt: Before every document; likewise.
        max_seq_length: Override of the model's window.
        memo_dir: Where file hashes are memoised (the cache root); ``None``: not memoised.
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
    ) -> None:
        self.name = name
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
        self.max_seq_length = max_seq_length
        self.memo_dir = memo_dir
        self.static = name in PACKAGED and PACKAGED[name].static
        self.notes: list[str] = [f"{name}: {preset.note}"] if preset and preset.note else []
        self._pool: Any = None
        _check_encode_kwargs(self.encode_kwargs)

    # -- identity (cheap) ---------------------------------------------------------------------

    @cached_property
    def identity(self) -> ModelIdentity:
        """Content of the model files (or hub revision), settings and library versions."""
        folder = self._local_folder()
        if folder is None:
            folder = _source_folder(self.model)  # not cached: load (downloads) to find out
        source = folder_source(folder, self.memo_dir) if folder is not None else {"name": self.name}
        settings = {
            "device_type": self.placement.device_type,
            "dtype": self.placement.dtype,
            "max_seq_length": self.max_seq_length,
            "query_prompt": self.query_prompt,
            "doc_prompt": self.doc_prompt,
            "model_kwargs": self.model_kwargs,
            "encode_kwargs": self.encode_kwargs,
            "reads_every_token": self.static,
        }
        return model_identity(source, settings)

    def _cached_revision(self) -> str | None:
        if looks_local(self.path) or self._local_folder() is None:
            return None  # not in the hub cache: the identity is taken after loading
        source = self.identity.parts["source"]
        if source.get("kind") != "hub" or "subfolder" in source:
            return None
        return str(source["revision"])

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
        from sentence_transformers import SentenceTransformer

        _quiet_transformers()
        revision = self._cached_revision()  # before any re-key below
        placement = confirmed_by_torch(*self.requested)
        if placement != self.placement:
            self.placement = placement
            self.__dict__.pop("identity", None)  # torch knows better than the probe: re-key
        device = placement.devices[0]
        try:
            if self.static or (looks_local(self.path) and is_model2vec_folder(Path(self.path))):
                module = _static_embedding().from_model2vec(self.path)
                model = SentenceTransformer(modules=[module], device=device)
            else:
                kwargs: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
                if self.model_kwargs:
                    kwargs["model_kwargs"] = self.model_kwargs | {
                        "trust_remote_code": self.trust_remote_code
                    }
                if revision is not None:
                    # The identity named this commit: load it, not a newer one on the hub.
                    kwargs["revision"] = revision
                model = SentenceTransformer(self.path, device=device, **kwargs)
        except Exception as exc:
            raise EmbedderError(*self._load_failure(exc)) from exc
        if placement.dtype != "float32":
            import torch

            model.to(getattr(torch, placement.dtype))
        if self.static:
            first: Any = model[0]
            first.tokenizer.no_truncation()  # read every token: the model has no window
        if self.max_seq_length is not None:
            _set_window(self.name, model, self.max_seq_length)
        _check_vocabulary(self.name, self._backend_tokenizer(model))
        self._check_kwargs_with(model)
        return model

    def _backend_tokenizer(self, model: Any) -> Any:
        first = model[0]
        tokenizer = getattr(first, "tokenizer", None)
        backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
        if backend is None or not hasattr(backend, "encode_batch"):
            raise EmbedderError(
                f"model {self.name!r} has no fast (Rust) tokenizer with character offsets, which "
                "pytest-niah needs to build haystacks of exact token lengths",
                "save the model with a tokenizer.json (AutoTokenizer.from_pretrained(..., "
                "use_fast=True).save_pretrained)",
            )
        return backend

    def _check_kwargs_with(self, model: Any) -> None:
        accepted = set(model.get_model_kwargs()) | {"task", "processing_kwargs", "truncate_dim"}
        unknown = sorted(set(self.encode_kwargs) - accepted)
        if unknown:
            raise ConfigError(
                f"--niah-encode-kwargs: model {self.name!r} takes no "
                + ", ".join(map(repr, unknown)),
                "remove it; this model's encode() accepts "
                + (", ".join(sorted(accepted)) or "no extra keyword arguments"),
            )

    def _load_failure(self, exc: Exception) -> tuple[str, str]:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        problem = f"could not load model {self.name!r} ({type(exc).__name__}: {first})"
        if "trust_remote_code" in str(exc):
            return (
                problem,
                "this model runs its own code; if you trust it, add --niah-trust-remote-code",
            )
        if looks_local(self.path):
            return problem, (
                f"the folder {self.path!r} does not hold a model sentence-transformers can load; "
                "check that it has config.json, the weights and the tokenizer files, or save the "
                "model again with SentenceTransformer.save(...)"
            )
        if os.environ.get("HF_HUB_OFFLINE") == "1" or "offline" in str(exc).lower():
            return problem, (
                "the hub is offline here, so the model must already be in the Hugging Face cache "
                "or be a local folder; download it once with network access, or pass a local path"
            )
        return problem, "check the hub name (org/model) or the local folder, and the network"

    # -- what the engine reads ---------------------------------------------------------------

    @cached_property
    def tokenizer(self) -> HaystackTokenizer:
        """The model's tokenizer, for haystacks of exact token lengths."""
        backend = self._backend_tokenizer(self.model)
        unwrapped = getattr(self.model[0], "tokenizer", None) is backend
        return HaystackTokenizer(backend, reuse=unwrapped and _is_static(self.model))

    @cached_property
    def _specials(self) -> Specials:
        if _is_static(self.model):
            return Specials((), (), 0)  # an embedding bag: no template, no special tokens
        return specials_of(self.model.tokenizer)

    @cached_property
    def _prompt_ids(self) -> dict[str, tuple[int, ...]]:
        out = {}
        for kind, prompt in ((QUERY, self._prompt(QUERY)), ("document", self._prompt("document"))):
            ids = self.tokenizer.encode_batch([prompt])[0].ids if prompt else []
            out[kind] = tuple(int(i) for i in ids)
        return out

    def _prompt(self, kind: str) -> str:
        explicit = self.query_prompt if kind == QUERY else self.doc_prompt
        if explicit:
            return explicit
        prompts = getattr(self.model, "prompts", None) or {}
        return str(prompts.get(kind, "") or "")

    @cached_property
    def windows(self) -> Windows:
        """Window minus special and prompt tokens, for questions and documents."""
        window = self._window(self.model)
        if window is None:
            return Windows(None, None)
        reads = {
            kind: max(window - self._specials.count - len(ids), 0)
            for kind, ids in self._prompt_ids.items()
        }
        return Windows(reads[QUERY], reads["document"])

    def _window(self, model: Any) -> int | None:
        limits = []
        seq = model.max_seq_length
        if seq is not None and not (isinstance(seq, float) and math.isinf(seq)):
            limits.append(int(seq))
        truncation = getattr(getattr(model[0], "tokenizer", None), "truncation", None)
        if _is_static(model) and isinstance(truncation, dict) and truncation.get("max_length"):
            # sentence-transformers reports no limit (inf) for a static model, but its tokenizer
            # cuts every text before the model sees it (model2vec folders: 512 tokens). Only
            # packaged-static has truncation switched off, to read every token.
            limits.append(int(truncation["max_length"]))
        return min(limits) if limits else None

    # -- embedding ---------------------------------------------------------------------------

    @cached_property
    def _features(self) -> Callable[[Sequence[np.ndarray], Sequence[int]], dict[str, Any]] | None:
        """How to build features from ids, or ``None`` where only ``encode`` is right."""
        model = self.model
        if self.encode_kwargs or len(self.placement.devices) > 1:
            return None
        first = type(model[0]).__name__
        if first == "StaticEmbedding":
            build: Any = StaticFeatures()
        elif first == "Transformer" and hasattr(model.tokenizer, "backend_tokenizer"):
            names = getattr(model.tokenizer, "model_input_names", [])
            build = TransformerFeatures(self._specials, with_types="token_type_ids" in names)
        else:
            return None

        def tokenize(text: str) -> tuple[list[int], list[int]]:
            encoding = self.tokenizer.encode_batch([text])[0]
            return list(encoding.ids), [end for _, end in encoding.offsets]

        def gap_of(kind: str) -> float:
            prompt_ids, prompt = self._prompt_ids[kind], self._prompt(kind)
            window = self.windows.query if kind == QUERY else self.windows.document
            return agrees_with_encode(
                lambda batch: self._forward(build(batch, prompt_ids)),
                lambda texts: self._encode_texts(list(texts), prompt),
                tokenize,
                window,
            )

        # Each prompt is probed: one may tokenize differently when joined to the text.
        same = self._prompt_ids[QUERY] == self._prompt_ids["document"]
        gap = max(gap_of(kind) for kind in (("document",) if same else (QUERY, "document")))
        if gap > AGREEMENT * (1 if self.placement.dtype == "float32" else 100):
            self.notes.append(
                f"{self.name}: token ids give other vectors than encode() (1 - cosine {gap:.1e}); "
                "embedding through encode()"
            )
            return None
        return build  # type: ignore[no-any-return]

    @property
    def reads_text(self) -> bool:
        """Whether inputs go through ``encode`` as text (the ids path does not apply)."""
        return self._features is None

    def encode(self, inputs: Sequence[ModelInput]) -> np.ndarray:
        """Embed inputs of one kind (a batch the runner formed)."""
        if not inputs:
            return np.zeros((0, 0), dtype=np.float32)
        kind = inputs[0].kind
        build = self._features
        if build is None:
            return self._encode_texts([i.text for i in inputs], self._prompt(kind))
        return self._forward(build([i.ids for i in inputs], self._prompt_ids[kind]))

    def _forward(self, features: dict[str, Any]) -> np.ndarray:
        import torch
        from sentence_transformers.util import batch_to_device

        with torch.inference_mode():
            out = self.model(batch_to_device(features, self.model.device))
        rows: np.ndarray = out["sentence_embedding"].float().cpu().numpy()
        return rows

    def _encode_texts(self, texts: list[str], prompt: str) -> np.ndarray:
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


def _is_static(model: Any) -> bool:
    """The model's input module is a static embedding bag (model2vec, StaticEmbedding)."""
    return type(model[0]).__name__ == "StaticEmbedding"


def _static_embedding() -> Any:
    """sentence-transformers' StaticEmbedding class (it moved in version 6)."""
    try:
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import StaticEmbedding  # type: ignore[import-not-found,no-redef]
    return StaticEmbedding


def _check_encode_kwargs(kwargs: Mapping[str, Any]) -> None:
    owned = sorted(set(kwargs) & set(ENGINE_OWNED))
    if owned:
        key = owned[0]
        raise ConfigError(
            f"--niah-encode-kwargs: {key!r} is set by pytest-niah itself",
            f"remove it ({ENGINE_OWNED[key]})",
        )


def _check_window(name: str, model: Any, requested: int) -> None:
    limit = getattr(
        getattr(getattr(model[0], "auto_model", None), "config", None),
        "max_position_embeddings",
        None,
    )
    if isinstance(limit, int) and requested > limit:
        raise ConfigError(
            f"--niah-max-seq-length={requested} is more than model {name!r} can read "
            f"(its position embeddings stop at {limit})",
            f"give at most {limit}",
        )


def _set_window(name: str, model: Any, requested: int) -> None:
    """Make the model read at most ``requested`` tokens (``--niah-max-seq-length``).

    A static model (an embedding bag) has no window of its own; its tokenizer is set to cut
    every text after ``requested`` tokens instead, which reads exactly like a window.

    Raises:
        ConfigError: more than the model can read, or a model whose window cannot be set.
    """
    if _is_static(model):
        tokenizer: Any = getattr(model[0], "tokenizer", None)
        if hasattr(tokenizer, "enable_truncation"):
            tokenizer.enable_truncation(requested)
            return
    _check_window(name, model, requested)
    try:
        model.max_seq_length = requested
    except (AttributeError, TypeError, ValueError) as exc:
        raise ConfigError(
            f"--niah-max-seq-length={requested}: the window of model {name!r} cannot be set "
            f"({type(model[0]).__name__} has none to set: {exc})",
            "drop --niah-max-seq-length for this model",
        ) from None


def _source_folder(model: Any) -> Path | None:
    """The folder the weights were read from (a local path or the hub cache snapshot)."""
    try:
        path = Path(model[0].auto_model.config._name_or_path)
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    return path if path.is_dir() else None


def _quiet_transformers() -> None:
    """No "Loading weights" bar: it lands in every captured test output."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except (ImportError, AttributeError):  # pragma: no cover - older transformers
        pass


# A plain English sentence: a real vocabulary knows most of its words.
_PROBE = "The old sailor walked slowly along the river and thought about his family."
_MIN_VOCABULARY = 100


def _check_vocabulary(name: str, backend: Any) -> None:
    """Reject a tokenizer that maps everything to one unknown token (missing vocabulary files).

    Without vocabulary files transformers can still build a tokenizer of only the special
    tokens; every text then gets one embedding and the run would "succeed" at chance.
    """
    ids = backend.encode(_PROBE, add_special_tokens=False).ids
    size = backend.get_vocab_size()
    if size < _MIN_VOCABULARY or len(set(ids)) <= 1:
        raise EmbedderError(
            f"model {name!r} has a tokenizer with {size} tokens that reads every word as "
            "unknown: its vocabulary files (tokenizer.json, or vocab.txt / sentencepiece model) "
            "are missing",
            "copy the tokenizer files next to the model, or save it again with "
            "SentenceTransformer.save(...)",
        )
