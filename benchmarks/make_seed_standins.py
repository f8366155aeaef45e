"""Tiny random-weight stand-ins of the study's models, built offline in seconds.

    python benchmarks/make_seed_standins.py OUT_DIR [--only v3,v4]

Each folder is a sentence-transformers model whose *structure* is the real one and whose
weights are random (its scores mean nothing); the tokenizers are trained here on the
packaged books (``pytest_niah/data/corpus``):

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

The three last ones sit on a one-layer BERT of 2,048 positions. Hidden size 32, vocabularies
of about 2,000: every folder builds in seconds and takes about a megabyte.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SEED = 42
VOCAB = 2000
HIDDEN = 32
CHARS_PER_BOOK = 30_000
# Qwen2's pre-tokenizer split pattern (tokenizer.json of Qwen/Qwen2-*).
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
XLMR_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>"]


def training_lines() -> list[str]:
    """The first characters of each packaged book, a line at a time."""
    from pytest_niah.inputs.packaged_corpus import packaged_corpus

    text = "\n".join(book.text[:CHARS_PER_BOOK] for book in packaged_corpus().books)
    return [line for line in text.split("\n") if line.strip()]


def _field(data: bytes, wanted: int) -> bytes:
    """The first length-delimited field ``wanted`` of a protobuf message (no protobuf needed)."""
    at = 0

    def varint() -> int:
        nonlocal at
        value, shift = 0, 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while at < len(data):
        key = varint()
        number, kind = key >> 3, key & 7
        if kind == 0:
            varint()
        elif kind == 1:
            at += 8
        elif kind == 5:
            at += 4
        elif kind == 2:
            size = varint()
            if number == wanted:
                return data[at : at + size]
            at += size
        else:
            raise ValueError(f"unexpected protobuf wire type {kind}")
    return b""


def xlmr_tokenizer(lines: list[str], work: Path) -> Any:
    """A sentencepiece Unigram trained on ``lines``, converted as transformers converts XLM-R."""
    import sentencepiece as spm
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

    prefix = work / "sentencepiece.bpe"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_prefix=str(prefix),
        model_type="unigram",
        vocab_size=VOCAB,
        character_coverage=1.0,
        num_threads=1,
        seed_sentencepiece_size=200_000,
        minloglevel=2,
    )
    processor = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
    pieces = [(processor.id_to_piece(i), processor.get_score(i)) for i in range(len(processor))]
    vocab = [(t, 0.0) for t in XLMR_SPECIAL] + pieces[3:] + [("<mask>", 0.0)]
    # ModelProto.normalizer_spec (3) -> NormalizerSpec.precompiled_charsmap (2)
    charsmap = _field(_field(Path(f"{prefix}.model").read_bytes(), 3), 2)
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tokenizer.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    from tokenizers import decoders

    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tokenizer.add_special_tokens([*XLMR_SPECIAL, "<mask>"])
    return tokenizer


def byte_level_tokenizer(lines: list[str], *, qwen2: bool) -> Any:
    """A byte-level BPE: Qwen2's pre-tokenizer and NFC, or GPT-2's."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from tokenizers.trainers import BpeTrainer

    tokenizer = Tokenizer(models.BPE(unk_token=None))
    if qwen2:
        tokenizer.normalizer = normalizers.NFC()
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        special = QWEN2_SPECIAL
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        special = ["<|endoftext|>"]
    tokenizer.decoder = decoders.ByteLevel()
    trainer = BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer)
    return tokenizer


def unigram_tokenizer(lines: list[str], *, whitespace_first: bool) -> Any:
    """A Unigram without normalizer: Metaspace alone, or WhitespaceSplit + Metaspace("first")."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.trainers import UnigramTrainer

    tokenizer = Tokenizer(models.Unigram())
    if whitespace_first:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="first")]
        )
        tokenizer.decoder = decoders.Metaspace(prepend_scheme="first")
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
    trainer = UnigramTrainer(
        vocab_size=VOCAB, special_tokens=XLMR_SPECIAL, unk_token="<unk>", show_progress=False
    )
    tokenizer.train_from_iterator(lines, trainer)
    return tokenizer


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
    SentenceTransformer(modules=[word, Pooling(HIDDEN, "mean")], device="cpu").save(str(out))
    shutil.rmtree(hf)  # the folder holds its own copy
    return out


def _sizes(**more: int) -> dict[str, int]:
    return dict(hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=2, **more)


def build_v3(out: Path, lines: list[str]) -> Path:
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
        **_sizes(intermediate_size=64),
    )
    special = dict(bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
    fast = _fast(tokenizer, 8192, **special, cls_token="<s>", sep_token="</s>")
    return _save(out, XLMRobertaModel(config), fast, 8192)


def build_v4(out: Path, lines: list[str]) -> Path:
    """jina-embeddings-v4's shape: a Qwen2 decoder, 32,768 positions, Qwen2's byte-level BPE."""
    from transformers import Qwen2Config, Qwen2Model

    tokenizer = byte_level_tokenizer(lines, qwen2=True)
    config = Qwen2Config(
        vocab_size=tokenizer.get_vocab_size(),
        max_position_embeddings=32768,
        num_key_value_heads=1,
        **_sizes(intermediate_size=64),
    )
    fast = _fast(tokenizer, 32768, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    return _save(out, Qwen2Model(config), fast, 32768)


def _bert_with(tokenizer: Any, out: Path, **special: str) -> Path:
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        max_position_embeddings=2048,
        **_sizes(intermediate_size=64),
    )
    return _save(out, BertModel(config), _fast(tokenizer, 2048, **special), 2048)


def build_gpt2(out: Path, lines: list[str]) -> Path:
    """A GPT-2-style byte-level BPE on a one-layer BERT."""
    tokenizer = byte_level_tokenizer(lines, qwen2=False)
    return _bert_with(tokenizer, out, pad_token="<|endoftext|>", unk_token="<|endoftext|>")


def build_metaspace(out: Path, lines: list[str]) -> Path:
    """A Unigram under Metaspace alone, no normalizer."""
    tokenizer = unigram_tokenizer(lines, whitespace_first=False)
    return _bert_with(tokenizer, out, pad_token="<pad>", unk_token="<unk>")


def build_ws_metaspace_first(out: Path, lines: list[str]) -> Path:
    """A Unigram under WhitespaceSplit + Metaspace(prepend_scheme="first")."""
    tokenizer = unigram_tokenizer(lines, whitespace_first=True)
    return _bert_with(tokenizer, out, pad_token="<pad>", unk_token="<unk>")


BUILDERS: dict[str, Callable[[Path, list[str]], Path]] = {
    "v3": build_v3,
    "v4": build_v4,
    "gpt2": build_gpt2,
    "metaspace": build_metaspace,
    "ws-metaspace-first": build_ws_metaspace_first,
}


def build(out: Path, names: list[str] | None = None) -> dict[str, Path]:
    """The stand-ins ``names`` (all by default), each in ``out/NAME``; one built is reused."""
    lines: list[str] = []
    built = {}
    for name in names or list(BUILDERS):
        folder = out / name
        if not (folder / "modules.json").exists():
            lines = lines or training_lines()
            BUILDERS[name](folder, lines)
        built[name] = folder
    return built


TOKENIZERS: dict[str, Callable[[list[str], Path], Any]] = {
    "v3": lambda lines, work: xlmr_tokenizer(lines, work),
    "v4": lambda lines, _: byte_level_tokenizer(lines, qwen2=True),
    "gpt2": lambda lines, _: byte_level_tokenizer(lines, qwen2=False),
    "metaspace": lambda lines, _: unigram_tokenizer(lines, whitespace_first=False),
    "ws-metaspace-first": lambda lines, _: unigram_tokenizer(lines, whitespace_first=True),
}


def build_tokenizers(out: Path) -> dict[str, Path]:
    """Only the stand-ins' ``tokenizer.json`` files (no torch needed), ``out/NAME.json``."""
    lines: list[str] = []
    built = {}
    for name, make in TOKENIZERS.items():
        path = out / f"{name}.json"
        if not path.exists():
            lines = lines or training_lines()
            work = out / f"{name}-work"
            work.mkdir(parents=True, exist_ok=True)
            make(lines, work).save(str(path))
            shutil.rmtree(work)
        built[name] = path
    return built


def tokenizer_summary(folder: Path) -> Iterator[str]:
    """What a folder's tokenizer.json is made of, for the log."""
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    for part in ("normalizer", "pre_tokenizer", "model"):
        value = spec.get(part) or {}
        steps = value.get("normalizers") or value.get("pretokenizers") or [value]
        yield f"  {part}: " + " + ".join(str(s.get("type")) for s in steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", default="", help="comma-separated: " + ",".join(BUILDERS))
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or None
    for name, folder in build(args.out, names).items():
        print(f"{name}: {folder}", file=sys.stderr)
        for line in tokenizer_summary(folder):
            print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
