"""What a run's progress counts: its blocks, and the tokens the model reads of each.

A whole run and a shard job both count their blocks with :func:`block_count`; the time left
is measured in :func:`block_weights`.
"""

from __future__ import annotations

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment.run_inputs import Inputs


def block_count(config: NiahConfig, inputs: Inputs) -> int:
    """How many blocks a run builds: one per length, needle draw and needle group."""
    return len(config.lengths) * len(config.draws) * len(inputs.needle_set.groups)


def block_weights(
    config: NiahConfig, inputs: Inputs, document_window: int | None = None
) -> list[float]:
    """The expected tokens of each block, in the order they are built (for the time left).

    Blocks come shortest length first, then draw, groups in needle-set order; a selected
    group's block holds its needle haystacks and controls, another group's its controls only.
    A haystack weighs what the model reads of it: at most ``document_window`` tokens for
    whole-haystack scoring (a 256-token model's 8,192-token block costs what a 256-token one
    does), every token again for chunk scoring, which embeds the whole haystack in pieces.
    """
    selected = {group.id for group in inputs.selected.groups}
    needles = config.positions * len(config.orders) * len(config.arms)
    chunked = any(scoring.startswith("chunk") for scoring in config.scoring)

    def read(length: int) -> int:
        whole = length if document_window is None else min(length, document_window)
        return whole + (length if chunked else 0)

    return [
        float(read(length) * (config.controls + (needles if group.id in selected else 0)))
        for length in config.lengths
        for _ in config.draws
        for group in inputs.needle_set.groups
    ]
