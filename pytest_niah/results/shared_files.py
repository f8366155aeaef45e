"""Where one pytest run keeps its results for all its processes.

Each model's results are computed once per machine, under a file lock, into a folder every
process of the run shares; every other process reads that file. A file's name comes from
the label's store folder (:func:`~pytest_niah.naming.label_file_name`), one-to-one and
bounded, and the config's fingerprint, so any label gives a short, safe name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_niah.naming import label_file_name

if TYPE_CHECKING:
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.results.niah_results import NiahResults


def results_file(folder: Path, label: str, config: NiahConfig) -> Path:
    """The shared results file of one model's config."""
    return folder / f"niah-{label_file_name(label)}-{config.fingerprint()}.json"


def run_report_file(results: Path) -> Path:
    """The run report beside a shared results file (how that run went)."""
    return results.with_suffix(".run.json")


def load_or_compute(path: Path, compute: Callable[[], NiahResults]) -> NiahResults:
    """The results at ``path``, computed by ``compute`` (which saves them) if none are there.

    A file lock makes one process compute while the others wait, then read its file.
    """
    from filelock import FileLock

    from pytest_niah.results.niah_results import NiahResults

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        return NiahResults.load(path) if path.exists() else compute()
