"""The plugin's per-run state, kept in ``config.stash``: what to run, and the results once run.

Results are computed at most once per machine: before the first test runs (in the xdist
controller, or the only process) the experiment of every model runs and its results are
written to a folder every worker shares; every process then reads that file. A problem
found while running stops the session once, with its cause, instead of failing each test.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_niah.config import paths
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.options import default
from pytest_niah.config.parsers import Allowance, Thresholds
from pytest_niah.errors import ConfigError
from pytest_niah.haystacks.grid import CaseParam, GateParam, case_params, gate_params
from pytest_niah.inputs.needles import NeedleSet, load_needle_set

if TYPE_CHECKING:
    from pytest_niah.embed.protocol import Embedder
    from pytest_niah.errors import NiahError
    from pytest_niah.experiment import Inputs
    from pytest_niah.measure.records import MetricRow
    from pytest_niah.measure.verdicts import Verdict
    from pytest_niah.progress import Progress
    from pytest_niah.results.compare import Comparison
    from pytest_niah.results.niah_results import NiahResults


@dataclass(frozen=True)
class Gate:
    """One gate's verdict at one length, ready to show: which gate, the verdict, the outcome."""

    what: str
    verdict: Verdict
    outcome: str

    def message(self) -> str:
        """One line: the gate, the numbers, the verdict, and what would resolve it."""
        from pytest_niah.report.terminal import verdict_message

        return verdict_message(self.what, self.verdict)


def _unpaired(allowance: Allowance) -> Verdict:
    """The verdict of a gated slice that no cell of the baseline pairs with: it cannot tell.

    Never a silent pass: under the default policy it fails (the point is unknown, so it
    counts as past the allowance); ``--niah-inconclusive`` can make it warn or pass.
    """
    from pytest_niah.measure.verdicts import Verdict

    nan = float("nan")
    return Verdict(
        kind="comparison",
        metric=allowance.metric,
        state="inconclusive",
        point=nan,
        low=nan,
        high=nan,
        limit=nan if allowance.relative else allowance.amount,
        mde=nan,
        groups=0,
        past_limit=True,
        reason="no cell of this arm, scoring and length is paired with the baseline",
        resolve="compare with a baseline that measured it",
    )


@dataclass
class NiahSession:
    """What the run asked for, and a lazily filled store of embedders and results.

    Attributes:
        configs: One config per model label, in command-line order.
        min_auc: AUC gate.
        min_ratio: Comparative-ratio gate.
        inconclusive: What an inconclusive gate does (auto, fail, warn, pass).
        strict: A missed needle fails instead of xfailing.
        json_path: Where to write results at the end, or empty.
        cache_dir: The cache root; empty uses the user cache folder.
        use_cache: Read and write the embedding and results caches.
        save_name: Save each model's results under this run name at the end, or empty.
        save_overwrite: Saving may replace a run of the same name.
        compare_fail: Allowed drops versus the baseline (``--niah-compare-fail``).
        compare_allow: Fields the baseline may differ in.
        store_dir: Folder of saved runs.
        report_dir: Where to write the report at the end, or empty.
        snapshot: Collect the snapshot test of each model's metric table.
        snapshot_digits: Digits floats keep in snapshots.
        snapshot_dir: Folder of the snapshots, one sub-folder per model.
        shared_dir: Folder shared by all processes of this run (set by the plugin).
        progress: Where the experiment reports its progress.
        shard: (K, N) when this job embeds only share K of N (``--niah-shard``).
        shard_dir: Where a shard job writes its part file.
        from_shards: Folder of gathered part files to measure from, loading no model.
        written: Every file this session wrote (results, runs, reports, parts).
        output_errors: Outputs that could not be written, each with its cause.
        stopped: Why the run was stopped before its tests, or empty: then the summary and
            the outputs are left out, and the cause is printed once.
    """

    configs: dict[str, NiahConfig]
    min_auc: Thresholds = field(default_factory=lambda: default("min_auc"))
    min_ratio: Thresholds = field(default_factory=lambda: default("min_ratio"))
    inconclusive: str = default("inconclusive")
    strict: bool = default("strict")
    json_path: str = default("json")
    cache_dir: str = default("cache_dir")
    use_cache: bool = not default("no_cache")
    save_name: str = default("save")
    save_overwrite: bool = default("save_overwrite")
    compare_fail: tuple[Allowance, ...] = default("compare_fail")
    compare_allow: tuple[str, ...] = default("compare_allow")
    store_dir: Path = field(default_factory=lambda: paths.store_dir("."))
    report_dir: str = default("report")
    snapshot: bool = default("snapshot")
    snapshot_digits: int = default("snapshot_digits")
    snapshot_dir: Path = field(default_factory=lambda: paths.snapshot_dir("."))
    shared_dir: Path | None = None
    progress: Progress | None = None
    shard: tuple[int, int] | None = default("shard")
    shard_dir: str = default("shard_dir")
    from_shards: str = default("from_shards")
    written: list[Path] = field(default_factory=list)
    output_errors: list[str] = field(default_factory=list)
    stopped: str = ""
    _baseline_paths: dict[str, Path] = field(default_factory=dict, repr=False)
    _baselines: dict[str, NiahResults] = field(default_factory=dict, repr=False)
    _comparisons: dict[str, Comparison] = field(default_factory=dict, repr=False)
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

    @property
    def cache_root(self) -> Path:
        """The cache root (embeddings, results, sentence counts, file hashes)."""
        return paths.cache_root(self.cache_dir)

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

            memo = self.cache_root if self.use_cache else None  # file hashes are a cache too
            self._embedders[label] = load_embedder(self.configs[label], memo_dir=memo)
        return self._embedders[label]

    def inputs(self, label: str) -> Inputs:
        """The needle set, corpus and expansions of one model's config (loaded once)."""
        if label not in self._inputs:
            from pytest_niah.experiment import load_inputs

            config = self.configs[label]
            self._inputs[label] = load_inputs(config, cache_dir=self.cache_root)
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

        Named after the label's store folder (:func:`~pytest_niah.results.storage.label_folder`),
        which is one-to-one and bounded, so any label gives a short, safe file name.
        """
        if self.shared_dir is None:
            raise RuntimeError("pytest-niah: the shared folder is not set up yet")
        from pytest_niah.results.storage import label_folder

        stem = f"niah-{label_folder(label)}-{self.configs[label].fingerprint()}"
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
        from pytest_niah.results.storage import label_folder

        return root / label_folder(label)

    def write_shard(self, label: str) -> Path:
        """Embed this job's share of one model's inputs and write its part file."""
        from pytest_niah.experiment import RunReport
        from pytest_niah.shards import Shard, run_shard

        if self.shard is None:
            raise RuntimeError("pytest-niah: not a shard job")
        config = self.configs[label]
        report = RunReport()
        part = run_shard(
            config,
            Shard(*self.shard),
            self.parts_dir(label),
            embedder=self.embedder(label),
            inputs=self.inputs(label),
            cache_dir=self.cache_root,
            use_cache=self.use_cache,
            progress=self.progress,
            report=report,
        )
        self.written.append(part)
        return part

    def _compute(self, label: str, path: Path) -> NiahResults:
        from pytest_niah.experiment import RunReport, run_experiment

        config = self.configs[label]
        if self.from_shards:
            from pytest_niah.shards import results_from_shards

            results = results_from_shards(config, self.parts_dir(label))
            results.save(path)
            note = {"reused": False, "from_shards": str(self.parts_dir(label)), "notes": []}
            path.with_suffix(".run.json").write_text(json.dumps(note), encoding="utf-8")
            return results
        report = RunReport()
        # Downloaded books always live under the cache root; with --niah-no-cache nothing
        # else is read or written there (embeddings, results, sentence token counts).
        inputs = self.inputs(label)
        results = run_experiment(
            config,
            embedder=self.embedder(label),
            inputs=inputs,
            cache_dir=self.cache_root if self.use_cache else None,
            use_cache=self.use_cache,
            progress=self.progress,
            report=report,
        )
        results.save(path)
        note = {
            "reused": report.reused,
            "cached_results": str(report.cached_results or ""),
            "embedding": asdict(report.embedding),
            "cache": str(self.cache_root) if self.use_cache else "",
            "notes": report.notes,
        }
        path.with_suffix(".run.json").write_text(json.dumps(note), encoding="utf-8")
        return results

    def run_report(self, label: str) -> dict[str, Any] | None:
        """How the run of one model went (reused? embedded? notes), if it ran in this session."""
        if self.shared_dir is None:
            return None
        path = self.results_path(label).with_suffix(".run.json")
        try:
            loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return loaded

    def stored_results(self, label: str) -> NiahResults | None:
        """Results if some process of this run computed them, without computing."""
        if label in self._results:
            return self._results[label]
        if self.shared_dir is not None and self.results_path(label).exists():
            from pytest_niah.results.niah_results import NiahResults

            self._results[label] = NiahResults.load(self.results_path(label))
            return self._results[label]
        return None

    # -- baselines and comparisons ------------------------------------------------------------

    def resolve_baselines(self, ref: str) -> None:
        """Find the run ``--niah-compare`` names for every model (fails early if missing)."""
        from pytest_niah.results.storage import resolve_run

        # Resolved before this session saves anything, so "previous" is never this run; no
        # time limit, as saved runs keep whole seconds and one saved a moment ago counts.
        for label in self.labels:
            self._baseline_paths[label] = resolve_run(ref, store=self.store_dir, label=label)

    def baseline_source(self, label: str) -> str:
        """The baseline file of one model, for messages."""
        return str(self._baseline_paths.get(label, ""))

    def baseline(self, label: str) -> NiahResults | None:
        """The baseline results of one model, if ``--niah-compare`` was given."""
        if label not in self._baseline_paths:
            return None
        if label not in self._baselines:
            from pytest_niah.results.storage import load_run

            self._baselines[label] = load_run(self._baseline_paths[label])[1]
        return self._baselines[label]

    def comparison(self, label: str) -> Comparison | None:
        """This run of one model against its baseline, paired on identical cells.

        Raises:
            CompareError: the baseline measured something else, or shares no cell.
        """
        baseline = self.baseline(label)
        if baseline is None:
            return None
        if label not in self._comparisons:
            results = self.stored_results(label)
            if results is None:
                return None
            from pytest_niah.results.compare import compare_results

            config = self.configs[label]
            self._comparisons[label] = compare_results(
                results,
                baseline,
                n_resamples=config.bootstrap or default("bootstrap"),
                seed=config.seed,
                allow=self.compare_allow,
                source=self.baseline_source(label),
            )
        return self._comparisons[label]

    # -- gates --------------------------------------------------------------------------------

    def gates(self, label: str, row: MetricRow, results: NiahResults) -> list[Gate]:
        """Every gate that applies to one per-length row, with its verdict and outcome."""
        from pytest_niah.measure.stats import Interval
        from pytest_niah.measure.verdicts import minimum_verdict

        out = []
        for what, metric, thresholds in (
            ("--niah-min-auc", "auc", self.min_auc),
            ("--niah-min-ratio", "comparative_ratio", self.min_ratio),
        ):
            threshold = thresholds.at(row.length)
            if threshold is None:
                continue
            found = results.interval(row.arm, row.length, metric, row.scoring)
            value = getattr(row, metric)
            interval = (
                Interval(metric, value, found.low, found.high, found.se, found.groups)
                if found is not None
                else Interval(metric, value, float("nan"), float("nan"))
            )
            verdict = minimum_verdict(interval, threshold)
            out.append(Gate(what, verdict, verdict.outcome(self.inconclusive)))
        comparison = self.comparison(label) if self.compare_fail else None
        if comparison is not None:
            where = (row.arm, row.scoring, row.length)
            verdicts = [v for _, v in comparison.verdicts(self.compare_fail, where)]
            if not comparison.paired.get(where):
                verdicts = [_unpaired(a) for a in self.compare_fail]
            for verdict in verdicts:
                out.append(Gate("--niah-compare-fail", verdict, verdict.outcome(self.inconclusive)))
        return out

    def gated(self, length: int) -> bool:
        """Whether any gate applies at ``length``."""
        return (
            self.min_auc.at(length) is not None
            or self.min_ratio.at(length) is not None
            or bool(self.compare_fail)
        )
