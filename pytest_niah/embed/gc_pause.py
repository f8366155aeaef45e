"""Python's cycle collector paused while a model is imported and loaded.

Importing sentence-transformers and building a model allocate a few hundred thousand
long-lived objects and no garbage worth a collection; every full collection on the way walks
all of them again (measured: half of a small static-model run's CPU time went to collections;
pausing them here saves about a tenth of it). Paused, the collector runs as usual afterwards,
on what actually became garbage.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic garbage collection inside; the collector as it was afterwards.

    Restores only what it changed: inside another pause (or where the caller disabled the
    collector), it stays disabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
