"""Tiny random-weight stand-ins of the study's models, built offline in seconds.

    python benchmarks/make_seed_standins.py OUT_DIR [--only v3,v4] [--size tiny|minilm|large]

Each folder is a sentence-transformers model whose *structure* is the real one and whose
weights are random (its scores mean nothing); the tokenizers are trained on the
packaged books (``pytest_niah/data/corpus``) by ``standin_tokenizers.py``:

- ``v3``: jina-embeddings-v3's shape: an XLM-RoBERTa encoder with 8,194 positions and mean
  pooling; a sentencepiece Unigram model (the ``sentencepiece`` package) converted as
  transformers converts XLM-R: the Precompiled normalizer (then spaces collapsed) and the
  Metaspace pre-tokenizer (prepend always), ``<s> <pad> </s> <unk>`` first, ``<mask>`` last.
- ``v4``: jina-embeddings-v4's shape: a Qwen2 decoder with 32,768 positions and mean pooling;
  a byte-level BPE with Qwen2's pre-tokenizer (its Split pattern, then ByteLevel without a
  prefix space or regex) and NFC normalizer.
- ``gpt2``: a GPT-2-style byte-level BPE (ByteLevel with GPT-2's regex, no prefix space).
- ``metaspace``: a Unigram under Metaspace alone, no normalizer.
- ``ws-metaspace-first``: a Unigram under WhitespaceSplit then Metaspace(prepend "first").

The three last ones sit on a BERT of 2,048 positions. ``--size tiny`` (the default, what the
tests use): one layer, hidden size 32, vocabularies of about 2,000, so every folder builds in
seconds and takes about a megabyte. ``--size minilm``: all-MiniLM-L6-v2's compute (6 layers,
hidden size 384, 12 heads), for speed work where a one-layer model would cost less than its
tokenizer. ``--size large``: XLM-RoBERTa large's compute, jina-embeddings-v3's encoder (24
layers, hidden size 1,024, 16 heads; about 300M parameters with the small vocabulary), for
the GPU bench (``bench_gpu.py --standin-dir``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from standin_tokenizers import (
    byte_level_tokenizer,
    tokenizer_summary,
    training_lines,
    unigram_tokenizer,
    xlmr_tokenizer,
)

SEED = 42
SIZES: dict[str, dict[str, int]] = {
    "tiny": dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64),
    "minilm": dict(
        hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536
    ),
    "large": dict(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096
    ),
}


def _fast(tokenizer: Any, window: int, **special: str) -> Any:
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, model_max_length=window, **special)


def _save(out: Path, model: Any, fast: Any, window: int) -> Path:
    """``model`` and ``fast`` as a sentence-transformers folder with mean pooling."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:  # pragma: no cover - older sentence-transformers
        from sentence_transformers.models import Pooling, Transformer  # type: ignore[no-redef]

    hf = out / "hf"
    with torch.no_grad():  # every weight from one seed, in parameter order
        generator = torch.Generator().manual_seed(SEED)
        for _, parameter in sorted(model.named_parameters()):
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.05)
    model.save_pretrained(hf)
    fast.save_pretrained(hf)
    word = Transformer(str(hf), max_seq_length=window)
    pooling = Pooling(model.config.hidden_size, "mean")
    SentenceTransformer(modules=[word, pooling], device="cpu").save(str(out))
    shutil.rmtree(hf)  # the folder holds its own copy
    return out


def build_v3(out: Path, lines: list[str], size: dict[str, int]) -> Path:
    """jina-embeddings-v3's shape: XLM-RoBERTa, 8,194 positions, a converted sentencepiece."""
    from transformers import XLMRobertaConfig, XLMRobertaModel

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = xlmr_tokenizer(lines, out)
    config = XLMRobertaConfig(
        vocab_size=tokenizer.get_vocab_size(),
        max_position_embeddings=8194,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        **size,
    )
    special = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
    fast = _fast(tokenizer, 8192, **special, cls_token="<s>", sep_token="</s>")
    return _save(out, XLMRobertaModel(config), fast, 8192)


def build_v4(out: Path, lines: list[str], size: dict[str, int]) -> Path:
    """jina-embeddings-v4's shape: a Qwen2 decoder, 32,768 positions, Qwen2's byte-level BPE."""
    from transformers import Qwen2Config, Qwen2Model

    tokenizer = byte_level_tokenizer(lines, qwen2=True)
    config = Qwen2Config(
        vocab_size=tokenizer.get_vocab_size(),
        max_position_embeddings=32768,
        num_key_value_heads=1,
        **size,
    )
    fast = _fast(tokenizer, 32768, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    return _save(out, Qwen2Model(config), fast, 32768)


def _bert_with(tokenizer: Any, out: Path, size: dict[str, int], **special: str) -> Path:
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        max_position_embeddings=2048,
        **size,
    )
    return _save(out, BertModel(config), _fast(tokenizer, 2048, **special), 2048)


def build_gpt2(out: Path, lines: list[str], size: dict[str, int]) -> Path:
    """A GPT-2-style byte-level BPE on a BERT."""
    tokenizer = byte_level_tokenizer(lines, qwen2=False)
    return _bert_with(tokenizer, out, size, pad_token="<|endoftext|>", unk_token="<|endoftext|>")


def build_metaspace(out: Path, lines: list[str], size: dict[str, int]) -> Path:
    """A Unigram under Metaspace alone, no normalizer."""
    tokenizer = unigram_tokenizer(lines, whitespace_first=False)
    return _bert_with(tokenizer, out, size, pad_token="<pad>", unk_token="<unk>")


def build_ws_metaspace_first(out: Path, lines: list[str], size: dict[str, int]) -> Path:
    """A Unigram under WhitespaceSplit + Metaspace(prepend_scheme="first")."""
    tokenizer = unigram_tokenizer(lines, whitespace_first=True)
    return _bert_with(tokenizer, out, size, pad_token="<pad>", unk_token="<unk>")


BUILDERS: dict[str, Callable[[Path, list[str], dict[str, int]], Path]] = {
    "v3": build_v3,
    "v4": build_v4,
    "gpt2": build_gpt2,
    "metaspace": build_metaspace,
    "ws-metaspace-first": build_ws_metaspace_first,
}


def build(out: Path, names: list[str] | None = None, size: str = "tiny") -> dict[str, Path]:
    """The stand-ins ``names`` (all by default), each in ``out/NAME``; one built is reused.

    ``size``: a key of :data:`SIZES`; a folder already built is reused whatever its size.
    """
    lines: list[str] = []
    built = {}
    for name in names or list(BUILDERS):
        folder = out / name
        if not (folder / "modules.json").exists():
            lines = lines or training_lines()
            BUILDERS[name](folder, lines, SIZES[size])
        built[name] = folder
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", default="", help="comma-separated: " + ",".join(BUILDERS))
    parser.add_argument("--size", choices=sorted(SIZES), default="tiny", help="%(default)s")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or None
    unknown = sorted(set(names or ()) - set(BUILDERS))
    if unknown:
        parser.error(f"--only: unknown stand-in(s) {', '.join(unknown)}; "
                     f"the stand-ins are {', '.join(BUILDERS)}")  # fmt: skip
    for name, folder in build(args.out, names, args.size).items():
        print(f"{name}: {folder}", file=sys.stderr)
        for line in tokenizer_summary(folder):
            print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
