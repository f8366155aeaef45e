"""Refuse a baseline that measured something else before anything is built or embedded.

Every rule of :func:`~pytest_niah.results.compatibility.check_comparable` that the config,
the inputs and the model's tokenizer can decide is applied to the run's plan
(:func:`planned`), right after the inputs are loaded; the finished results are checked
again by the same rules
(:meth:`~pytest_niah.plugin.session.NiahSession.comparison`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_niah.config.niah import NiahConfig
from pytest_niah.plugin.session import NiahSession
from pytest_niah.results.compatibility import NOT_KNOWN, Measured, check_comparable

if TYPE_CHECKING:
    from pytest_niah.experiment import Inputs


def planned(
    config: NiahConfig, inputs: Inputs, *, tokenizer: Any = NOT_KNOWN, window: Any = NOT_KNOWN
) -> Measured:
    """What a run of ``config`` on ``inputs`` will measure, as its results will record it."""
    return Measured(
        config,
        inputs.corpus.fingerprint(),
        inputs.needle_set.fingerprint(),
        inputs.expansions.fingerprint() if inputs.expansions else None,
        tokenizer,
        window,
    )


def check_baseline(niah: NiahSession, label: str) -> None:
    """Refuse now the baseline of one model if its config, data or tokenizer differ.

    The tokenizer is read off the baseline when the model's identity is the baseline's (the
    same files and settings); otherwise the tokenizer is loaded (for a sentence-transformers
    model, the model), unless it may differ (``--niah-compare-allow=tokenizer``) or the run
    loads no model (``--niah-from-shards``): then it is checked after the run only.

    Raises:
        CompareError: the baseline measured something else.
        NiahError: the model's tokenizer cannot be loaded.
    """
    baseline = niah.baselines.baseline(label)
    if baseline is None:
        return
    tokenizer: Any = NOT_KNOWN
    window: Any = NOT_KNOWN
    if niah.settings.from_shards or "tokenizer" in niah.settings.compare_allow:
        pass  # no model to ask, or no need to load it
    elif niah.embedder(label).identity.digest == baseline.model.fingerprint:
        tokenizer = baseline.model.tokenizer  # the same model files, the same tokenizer
    else:
        embedder = niah.embedder(label)
        tokenizer, window = embedder.tokenizer.identity, embedder.windows.document
    plan = planned(niah.configs[label], niah.inputs(label), tokenizer=tokenizer, window=window)
    check_comparable(
        plan, baseline, allow=niah.settings.compare_allow, source=niah.baselines.source(label)
    )
