"""The metrics a history shows: the default two, the names a user gives, their labels."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_niah.config.vocabulary import METRIC_ALIASES, METRIC_LABELS
from pytest_niah.errors import ConfigError

# The metrics a history shows by default: the two the study and the gates centre on.
DEFAULT_METRICS = ("auc", "comparative_ratio")


def metric_names(text: str | Iterable[str]) -> tuple[str, ...]:
    """Metric names from a comma list or names (``auc,ratio``), as MetricRow fields.

    Raises:
        ConfigError: an unknown metric; the message lists the known ones.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    out: list[str] = []
    for item in items:
        key = item.strip().lower().replace("-", "_")
        if not key:
            continue
        name = METRIC_ALIASES.get(key) or METRIC_ALIASES.get(key.replace("_", "-"))
        if name is None:
            known = ", ".join(sorted(METRIC_ALIASES))
            raise ConfigError(f"--metric: unknown metric {item.strip()!r}", f"use one of {known}")
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError("--metric: no metric given", "give e.g. --metric auc,ratio")
    return tuple(out)


def metric_label(metric: str) -> str:
    """The display name of a metric (``AUC``, ``comparative ratio``)."""
    return METRIC_LABELS.get(metric, metric)
