"""The plugin's per-run state, kept in ``config.stash``: what to run, and the results once run.

Results are computed at most once per machine: before the first test runs (in the xdist
controller, or the only process) the experiment of every model runs and its results are
written to a folder every worker shares; every process then reads that file. A problem
found while running stops the session once, with its cause, instead of failing each test.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_niah.config import paths
from pytest_niah.config.gate_expressions import Allowance, Thresholds
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.options import default
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.grid import CaseParam, GateParam, case_params, gate_params
from pytest_niah.inputs.needles import NeedleSet, load_needle_set

if TYPE_CHECKING:
    from pytest_niah.config.cache_policy import CachePolicy
    from pytest_niah.embed.protocol import Embedder
    from pytest_niah.errors import NiahError
    from pytest_niah.experiment import Inputs
    from pytest_niah.experiment.run_report import RunReport
    from pytest_niah.measure.gating import LengthGates
    from pytest_niah.measure.records import MetricRow
    from pytest_niah.plugin.baselines import Baselines
    from pytest_niah.progress import Progress
    from pytest_niah.results.compare import Comparison
    from pytest_niah.results.niah_results import NiahResults


def default_cache() -> CachePolicy:
    """The cache policy of the options' defaults."""
    from pytest_niah.config.cache_policy import CachePolicy

    return CachePolicy.from_options(default("cache_dir"), default("no_cache"))


@dataclass
class NiahSession:
    """What the run asked for, and a lazily filled store of embedders and results.

    Its settings are the pytest-run options of the option table
    (:data:`~pytest_niah.config.options.OPTIONS`, those not part of the experiment), each a
    field of the option's own name, filled from the table by
    :func:`~pytest_niah.plugin.settings.build_session`; the rest is derived from them.

    Attributes:
        configs: One config per model label, in command-line order.
        cache: Which caches every run uses, and where (``--niah-cache-dir``,
            ``--niah-no-cache``).
        store_dir: Folder of saved runs (``--niah-storage``, else under the rootdir).
        snapshot_dir: Folder of the snapshots, one sub-folder per model.
        shared_dir: Folder shared by all processes of this run (set by the plugin).
        progress: Where the experiment reports its progress.
        written: Every file this session wrote (results, runs, reports, parts).
        output_errors: Outputs that could not be written, each with its cause.
        stopped: Why the run was stopped before its tests, or empty: then the summary and
            the outputs are left out, and the cause is printed once.
    """

    configs: dict[str, NiahConfig]
    # -- options of the pytest run (see OPTIONS for what each does) --
    min_auc: Thresholds = field(default_factory=lambda: default("min_auc"))
    min_ratio: Thresholds = field(default_factory=lambda: default("min_ratio"))
    inconclusive: str = default("inconclusive")
    strict: bool = default("strict")
    json: str = default("json")
    save: str = default("save")
    save_overwrite: bool = default("save_overwrite")
    compare_fail: tuple[Allowance, ...] = default("compare_fail")
    compare_allow: tuple[str, ...] = default("compare_allow")
    report: str = default("report")
    snapshot: bool = default("snapshot")
    snapshot_digits: int = default("snapshot_digits")
    speed: bool = default("speed")
    shard: tuple[int, int] | None = default("shard")
    shard_dir: str = default("shard_dir")
    from_shards: str = default("from_shards")
    # -- derived from the options --
    cache: CachePolicy = field(default_factory=default_cache)
    store_dir: Path = field(default_factory=lambda: paths.store_dir("."))
    snapshot_dir: Path = field(default_factory=lambda: paths.snapshot_dir("."))
    # -- state --
    shared_dir: Path | None = None
    progress: Progress | None = None
    written: list[Path] = field(default_factory=list)
    output_errors: list[str] = field(default_factory=list)
    stopped: str = ""
    # (label, length) -> what test_speed measured there (its benchmark's extra_info).
    speed_tests: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    _baselines: Baselines | None = field(default=None, repr=False)
    _needle_sets: dict[str, NeedleSet] = field(default_factory=dict, repr=False)
    _embedders: dict[str, Embedder] = field(default_factory=dict, repr=False)
    _inputs: dict[str, Inputs] = field(default_factory=dict, repr=False)
    _results: dict[str, NiahResults] = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, models: list[ModelSpec], base: NiahConfig, **settings: Any) -> NiahSession:
        """One config per model; duplicate labels are an error."""
        configs: dict[str, NiahConfig] = {}
        for spec in models:
            if spec.label in configs:
                raise ConfigError(
                    f"--niah-model: two models share the label {spec.label!r}",
                    "name them apart with LABEL=NAME_OR_PATH",
                )
            configs[spec.label] = base.replace(model=spec.name)
        return cls(configs=configs, **settings)

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

            memo = self.cache.model_hashes
            self._embedders[label] = load_embedder(self.configs[label], memo_dir=memo)
        return self._embedders[label]

    def inputs(self, label: str) -> Inputs:
        """The needle set, corpus and expansions of one model's config (loaded once)."""
        if label not in self._inputs:
            from pytest_niah.experiment import load_inputs

            config = self.configs[label]
            self._inputs[label] = load_inputs(config, cache_dir=self.cache.books)
        return self._inputs[label]

    def problems_before_running(self) -> list[tuple[str, NiahError]]:
        """Load every model's inputs and identify its model, collecting every problem.

        Run before the first experiment, so that a corpus that will not download and a
        model that cannot be found are both reported by one run, not one per run.
        """
        from pytest_niah.errors import NiahError

        found: list[tuple[str, NiahError]] = []
        for label in self.labels:
            try:
                self.inputs(label)
            except NiahError as exc:
                found.append((label, exc))
            if self.from_shards:
                continue  # the gate job of a sharded run loads no model
            try:
                self.embedder(label).identity  # noqa: B018 - locates the model, no load
            except NiahError as exc:
                found.append((label, exc))
        return found

    def close(self) -> None:
        """Release models (multi-process pools)."""
        for embedder in self._embedders.values():
            embedder.close()
        self._embedders.clear()

    # -- results ------------------------------------------------------------------------------

    def results_path(self, label: str) -> Path:
        """The shared results file of one model's config.

        Named after the label's store folder (:func:`~pytest_niah.naming.label_file_name`),
        which is one-to-one and bounded, so any label gives a short, safe file name.
        """
        if self.shared_dir is None:
            raise RuntimeError("pytest-niah: the shared folder is not set up yet")
        from pytest_niah.naming import label_file_name

        stem = f"niah-{label_file_name(label)}-{self.configs[label].fingerprint()}"
        return self.shared_dir / f"{stem}.json"

    def results(self, label: str) -> NiahResults:
        """Compute once per machine (under a file lock), then read everywhere.

        Raises:
            NiahError: the experiment could not run; the message says why and how to fix it.
        """
        if label not in self._results:
            from filelock import FileLock

            from pytest_niah.results.niah_results import NiahResults

            path = self.results_path(label)
            path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(path) + ".lock"):
                if path.exists():
                    self._results[label] = NiahResults.load(path)
                else:
                    self._results[label] = self._compute(label, path)
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

    def parts_dir(self, label: str) -> Path:
        """The folder of one model's part files.

        The shard folder itself, or its LABEL sub-folder when the run has several models.
        """
        root = Path(self.from_shards or self.shard_dir)
        if len(self.labels) == 1:
            return root
        from pytest_niah.naming import label_file_name

        return root / label_file_name(label)

    def write_shard(self, label: str) -> Path:
        """Embed this job's share of one model's inputs and write its part file."""
        from pytest_niah.experiment.shards import Shard, run_shard

        if self.shard is None:
            raise RuntimeError("pytest-niah: not a shard job")
        part = run_shard(
            self.configs[label],
            Shard(*self.shard),
            self.parts_dir(label),
            embedder=self.embedder(label),
            inputs=self.inputs(label),
            cache_dir=self.cache.root,
            use_cache=self.cache.enabled,
            progress=self.progress,
        )
        self.written.append(part)
        return part

    def _compute(self, label: str, path: Path) -> NiahResults:
        from pytest_niah.experiment import RunReport, run_experiment

        config = self.configs[label]
        report = RunReport()
        if self.from_shards:
            from pytest_niah.experiment.shards import results_from_shards

            results = results_from_shards(config, self.parts_dir(label))
            report.from_shards = self.parts_dir(label)
        else:
            results = run_experiment(
                config,
                embedder=self.embedder(label),
                inputs=self.inputs(label),
                cache_dir=self.cache.root,
                use_cache=self.cache.enabled,
                progress=self.progress,
                report=report,
                speed=self.speed,
            )
        results.save(path)
        report.save(self._run_report_path(label))
        return results

    def _run_report_path(self, label: str) -> Path:
        return self.results_path(label).with_suffix(".run.json")

    def run_report(self, label: str) -> RunReport | None:
        """How the run of one model went (reused? embedded? notes), if it ran in this session."""
        if self.shared_dir is None:
            return None
        from pytest_niah.experiment.run_report import RunReport

        return RunReport.load(self._run_report_path(label))

    def stored_results(self, label: str) -> NiahResults | None:
        """Results if some process of this run computed them, without computing."""
        if label in self._results:
            return self._results[label]
        if self.shared_dir is not None and self.results_path(label).exists():
            from pytest_niah.results.niah_results import NiahResults

            self._results[label] = NiahResults.load(self.results_path(label))
            return self._results[label]
        return None

    # -- baselines and comparisons (plugin/baselines.py) -----------------------------------------

    @property
    def baselines(self) -> Baselines:
        """The runs ``--niah-compare`` names, created on first use from the settings."""
        if self._baselines is None:
            from pytest_niah.plugin.baselines import Baselines

            self._baselines = Baselines(self.store_dir, allow=self.compare_allow)
        return self._baselines

    def resolve_baselines(self, ref: str) -> None:
        """Find the run ``--niah-compare`` names for every model (fails early if missing)."""
        self.baselines.resolve(ref, self.labels)

    def baseline_source(self, label: str) -> str:
        """The baseline file of one model, for messages."""
        return self.baselines.source(label)

    def baseline(self, label: str) -> NiahResults | None:
        """The baseline results of one model, if ``--niah-compare`` was given."""
        return self.baselines.baseline(label)

    def comparison(self, label: str) -> Comparison | None:
        """This run of one model against its baseline (:meth:`Baselines.comparison`)."""
        return self.baselines.comparison(label, self.stored_results, self.configs[label])

    # -- gates --------------------------------------------------------------------------------

    def gates(self, label: str, row: MetricRow, results: NiahResults) -> LengthGates:
        """Every gate of one per-length row, and its outcome (:func:`length_gates`)."""
        from pytest_niah.measure.gating import length_gates

        return length_gates(
            row,
            results.intervals,
            comparison=self.comparison(label) if self.compare_fail else None,  # only if gated
            min_auc=self.min_auc,
            min_ratio=self.min_ratio,
            allowances=self.compare_fail,
            policy=self.inconclusive,
        )

    def gated(self, length: int) -> bool:
        """Whether any gate applies at ``length`` (:func:`gated_at`)."""
        from pytest_niah.measure.gating import gated_at

        return gated_at(
            length, min_auc=self.min_auc, min_ratio=self.min_ratio, allowances=self.compare_fail
        )
