"""The grid of cases and gates, and their ids: pure and cheap, so collection stays fast.

Nothing here touches a model, torch or the corpus: thousands of ids cost milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from pytest_niah.config.niah import NiahConfig
from pytest_niah.inputs.needles import NeedleSet


def case_id(
    group_id: str,
    arm: str,
    order: str,
    length: int,
    position: int,
    scoring: str = "whole",
    seed: int | None = None,
) -> str:
    """The id of one needle case, e.g. ``dietary-03-onehop-inverted-L4096-p07``.

    A draw of ``--niah-seeds`` follows the position (``...-p07-s7``); a scoring other than
    ``whole`` ends the id: ``...-L4096-p07-chunk-max``.
    """
    base = f"{group_id}-{arm}-{order}-L{length}-p{position:02d}{seed_suffix(seed)}"
    return base if scoring == "whole" else f"{base}-{scoring}"


def control_id(group_id: str, length: int, control: int, seed: int | None = None) -> str:
    """The id of one no-needle control, e.g. ``dietary-03-control-L4096-c0`` (``-c0-s7``)."""
    return f"{group_id}-control-L{length}-c{control}{seed_suffix(seed)}"


def seed_suffix(seed: int | None) -> str:
    """How an id names its draw: ``-s7``, or nothing for a run's single untagged draw."""
    return "" if seed is None else f"-s{seed}"


def gate_id(arm: str, length: int, scoring: str = "whole") -> str:
    """The id of one per-length gate: ``gate-onehop-L4096``, ``gate-literal-chunk-max-L64``."""
    middle = arm if scoring == "whole" else f"{arm}-{scoring}"
    return f"gate-{middle}-L{length}"


class CaseParam(NamedTuple):
    """One needle case of one model, as a test parameter."""

    model: str
    arm: str
    group_id: str
    order: str
    length: int
    position: int
    scoring: str = "whole"
    seed: int | None = None

    @property
    def case_id(self) -> str:
        """The id inside one model's results."""
        return case_id(
            self.group_id,
            self.arm,
            self.order,
            self.length,
            self.position,
            self.scoring,
            self.seed,
        )


class GateParam(NamedTuple):
    """One per-length gate of one model and arm, as a test parameter."""

    model: str
    arm: str
    length: int
    scoring: str = "whole"


def case_params(model: str, config: NiahConfig, needle_set: NeedleSet) -> list[CaseParam]:
    """Every case of one model, in results order.

    That is arm, scoring, group, length, draw (``--niah-seeds``), order, position.
    """
    return [
        CaseParam(model, arm, group.id, order, length, position, scoring, draw)
        for arm in config.arms
        for scoring in config.scoring
        for group in needle_set.groups
        for length in config.lengths
        for draw in config.draws
        for order in config.orders
        for position in range(config.positions)
    ]


def gate_params(model: str, config: NiahConfig) -> list[GateParam]:
    """One gate per arm, scoring and length."""
    return [
        GateParam(model, arm, length, scoring)
        for arm in config.arms
        for scoring in config.scoring
        for length in config.lengths
    ]


def param_ids(params: Sequence[CaseParam | GateParam], *, with_model: bool) -> list[str]:
    """Test ids; the model label leads only when several models run."""
    ids = []
    for p in params:
        base = p.case_id if isinstance(p, CaseParam) else gate_id(p.arm, p.length, p.scoring)
        ids.append(f"{p.model}-{base}" if with_model else base)
    return ids
