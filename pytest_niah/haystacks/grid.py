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


def depth_label(position: int, positions: int) -> str:
    """How a test id names a position: its depth in the filler in percent, ``d0`` to ``d100``.

    The depth, not the index, so that a pasted id means the same case in any grid: ``d25``
    is a quarter of the way in with 5 positions or 9, and is no test of a 10-position grid
    (0, 11, 22, ... 100), which then says so instead of running another case. Whole percents
    are distinct up to 101 positions; past that the depth has one decimal (``d12.5``).
    """
    if positions <= 1:
        return "d0"
    share = 100 * position / (positions - 1)
    return f"d{round(share)}" if positions <= 101 else f"d{share:.1f}".removesuffix(".0")


def case_test_id(
    group_id: str,
    arm: str,
    order: str,
    length: int,
    depth: str,
    scoring: str = "whole",
    seed: int | None = None,
) -> str:
    """The test id of one needle case, e.g. ``dietary-03-onehop-inverted-L4096-d78``.

    Its results' :func:`case_id` with the position's depth (:func:`depth_label`) in place of
    its index (``-p07``): results and saved runs keep the index, test ids say the depth.
    """
    base = f"{group_id}-{arm}-{order}-L{length}-{depth}{seed_suffix(seed)}"
    return base if scoring == "whole" else f"{base}-{scoring}"


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
    positions: int = 1  # the grid's positions, for the depth its test id names

    @property
    def test_id(self) -> str:
        """The id of its test: the depth in place of the position's index."""
        depth = depth_label(self.position, self.positions)
        return case_test_id(
            self.group_id, self.arm, self.order, self.length, depth, self.scoring, self.seed
        )

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
        CaseParam(model, arm, group.id, order, length, position, scoring, draw, config.positions)
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
        base = p.test_id if isinstance(p, CaseParam) else gate_id(p.arm, p.length, p.scoring)
        ids.append(f"{p.model}-{base}" if with_model else base)
    return ids
