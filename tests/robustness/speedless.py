"""Results files compared without their speed record (measured, so it differs by run)."""

from __future__ import annotations

import json
from pathlib import Path


def same_results(a: Path, b: Path) -> bool:
    """The same results file but for the speed record."""

    def deterministic(path: Path) -> dict:
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("speed")
        return data

    return deterministic(a) == deterministic(b)
