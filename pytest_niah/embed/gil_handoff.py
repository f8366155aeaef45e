"""The GIL handed over quickly while a GPU encodes beside the haystack builder.

On a GPU the encoding thread spends its time in short stretches of Python (launching
kernels) between waits on the device, while the building thread runs long stretches of
Python. At CPython's default switch interval (5 ms) each hand-over back to the encoder can
wait up to 5 ms with the device idle. Measured on one H200, the v4-shaped stand-in at XLM-R
large's compute over the full default grid: the engine took 1.25x a bare ``encode`` at 5 ms
and 1.20x with this (benchmarks/results/gpu-h200-v4-large-handoff-*.json). On a CPU the
model's own threads do the work without the GIL, so nothing changes there.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_niah.embed.protocol import Embedder

QUICK_SWITCH_S = 0.0002


class _Holders:
    """The runs inside :func:`quick_handoffs` now, and the interval from before the first.

    The interval is the process's: runs in several threads that overlap share one short
    interval, and the last to leave puts back what the first found.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.before = 0.0


_holders = _Holders()


def on_accelerator(embedder: Embedder) -> bool:
    """Whether the model runs on a GPU (or another device that is not the CPU)."""
    placement = getattr(embedder, "placement", None)
    return placement is not None and placement.device_type != "cpu"


@contextmanager
def quick_handoffs(embedder: Embedder) -> Iterator[None]:
    """A switch interval of at most 0.2 ms inside, for a model on an accelerator.

    The interval as it was once the last overlapping run is done; a shorter one the caller
    set is kept.
    """
    if not on_accelerator(embedder):
        yield
        return
    with _holders.lock:
        if _holders.count == 0:
            _holders.before = sys.getswitchinterval()
            sys.setswitchinterval(min(_holders.before, QUICK_SWITCH_S))
        _holders.count += 1
    try:
        yield
    finally:
        with _holders.lock:
            _holders.count -= 1
            if _holders.count == 0:
                sys.setswitchinterval(_holders.before)
