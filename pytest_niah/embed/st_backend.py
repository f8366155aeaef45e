"""The sentence-transformers backend: any model by hub name or local path, loaded lazily.

torch and sentence-transformers are imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from pytest_niah.embed.models import (
    MODEL_PRESETS,
    check_model_name,
    looks_local,
    parse_devices,
    resolve_model_name,
)
from pytest_niah.errors import EmbedderError

Span = tuple[int, int]


def pick_device(requested: str = "auto") -> str:
    """``auto`` picks cuda, then mps, then cpu; an explicit device must be available."""
    import torch

    if requested.startswith("cuda:") and not torch.cuda.is_available():
        requested = "cuda"
    if requested == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise EmbedderError(
            "device 'cuda' was asked for but torch sees no CUDA GPU; use --niah-device=auto"
        )
    return requested


def _quiet_transformers() -> None:
    """No "Loading weights" bar: it lands in every captured test output."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    except (ImportError, AttributeError):  # pragma: no cover - older transformers
        pass


def resolve_dtype(requested: str, device: str) -> str:
    """The dtype to run in.

    ``auto`` is bfloat16 on a GPU that has it, float16 on other GPUs (half the memory,
    about twice the speed), float32 on CPU and MPS.
    """
    if requested != "auto":
        return requested
    if not device.startswith("cuda"):
        return "float32"
    import torch

    return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"


class SentenceTransformerEmbedder:
    """Any sentence-transformers model, by hub name or local path, loaded on first use.

    Args:
        name: Hub name, local path, or ``packaged-minilm``.
        device: ``auto`` (cuda, mps, cpu), a torch device string, or a comma list of
            devices (``cuda:0,cuda:1``) to encode on several GPUs through
            sentence-transformers' multi-process pool.
        dtype: ``auto`` is bfloat16/float16 on a GPU and float32 elsewhere; else ``float32``,
            ``float16``, ``bfloat16``.
        batch_size: Texts per forward pass.
        trust_remote_code: Allow the model's own code from the hub to run.
        model_kwargs: Extra ``SentenceTransformer(model_kwargs=...)`` entries.
        encode_kwargs: Extra keyword arguments for every ``encode`` call (e.g. ``task``).
        query_prompt: Prepended to queries; empty uses the model's own ``query`` prompt if any.
        doc_prompt: Prepended to documents; empty uses the model's own ``document`` prompt if any.
        max_seq_length: Override of the model's window.
        show_progress: Show sentence-transformers' progress bar (one bar over all texts
            in token-budget mode).
        token_budget: Most padded tokens per forward pass; texts are sorted by length and
            packed into batches under it. ``None`` uses the fixed ``batch_size``.
        progress: Called with (texts done, tokens done) after each batch in token-budget
            mode, and once at the end with a fixed ``batch_size``.
    """

    def __init__(
        self,
        name: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 16,
        trust_remote_code: bool = False,
        model_kwargs: Mapping[str, Any] | None = None,
        encode_kwargs: Mapping[str, Any] | None = None,
        query_prompt: str = "",
        doc_prompt: str = "",
        max_seq_length: int | None = None,
        show_progress: bool = False,
        token_budget: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        if token_budget is not None and token_budget < 1:
            raise EmbedderError(f"token_budget must be at least 1, not {token_budget}")
        self.name = name
        self.path = resolve_model_name(name)
        preset = MODEL_PRESETS.get(name, {})
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self.trust_remote_code = trust_remote_code
        self.model_kwargs = dict(model_kwargs or {})
        self.encode_kwargs = dict(preset.get("encode_kwargs", {})) | dict(encode_kwargs or {})
        self.query_prompt = query_prompt
        self.doc_prompt = doc_prompt
        self.max_seq_length = max_seq_length
        self.show_progress = show_progress
        self.token_budget = token_budget
        self.progress = progress
        self.devices: list[str] = []
        self.resolved_dtype = dtype
        self._pool: Any = None

    def load_kwargs(self) -> dict[str, Any]:
        """The keyword arguments given to ``SentenceTransformer``, device excluded."""
        kwargs: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        if self.model_kwargs:
            # Only --niah-trust-remote-code may allow hub code, never a model kwarg.
            extra = {k: v for k, v in self.model_kwargs.items() if k != "trust_remote_code"}
            kwargs["model_kwargs"] = extra | {"trust_remote_code": self.trust_remote_code}
        return kwargs

    def _check_loadable(self) -> None:
        check_model_name(self.name, trust_remote_code=self.trust_remote_code)

    @cached_property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loads on first access)."""
        self._check_loadable()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            raise EmbedderError(f"sentence-transformers is not importable: {exc}") from exc
        try:
            self.devices = [pick_device(d) for d in parse_devices(self.device)]
        except ValueError as exc:
            raise EmbedderError(str(exc)) from None
        if not self.show_progress:
            _quiet_transformers()
        try:
            model = SentenceTransformer(self.path, device=self.devices[0], **self.load_kwargs())
        except Exception as exc:
            raise EmbedderError(self._load_failure(exc)) from exc
        self.resolved_dtype = resolve_dtype(self.dtype, self.devices[0])
        if self.resolved_dtype != "float32" or self.dtype != "auto":
            import torch

            model.to(getattr(torch, self.resolved_dtype))
        if self.max_seq_length is not None:
            model.max_seq_length = self.max_seq_length
        tokenizer = getattr(model, "tokenizer", None)
        if tokenizer is None or not getattr(tokenizer, "is_fast", False):
            raise EmbedderError(
                f"model {self.name!r} has no fast (Rust) tokenizer with character offsets, which "
                "pytest-niah needs to build haystacks of exact token lengths; save the model with "
                "a tokenizer.json (AutoTokenizer.from_pretrained(..., use_fast=True)"
                ".save_pretrained)"
            )
        _check_vocabulary(self.name, tokenizer)
        return model

    def _load_failure(self, exc: Exception) -> str:
        reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
        if "trust_remote_code" in str(exc):
            fix = "this model runs its own code; if you trust it, add --niah-trust-remote-code"
        elif looks_local(self.path):
            fix = (
                f"the folder {self.path!r} does not hold a model sentence-transformers can load; "
                "check that it has config.json, the weights and the tokenizer files, or save the "
                "model again with SentenceTransformer.save(...)"
            )
        elif os.environ.get("HF_HUB_OFFLINE") == "1" or "offline" in str(exc).lower():
            fix = (
                "the hub is offline here, so the model must already be in the Hugging Face "
                "cache or "
                "be a local folder; download it once with network access, or pass a local path"
            )
        else:
            fix = "check the hub name (org/model) or the local folder, and the network"
        return f"could not load model {self.name!r} ({reason}). Fix: {fix}."

    @property
    def fingerprint(self) -> str:
        """Hash of the weights' identity, dtype, window, prompts and encode kwargs."""
        return self._fingerprint

    @cached_property
    def _fingerprint(self) -> str:
        model = self.model
        source = _model_source_dir(model)
        identity = {
            "name": self.name,
            "files": _hash_folder(source) if source else None,
            "dtype": self.resolved_dtype,
            "max_seq_length": model.max_seq_length,
            "query_prompt": self._prompt("query"),
            "doc_prompt": self._prompt("document"),
            "encode_kwargs": self.encode_kwargs,
        }
        return hashlib.sha256(
            json.dumps(identity, sort_keys=True, default=str).encode()
        ).hexdigest()

    def _prompt(self, kind: str) -> str:
        explicit = self.query_prompt if kind == "query" else self.doc_prompt
        if explicit:
            return explicit
        prompts = getattr(self.model, "prompts", None) or {}
        return str(prompts.get(kind, "") or "")

    @property
    def max_tokens(self) -> int | None:
        """Document tokens read before truncation: window minus special and prompt tokens."""
        model = self.model
        window = int(model.max_seq_length)
        special = model.tokenizer.num_special_tokens_to_add(pair=False)
        prompt = self._prompt("document")
        prompt_tokens = len(self.token_spans([prompt])[0]) if prompt else 0
        return max(window - int(special) - prompt_tokens, 0)

    def token_spans(self, texts: Sequence[str]) -> list[list[Span]]:
        """Character spans of each text's tokens (fast tokenizer offsets, no special tokens)."""
        if not texts:
            return []
        # Fast tokenizers already give lists of (int, int) tuples: no per-token copy.
        return list(self._tokenize(texts, return_offsets_mapping=True)["offset_mapping"])

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed questions, with the query prompt."""
        return self._encode(texts, self._prompt("query"))

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed haystacks and needles, with the document prompt."""
        return self._encode(texts, self._prompt("document"))

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        prepared, counts, keys = self._prepare(texts, prompt)
        # Texts whose readable tokens are the same are one model input: encode it once.
        # (A 256-token model reads only the shared filler of most long haystacks.)
        first: dict[bytes, int] = {}
        which = [first.setdefault(key, i) for i, key in enumerate(keys)]
        unique = list(first.values())
        rows = self._encode_inputs(
            [prepared[i] for i in unique], [counts[i] for i in unique], prompt
        )
        row_of = {i: n for n, i in enumerate(unique)}
        return rows[[row_of[i] for i in which]]

    def _encode_inputs(self, texts: list[str], counts: list[int], prompt: str) -> np.ndarray:
        kwargs = dict(self.encode_kwargs)
        if prompt:
            kwargs["prompt"] = prompt
        if len(self.devices) > 1:
            return self._encode_on_pool(texts, kwargs)
        if self.token_budget is not None:
            return self._encode_by_budget(texts, counts, kwargs)
        embeddings = self.model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=self.show_progress,
            **kwargs,
        )
        if self.progress is not None:
            self.progress(len(texts), sum(counts))
        return np.asarray(embeddings, dtype=np.float32)

    def _encode_on_pool(self, texts: list[str], kwargs: dict[str, Any]) -> np.ndarray:
        """Several devices: sentence-transformers' multi-process pool, started once."""
        if self._pool is None:
            self._pool = self.model.start_multi_process_pool(self.devices)
        rows = self.model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=self.show_progress,
            pool=self._pool,
            **kwargs,
        )
        return np.asarray(rows, dtype=np.float32)

    def close(self) -> None:
        """Stop the multi-process pool, if one was started."""
        if self._pool is not None:
            self.model.stop_multi_process_pool(self._pool)
            self._pool = None

    def _encode_by_budget(
        self, texts: list[str], counts: list[int], kwargs: dict[str, Any]
    ) -> np.ndarray:
        """Encode length-sorted batches under ``token_budget``; rows come back in input order."""
        from pytest_niah.embed.batching import token_budget_batches

        assert self.token_budget is not None
        batches = token_budget_batches(counts, budget=self.token_budget)
        bar = _progress_bar(len(texts)) if self.show_progress else None
        parts: list[np.ndarray] = []
        done_texts = done_tokens = 0
        try:
            for batch in batches:
                rows = self.model.encode(
                    [texts[i] for i in batch],
                    batch_size=len(batch),
                    convert_to_numpy=True,
                    show_progress_bar=False,
                    **kwargs,
                )
                parts.append(np.asarray(rows, dtype=np.float32).reshape(len(batch), -1))
                done_texts += len(batch)
                done_tokens += sum(counts[i] for i in batch)
                if bar is not None:
                    bar.update(len(batch))
                if self.progress is not None:
                    self.progress(done_texts, done_tokens)
        finally:
            if bar is not None:
                bar.close()
        out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        out[np.concatenate([np.asarray(b, dtype=np.intp) for b in batches])] = np.concatenate(parts)
        return out

    def _prepare(
        self, texts: Sequence[str], prompt: str
    ) -> tuple[list[str], list[int], list[bytes]]:
        """The texts to hand to the model, the tokens it reads of each, and what it reads.

        sentence-transformers tokenizes a whole text and then truncates it to the window:
        for an 8K-token haystack and a 256-token model that is ~30x more tokenizing than
        needed. A long text is replaced by its first ``(window + margin) * 8`` characters when
        those hold at least ``window + margin`` tokens: the model then reads exactly the same
        first ``window`` tokens (tokenizers are local: only the cut word can change, and it
        lies beyond the window), so the embedding is the same.

        Returns:
            The texts (whole or prefixes), the tokens the model reads of each (prompt and
            special tokens included, capped at the window), and a digest of the token ids
            it reads of each text (equal digests: one model input).
        """
        window = int(self.model.max_seq_length or 1 << 30)
        overhead = self.model.tokenizer.num_special_tokens_to_add(pair=False)
        if prompt:
            overhead += len(self._input_ids([prompt])[0])
        need = window + _PREFIX_MARGIN_TOKENS
        chars = need * _PREFIX_CHARS_PER_TOKEN
        out = [t[:chars] if len(t) > chars else t for t in texts]
        ids = self._input_ids(out)
        for i, text in enumerate(texts):
            if out[i] is not text and len(ids[i]) < need:  # dense text: keep it whole
                out[i] = text
                ids[i] = self._input_ids([text])[0]
        readable = max(window - overhead, 0)
        keys = [
            hashlib.sha256(np.asarray(x[:readable], dtype=np.int64).tobytes()).digest() for x in ids
        ]
        return out, [min(len(x) + overhead, window) for x in ids], keys

    def _input_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids without special tokens, in one batched call of the fast tokenizer."""
        return list(self._tokenize(texts)["input_ids"])

    def _tokenize(self, texts: Sequence[str], **extra: Any) -> Any:
        """One batched call of the fast tokenizer: no special tokens, no masks."""
        return self.model.tokenizer(
            list(texts),
            add_special_tokens=False,
            return_attention_mask=False,
            return_token_type_ids=False,
            verbose=False,
            **extra,
        )


def _progress_bar(total: int) -> Any:
    """A tqdm bar over texts (tqdm comes with sentence-transformers)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="Embedding", unit="text")


def _model_source_dir(model: Any) -> Path | None:
    """The folder the weights were read from (a local path or the hub cache snapshot)."""
    try:
        path = Path(model[0].auto_model.config._name_or_path)
    except (AttributeError, IndexError, KeyError, TypeError):
        return None
    return path if path.is_dir() else None


def _hash_folder(folder: Path, *, full_below: int = 16 << 20) -> str:
    """Hash a model folder: small files whole, large ones by size, head and tail (fast)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        size = path.stat().st_size
        digest.update(f"{rel}:{size}\n".encode())
        with path.open("rb") as handle:
            if size <= full_below:
                digest.update(handle.read())
            else:
                digest.update(handle.read(1 << 20))
                handle.seek(-(1 << 20), os.SEEK_END)
                digest.update(handle.read())
    return digest.hexdigest()


# Truncation-aware prefixes (see _prepare): tokens beyond the window that the prefix must
# hold, and characters per token it allows for (English averages ~4.5 with BERT's tokenizer).
_PREFIX_MARGIN_TOKENS = 64
_PREFIX_CHARS_PER_TOKEN = 8

# A plain English sentence: a real vocabulary knows most of its words.
_PROBE = "The old sailor walked slowly along the river and thought about his family."
_MIN_VOCABULARY = 100


def _check_vocabulary(name: str, tokenizer: Any) -> None:
    """Reject a tokenizer that maps everything to [UNK] (e.g. one built with no vocab files).

    Without vocabulary files transformers can still build a tokenizer of only the special
    tokens; every text then gets one embedding and the run would "succeed" at chance.
    """
    ids = tokenizer(_PROBE, add_special_tokens=False)["input_ids"]
    unknown = getattr(tokenizer, "unk_token_id", None)
    known = [i for i in ids if i != unknown]
    if len(tokenizer) < _MIN_VOCABULARY or not known:
        raise EmbedderError(
            f"model {name!r} has a tokenizer with {len(tokenizer)} tokens that reads every word "
            "as unknown: its vocabulary files (tokenizer.json, or vocab.txt / "
            "sentencepiece model) are missing. Fix: copy the tokenizer files next to the model, "
            "or save it again with SentenceTransformer.save(...)"
        )
