"""``--niah-export-haystacks``: every haystack a model embeds, as JSON lines.

Each line is one haystack: the model's label, its id, length, text, the token ids its length
counts (the model's own for a local model, ``--niah-tokenizer``'s for a served one) and the
needle's token span ``[start, end)`` (``null`` for a control). The haystacks are built again
exactly as the run builds them (the same seeded builder, in token space where the run's is):
a run whose results came from its cache, or from shards, exports the same lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.protocol import Embedder
from pytest_niah.experiment.planning import haystack_builder, needle_kinds
from pytest_niah.experiment.run_inputs import Inputs
from pytest_niah.haystacks.haystack import Haystack
from pytest_niah.haystacks.tokens import Encoded


def exported_lines(
    label: str, config: NiahConfig, embedder: Embedder, inputs: Inputs, cache_dir: Path | None
) -> Iterator[str]:
    """One JSON line per haystack of one model's run, in the run's order."""
    builder = haystack_builder(config, embedder, inputs, cache_dir)
    blocks = builder.blocks(
        inputs.selected.groups,
        config.lengths,
        config.positions,
        needle_kinds(config),
        config.orders,
        config.controls,
        config.draws,
    )
    for block in blocks:
        for haystack, encoding in zip(block.haystacks, block.encodings, strict=True):
            yield json.dumps(_line(label, haystack, encoding), ensure_ascii=False) + "\n"


def _line(label: str, haystack: Haystack, encoding: Encoded) -> dict[str, object]:
    span = None
    if haystack.needle_offset is not None and haystack.needle_tokens is not None:
        span = [haystack.needle_offset, haystack.needle_offset + haystack.needle_tokens]
    return {
        "model": label,
        "id": haystack.id,
        "length": haystack.length,
        "text": haystack.text,
        "ids": [int(i) for i in encoding.ids],
        "needle_span": span,
    }
