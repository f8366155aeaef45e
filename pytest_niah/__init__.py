"""pytest-niah: needle-in-a-haystack regression tests for embedding models.

The engine is usable without pytest::

    from pytest_niah import NiahConfig, run_experiment
    results = run_experiment(NiahConfig(model="packaged-minilm", corpus="path/to/books"))

Names are imported lazily so that loading the pytest plugin stays free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "NiahConfig": "config",
    "ConfigError": "config",
    "Thresholds": "config",
    "run_experiment": "engine",
    "NiahResults": "results",
    "CaseResult": "results",
    "MetricRow": "results",
    "load_needle_set": "needles",
    "NeedleSet": "needles",
    "load_corpus": "corpus",
    "load_embedder": "embedders",
    "SentenceTransformerEmbedder": "embedders",
    "LexicalEmbedder": "embedders",
}

__all__ = [*_EXPORTS, "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from .config import ConfigError, NiahConfig, Thresholds
    from .corpus import load_corpus
    from .embedders import LexicalEmbedder, SentenceTransformerEmbedder, load_embedder
    from .engine import run_experiment
    from .needles import NeedleSet, load_needle_set
    from .results import CaseResult, MetricRow, NiahResults


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_niah' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
