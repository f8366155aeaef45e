"""Planning in the background: blocks merged into the plan on a worker thread, in order.

The caller embeds each block's new inputs as soon as they exist (:func:`plan_in_background`),
while the next blocks are built.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from pytest_niah.experiment.planning import Planning, block_inputs
from pytest_niah.haystacks.plan import ModelInput, PreparedBlock

_QUEUE_DEPTH = 8


def plan_in_background(planning: Planning, seconds: dict[str, float]) -> Iterator[list[ModelInput]]:
    """Plan blocks on a worker thread; yield each block's new inputs as soon as they exist.

    ``seconds`` gets the worker's busy time: ``build`` (drawing snippets, tokenizing and
    checking haystacks, and their model inputs, all on the building threads) and ``plan``
    (merging each block's inputs into the plan in order, needles).
    """
    out: queue.Queue[Any] = queue.Queue(maxsize=_QUEUE_DEPTH)
    stop = threading.Event()
    done = object()

    def work() -> None:
        busy = 0.0
        try:
            for block in _timed(planning.blocks, seconds):
                if stop.is_set():
                    return
                started = time.perf_counter()
                fresh = block_inputs(planning, block)
                busy += time.perf_counter() - started
                seconds["plan"] = busy
                out.put(fresh)
            out.put(done)
        except BaseException as exc:
            out.put(exc)

    worker = threading.Thread(target=work, name="pytest-niah-haystacks", daemon=True)
    worker.start()
    try:
        while True:
            item = out.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let the worker see the stop flag
            with contextlib.suppress(queue.Empty):
                out.get(timeout=0.05)
        worker.join()


def _timed(blocks: Iterator[PreparedBlock], seconds: dict[str, float]) -> Iterator[PreparedBlock]:
    """``blocks``, adding the time spent producing each to ``seconds["build"]``."""
    seconds["build"] = 0.0
    while True:
        started = time.perf_counter()
        block = next(blocks, None)
        seconds["build"] += time.perf_counter() - started
        if block is None:
            return
        yield block
