"""pytest-niah: needle-in-a-haystack regression tests for embedding models.

The engine is usable without pytest::

    from pytest_niah import NiahConfig, compare, run_experiment, write_report
    results = run_experiment(NiahConfig(model="packaged-minilm", corpus="packaged"))
    write_report(results, "niah-report")

It caches embeddings and finished runs where the plugin does (``$NIAH_CACHE_DIR``, else the
user cache folder) and shows its progress on stderr, as the plugin does.

Names are imported lazily so that loading the pytest plugin stays free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "NiahConfig": "config.niah",
    "ConfigError": "errors",
    "NiahError": "errors",
    "Thresholds": "config.gate_expressions",
    "run_experiment": "experiment",
    "compare": "api",
    "write_report": "api",
    "NiahResults": "results.niah_results",
    "CaseResult": "measure.records",
    "MetricRow": "measure.records",
    "load_needle_set": "inputs.needles",
    "NeedleSet": "inputs.needles",
    "load_corpus": "inputs.corpus",
    "load_embedder": "embed.loader",
    "SentenceTransformerEmbedder": "embed.st_backend",
    "LexicalEmbedder": "embed.lexical",
}

__all__ = [*_EXPORTS, "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from pytest_niah.api import compare, write_report
    from pytest_niah.config.gate_expressions import Thresholds
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.embed.lexical import LexicalEmbedder
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.embed.st_backend import SentenceTransformerEmbedder
    from pytest_niah.errors import ConfigError, NiahError
    from pytest_niah.experiment import run_experiment
    from pytest_niah.inputs.corpus import load_corpus
    from pytest_niah.inputs.needles import NeedleSet, load_needle_set
    from pytest_niah.measure.records import CaseResult, MetricRow
    from pytest_niah.results.niah_results import NiahResults


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_niah' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"pytest_niah.{module}"), name)
