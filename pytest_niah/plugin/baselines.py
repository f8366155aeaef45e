"""The runs ``--niah-compare`` names, one per model, and this run's comparison with each.

Kept apart from :class:`~pytest_niah.plugin.session.NiahSession`, which only memoises
results: a baseline is resolved once (before this run saves anything, so ``previous`` is
never this run), loaded once, and compared once per model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.results.compare import Comparison
    from pytest_niah.results.niah_results import NiahResults


@dataclass
class Baselines:
    """Baseline runs by model label, loaded and compared lazily.

    Attributes:
        store_dir: The run store ``--niah-compare`` reads.
        allow: The ``--niah-compare-allow`` words (differences that may be compared).
    """

    store_dir: Path
    allow: tuple[str, ...] = ()
    paths: dict[str, Path] = field(default_factory=dict)
    loaded: dict[str, NiahResults] = field(default_factory=dict, repr=False)
    comparisons: dict[str, Comparison] = field(default_factory=dict, repr=False)

    def resolve(self, ref: str, labels: Iterable[str]) -> None:
        """Find the run ``ref`` names for every model (raises the store's error if missing)."""
        from pytest_niah.results.storage import RunStore

        # Resolved before this session saves anything, so "previous" is never this run and
        # needs no time limit: one saved a moment ago counts.
        for label in labels:
            self.paths[label] = RunStore(self.store_dir).resolve(ref, label)

    def source(self, label: str) -> str:
        """The baseline file of one model, for messages ("" without one)."""
        return str(self.paths.get(label, ""))

    def baseline(self, label: str) -> NiahResults | None:
        """The baseline results of one model, if ``--niah-compare`` was given."""
        if label not in self.paths:
            return None
        if label not in self.loaded:
            from pytest_niah.results.run_reading import load_run

            self.loaded[label] = load_run(self.paths[label])[1]
        return self.loaded[label]

    def comparison(
        self,
        label: str,
        results: Callable[[str], NiahResults | None],
        config: NiahConfig,
    ) -> Comparison | None:
        """This run of one model against its baseline, paired on identical cells.

        ``results`` gives this run's results if they exist yet (``None``: not computed, no
        comparison yet, nothing memoised).

        Raises:
            CompareError: the baseline measured something else, or shares no cell.
        """
        baseline = self.baseline(label)
        if baseline is None:
            return None
        if label not in self.comparisons:
            current = results(label)
            if current is None:
                return None
            from pytest_niah.results.compare import compare_results

            self.comparisons[label] = compare_results(
                current,
                baseline,
                n_resamples=config.bootstrap,  # 0: no interval, every gate inconclusive
                seed=config.seed,
                allow=self.allow,
                source=self.source(label),
            )
        return self.comparisons[label]
