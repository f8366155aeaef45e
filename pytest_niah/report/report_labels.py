"""The labels a report shows its models under: the given ones, checked, or each model's name.

One label per results object, every label different: a label names a model's column, its
``results.<label>.json`` and its lines in the figures.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_niah.results.niah_results import NiahResults


def check_labels(results: Sequence[NiahResults], labels: Sequence[str] | None) -> list[str]:
    """The labels to use: the given ones after checks, else :func:`default_labels`.

    Raises:
        ValueError: no results, a label count that differs from the results', or a repeat.
    """
    if not results:
        raise ValueError("a report needs at least one results object")
    if labels is None:
        return default_labels(results)
    names = [str(label) for label in labels]
    if len(names) != len(results):
        raise ValueError(f"got {len(names)} labels for {len(results)} results; give one per model")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"labels must differ; repeated: {', '.join(repeated)}")
    return names


def default_labels(results: Sequence[NiahResults]) -> list[str]:
    """Each model's name; a repeated name gets ``#2``, ``#3`` ... so every label differs."""
    names = [r.model.name for r in results]
    labels = []
    for index, name in enumerate(names):
        seen = names[:index].count(name)
        labels.append(name if seen == 0 else f"{name} #{seen + 1}")
    return labels
