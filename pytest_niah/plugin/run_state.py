"""How one pytest-niah run goes: what the hooks and the suite record for the summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_niah.results.shared_files import results_file

if TYPE_CHECKING:
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.progress import Progress


@dataclass
class RunState:
    """How the run goes: set by the hooks and the suite, read by the summary and the outputs.

    Attributes:
        shared_dir: Folder shared by all processes of this run (set by the plugin).
        progress: Where the experiment reports its progress.
        written: Every file this session wrote (results, runs, reports, parts).
        output_errors: Outputs that could not be written, each with its cause.
        stopped: Why the run was stopped before its tests, or empty: then the summary and
            the outputs are left out, and the cause is printed once.
        speed_tests: (label, length) -> what test_speed measured there (its extra_info).
    """

    shared_dir: Path | None = None
    progress: Progress | None = None
    written: list[Path] = field(default_factory=list)
    output_errors: list[str] = field(default_factory=list)
    stopped: str = ""
    speed_tests: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)

    def results_file(self, label: str, config: NiahConfig) -> Path:
        """The shared results file of one model's config (:func:`results_file`)."""
        if self.shared_dir is None:
            raise RuntimeError("pytest-niah: the shared folder is not set up yet")
        return results_file(self.shared_dir, label, config)
