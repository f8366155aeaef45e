"""A static (model2vec) model folder read once per process; each load gets its own copy.

model2vec's loader spends seconds on a large vocabulary (the packaged static model has
276,326 tokens: about 3 s on two CPU cores), far more than the model needs to embed a small
grid. A process that runs several experiments (the Python API in a notebook, several plugin
runs in one interpreter) would pay it every time. What the first load read is kept, keyed by
the folder and every file's size and modification time (a folder rewritten in place is read
again), and each later load builds a new module from it: its own tokenizer, whose truncation
a run changes, and its own weights, which a run may cast to another dtype.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Each entry holds the model's weights (70 MB for the packaged static model): a process
# keeps the last few folders it loaded, not every one.
KEPT_FOLDERS = 2

FolderKey = tuple[str, tuple[tuple[str, int, int], ...]]


@dataclass(frozen=True)
class ReadModel:
    """What a load of one folder read: the tokenizer as JSON and the embedding weights."""

    tokenizer_json: str
    weights: Any  # a torch tensor, never handed out: each load gets a clone
    base_model: str | None


def folder_key(folder: Path) -> FolderKey:
    """The folder and each file's name, size and modification time (nanoseconds)."""
    resolved = folder.resolve()
    files = []
    for path in sorted(resolved.rglob("*")):
        if path.is_file():
            stat = path.stat()
            files.append((str(path.relative_to(resolved)), stat.st_size, stat.st_mtime_ns))
    return str(resolved), tuple(files)


class StaticModelMemo:
    """The last :data:`KEPT_FOLDERS` static model folders this process read."""

    def __init__(self, kept: int = KEPT_FOLDERS) -> None:
        self.kept = kept
        self.read: OrderedDict[FolderKey, ReadModel] = OrderedDict()
        self.lock = threading.Lock()

    def load(self, source: str, folder: Path | None, module_class: Any) -> Any:
        """A new ``module_class`` (sentence-transformers' ``StaticEmbedding``) of ``source``.

        Args:
            source: What ``module_class.from_model2vec`` loads (a folder or a hub name).
            folder: The folder on disk that holds it (``None``: not known; read every time).
            module_class: The static embedding class.
        """
        if folder is None:
            return module_class.from_model2vec(source)
        key = folder_key(folder)
        with self.lock:
            kept = self.read.get(key)
            if kept is not None:
                self.read.move_to_end(key)
        if kept is not None:
            return build(module_class, kept)
        module = module_class.from_model2vec(source)
        kept = ReadModel(
            tokenizer_json=module.tokenizer.to_str(),
            weights=module.embedding.weight.detach().clone(),
            base_model=getattr(module, "base_model", None),
        )
        with self.lock:
            self.read[key] = kept
            while len(self.read) > self.kept:
                self.read.popitem(last=False)
        return module

    def clear(self) -> None:
        """Forget every folder read."""
        with self.lock:
            self.read.clear()


def build(module_class: Any, kept: ReadModel) -> Any:
    """A new ``module_class`` from what a load read."""
    from tokenizers import Tokenizer

    return module_class(
        Tokenizer.from_str(kept.tokenizer_json),
        embedding_weights=kept.weights.clone(),
        base_model=kept.base_model,
    )


STATIC_MODELS = StaticModelMemo()
