"""The stand-ins' tokenizers, trained on the packaged books: one per tokenizer family studied.

The folders themselves (models and weights) are built by ``make_seed_standins.py``;
:func:`build_tokenizers` writes only the ``tokenizer.json`` files (no torch needed).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

VOCAB = 2000
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
