"""The plugin's per-run memo in ``config.stash``: settings, configs, and what was made once.

Results are computed once per machine (:mod:`pytest_niah.results.shared_files`), then read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.run_settings import RunSettings
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.grid import CaseParam, GateParam, case_params, gate_params
from pytest_niah.inputs.needles import NeedleSet, load_needle_set
from pytest_niah.plugin.baselines import Baselines
from pytest_niah.plugin.run_state import RunState

if TYPE_CHECKING:
    from pytest_niah.embed.protocol import Embedder
    from pytest_niah.experiment import Inputs
    from pytest_niah.experiment.run_report import RunReport
    from pytest_niah.measure.gating import LengthGates
    from pytest_niah.measure.records import MetricRow
    from pytest_niah.results.compare import Comparison
    from pytest_niah.results.niah_results import NiahResults


@dataclass
class NiahSession:
    """The run's settings and configs, and a memo of what is made from them once.

    Attributes:
        configs: One config per model label, in command-line order.
        settings: The run's options, checked (:func:`~pytest_niah.plugin.settings.build_session`).
        state: How the run goes.
        baselines: The runs ``--niah-compare`` names, loaded and compared on first use.
    """

    configs: dict[str, NiahConfig]
    settings: RunSettings = field(default_factory=RunSettings)
    state: RunState = field(default_factory=RunState)
    baselines: Baselines = field(init=False)
    _needle_sets: dict[str, NeedleSet] = field(default_factory=dict, repr=False)
    _embedders: dict[str, Embedder] = field(default_factory=dict, repr=False)
    _inputs: dict[str, Inputs] = field(default_factory=dict, repr=False)
    _results: dict[str, NiahResults] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.baselines = Baselines(self.settings.store_dir, allow=self.settings.compare_allow)

    @classmethod
    def create(
        cls, models: list[ModelSpec], base: NiahConfig, settings: RunSettings | None = None
    ) -> NiahSession:
        """One config per model; duplicate labels are an error."""
        configs: dict[str, NiahConfig] = {}
        for spec in models:
            if spec.label in configs:
                raise ConfigError(
                    f"--niah-model: two models share the label {spec.label!r}",
                    "name them apart with LABEL=NAME_OR_PATH",
                )
            configs[spec.label] = base.replace(model=spec.name)
        return cls(configs=configs, settings=settings or RunSettings())

    @property
    def labels(self) -> list[str]:
        """Model labels in command-line order."""
        return list(self.configs)

    def needle_set(self, label: str) -> NeedleSet:
        """The selected needle groups of one model's config (validated, cheap)."""
        if label not in self._needle_sets:
            config = self.configs[label]
            self._needle_sets[label] = load_needle_set(config.needles).select(config.groups or None)
        return self._needle_sets[label]

    def case_params(self) -> list[CaseParam]:
        """Every case of every model."""
        return [
            p
            for label in self.labels
            for p in case_params(label, self.configs[label], self.needle_set(label))
        ]

    def gate_params(self) -> list[GateParam]:
        """Every gate of every model."""
        return [p for label in self.labels for p in gate_params(label, self.configs[label])]

    def embedder(self, label: str) -> Embedder:
        """The model of one label (loaded on first use)."""
        if label not in self._embedders:
            from pytest_niah.embed.loader import load_embedder

            memo = self.settings.cache.model_hashes
            self._embedders[label] = load_embedder(self.configs[label], memo_dir=memo)
        return self._embedders[label]

    def inputs(self, label: str) -> Inputs:
        """The needle set, corpus and expansions of one model's config (loaded once)."""
        if label not in self._inputs:
            from pytest_niah.experiment import load_inputs

            books = self.settings.cache.books
            self._inputs[label] = load_inputs(self.configs[label], cache_dir=books)
        return self._inputs[label]

    def close(self) -> None:
        """Release models (multi-process pools)."""
        for embedder in self._embedders.values():
            embedder.close()
        self._embedders.clear()

    def results(self, label: str) -> NiahResults:
        """Computed once per machine (:func:`~pytest_niah.experiment.shared_run.run_or_gather`).

        Raises:
            NiahError: the experiment could not run; the message says why and how to fix it.
        """
        if label not in self._results:
            from pytest_niah.experiment.shared_run import run_or_gather
            from pytest_niah.results.shared_files import load_or_compute

            path = self.state.results_file(label, self.configs[label])
            run = partial(
                run_or_gather,
                label,
                self.configs[label],
                path,
                self.settings,
                several=len(self.configs) > 1,
                embedder=partial(self.embedder, label),
                inputs=partial(self.inputs, label),
                progress=self.state.progress,
            )
            self._results[label] = load_or_compute(path, run)
        return self._results[label]

    def results_or_stop(self, label: str) -> NiahResults:
        """The results; a problem stops the whole session once, with its cause."""
        import pytest

        from pytest_niah.errors import NiahError

        try:
            return self.results(label)
        except NiahError as exc:
            message = f"pytest-niah could not run {label!r}: {exc}"
        pytest.exit(message, returncode=pytest.ExitCode.USAGE_ERROR)

    def run_report(self, label: str) -> RunReport | None:
        """How the run of one model went (reused? embedded? notes), if it ran in this session."""
        from pytest_niah.experiment.run_report import RunReport
        from pytest_niah.results.shared_files import run_report_file

        if self.state.shared_dir is None:
            return None
        return RunReport.load(run_report_file(self.state.results_file(label, self.configs[label])))

    def stored_results(self, label: str) -> NiahResults | None:
        """Results if some process of this run computed them, without computing."""
        if label not in self._results and self.state.shared_dir is not None:
            path = self.state.results_file(label, self.configs[label])
            if path.exists():
                from pytest_niah.results.niah_results import NiahResults

                self._results[label] = NiahResults.load(path)
        return self._results.get(label)

    def comparison(self, label: str) -> Comparison | None:
        """This run of one model against its baseline (:meth:`Baselines.comparison`)."""
        return self.baselines.comparison(label, self.stored_results, self.configs[label])

    def gates(self, label: str, row: MetricRow, results: NiahResults) -> LengthGates:
        """Every gate of one per-length row, and its outcome (:func:`length_gates`)."""
        from pytest_niah.measure.gating import length_gates

        s = self.settings
        return length_gates(
            row,
            results.intervals,
            comparison=self.comparison(label) if s.compare_fail else None,  # only if gated
            min_auc=s.min_auc,
            min_ratio=s.min_ratio,
            allowances=s.compare_fail,
            policy=s.inconclusive,
        )

    def gated(self, length: int) -> bool:
        """Whether any gate applies at ``length`` (:func:`gated_at`)."""
        from pytest_niah.measure.gating import gated_at

        s = self.settings
        return gated_at(length, min_auc=s.min_auc, min_ratio=s.min_ratio, allowances=s.compare_fail)
