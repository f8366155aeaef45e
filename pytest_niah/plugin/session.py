"""The plugin's per-run state, kept in ``config.stash``: what to run, and the results once run.

Results are computed at most once per machine: the first process to ask takes a file
lock in a folder every xdist worker shares, runs the experiment and writes the results
file; every other process reads that file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
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
    from pytest_niah.embed.embedders import Embedder
    from pytest_niah.measure.records import MetricRow
    from pytest_niah.results.compare import Comparison
    from pytest_niah.results.niah_results import NiahResults


class NiahRunError(RuntimeError):
    """The experiment of one model could not run; the message says why and how to fix it."""


def _known_errors() -> tuple[type[Exception], ...]:
    """Errors whose message already names the input and the fix: shown without traceback."""
    from pytest_niah.errors import NiahError

    return (NiahError,)


@dataclass
class NiahSession:
    """What the run asked for, and a lazily filled store of embedders and results.

    Attributes:
        configs: One config per model label, in command-line order.
        min_auc: AUC gate.
        min_ratio: Comparative-ratio gate.
        gate_on: ``point`` gates the metric itself, ``lower`` its 95% interval's lower end.
        strict: A missed needle fails instead of xfailing.
        json_path: Where to write results at the end, or empty.
        save_name: Save each model's results under this run name at the end, or empty.
        compare_fail: Regression thresholds versus the baseline (``--niah-compare-fail``).
        store_dir: Folder of saved runs.
        report_dir: Where to write the report at the end, or empty.
        snapshot: Collect the snapshot test of each model's metric table.
        snapshot_digits: Digits floats keep in snapshots.
        snapshot_dir: Folder of the snapshots, one sub-folder per model.
        cache_dir: Folder of the embedding cache; empty uses the user cache folder.
        use_cache: Read and write the embedding cache.
        shared_dir: Folder shared by all processes of this run (set by the plugin).
    """

    configs: dict[str, NiahConfig]
    min_auc: Thresholds = field(default_factory=lambda: default("min_auc"))
    min_ratio: Thresholds = field(default_factory=lambda: default("min_ratio"))
    gate_on: str = default("gate_on")
    strict: bool = default("strict")
    json_path: str = default("json")
    cache_dir: str = default("cache_dir")
    use_cache: bool = not default("no_cache")
    show_progress: bool = False
    save_name: str = default("save")
    compare_fail: tuple[Allowance, ...] = default("compare_fail")
    store_dir: Path = field(default_factory=lambda: paths.store_dir("."))
    report_dir: str = default("report")
    snapshot: bool = default("snapshot")
    snapshot_digits: int = default("snapshot_digits")
    snapshot_dir: Path = field(default_factory=lambda: paths.snapshot_dir("."))
    shared_dir: Path | None = None
    _failures: dict[str, str] = field(default_factory=dict, repr=False)
    _baseline_paths: dict[str, Path] = field(default_factory=dict, repr=False)
    _baselines: dict[str, NiahResults] = field(default_factory=dict, repr=False)
    _comparisons: dict[str, Comparison] = field(default_factory=dict, repr=False)
    _needle_sets: dict[str, NeedleSet] = field(default_factory=dict, repr=False)
    _embedders: dict[str, Embedder] = field(default_factory=dict, repr=False)
    _results: dict[str, NiahResults] = field(default_factory=dict, repr=False)

    @classmethod
    def create(cls, models: list[ModelSpec], base: NiahConfig, **settings: object) -> NiahSession:
        """One config per model; duplicate labels are an error."""
        configs: dict[str, NiahConfig] = {}
        for spec in models:
            if spec.label in configs:
                raise ConfigError(
                    f"--niah-model: two models share the label {spec.label!r}",
                    "name them apart with LABEL=NAME_OR_PATH",
                )
            configs[spec.label] = base.replace(model=spec.name)
        return cls(configs=configs, **settings)  # type: ignore[arg-type]

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
        """The model of one label, loaded once per process, behind the embedding cache."""
        if label not in self._embedders:
            from pytest_niah.embed.embedders import load_embedder

            embedder = load_embedder(self.configs[label], show_progress=self.show_progress)
            if self.use_cache:
                from pytest_niah.config.paths import cache_root
                from pytest_niah.embed.cache import CACHE_FILE, CachingEmbedder, EmbeddingCache

                path = cache_root(self.cache_dir) / CACHE_FILE
                embedder = CachingEmbedder(embedder, EmbeddingCache(path))
            self._embedders[label] = embedder
        return self._embedders[label]

    def close(self) -> None:
        """Release models (multi-process pools) and cache connections."""
        for embedder in self._embedders.values():
            for part in (
                embedder,
                getattr(embedder, "inner", None),
                getattr(embedder, "cache", None),
            ):
                close = getattr(part, "close", None)
                if callable(close):
                    close()
        self._embedders.clear()

    def results_path(self, label: str) -> Path:
        """The shared results file of one model's config."""
        if self.shared_dir is None:
            raise RuntimeError("pytest-niah: the shared folder is not set up yet")
        return self.shared_dir / f"niah-{label}-{self.configs[label].fingerprint()}.json"

    def results(self, label: str) -> NiahResults:
        """Compute once per machine (under a file lock), then read everywhere.

        Raises:
            NiahRunError: the experiment could not run; later calls raise the same message
                at once instead of trying again.
        """
        if label in self._results:
            return self._results[label]
        if label in self._failures:
            raise NiahRunError(self._failures[label])
        try:
            return self._compute(label)
        except Exception as exc:
            if not isinstance(exc, _known_errors()):
                raise
            self._failures[label] = f"pytest-niah could not run {label!r}: {exc}"
            raise NiahRunError(self._failures[label]) from exc

    def _compute(self, label: str) -> NiahResults:
        from filelock import FileLock

        from pytest_niah.results.niah_results import NiahResults

        path = self.results_path(label)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock"):
            if path.exists():
                results = NiahResults.load(path)
            else:
                from pytest_niah.experiment import run_experiment

                embedder = self.embedder(label)
                cache = getattr(embedder, "cache", None)
                results_cache = Path(cache.path).parent / "results" if cache is not None else None
                reused: list[Path] = []
                results = run_experiment(
                    self.configs[label],
                    embedder=embedder,
                    results_cache=results_cache,
                    on_reuse=reused.append,
                )
                results.save(path)
                self._write_embedding_stats(label, embedder, reused=bool(reused))
        self._results[label] = results
        return results

    def _write_embedding_stats(self, label: str, embedder: Embedder, *, reused: bool) -> None:
        """How many texts the model embedded versus read from the cache (for the summary)."""
        cache = getattr(embedder, "cache", None)
        if cache is None:
            return
        stats = {
            "embedded": getattr(embedder, "embedded", 0),
            "cache": str(cache.path),
            "reused": reused,
        }
        stats |= cache.stats()
        self.results_path(label).with_suffix(".embedding.json").write_text(json.dumps(stats))

    def embedding_stats(self, label: str) -> dict[str, Any] | None:
        """What :meth:`_write_embedding_stats` recorded in this run, if anything."""
        if self.shared_dir is None:
            return None
        path = self.results_path(label).with_suffix(".embedding.json")
        return json.loads(path.read_text()) if path.exists() else None

    def stored_results(self, label: str) -> NiahResults | None:
        """Results if some process of this run computed them, without computing."""
        if label in self._results:
            return self._results[label]
        if self.shared_dir is not None and self.results_path(label).exists():
            from pytest_niah.results.niah_results import NiahResults

            self._results[label] = NiahResults.load(self.results_path(label))
            return self._results[label]
        return None

    def resolve_baselines(self, ref: str) -> None:
        """Find the run ``--niah-compare`` names for every model (fails early if missing)."""
        from pytest_niah.results.storage import resolve_run

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
        """This run of one model against its baseline, paired on identical cells."""
        baseline = self.baseline(label)
        if baseline is None:
            return None
        if label not in self._comparisons:
            results = self.stored_results(label)
            if results is None:
                return None
            from pytest_niah.results.compare import compare_results

            self._comparisons[label] = compare_results(
                results,
                baseline,
                n_resamples=self.configs[label].bootstrap or 1000,
                seed=self.configs[label].seed,
            )
        return self._comparisons[label]

    def regressions(self, label: str, row: MetricRow) -> list[str]:
        """``--niah-compare-fail`` violations at one row's arm, scoring and length."""
        comparison = self.comparison(label) if self.compare_fail else None
        if comparison is None:
            return []
        from dataclasses import replace

        here = tuple(
            d
            for d in comparison.deltas
            if (d.arm, d.scoring, d.length) == (row.arm, row.scoring, row.length)
        )
        return replace(comparison, deltas=here).regressions(self.compare_fail)

    def gate_failures(self, row: MetricRow, results: NiahResults | None = None) -> list[str]:
        """What a per-length row falls short of, in words and numbers.

        With ``gate_on == "lower"`` the lower end of the metric's bootstrap interval (from
        ``results``) is gated instead of the point value.
        """
        failures = []
        for label, metric, thresholds in (
            ("AUC", "auc", self.min_auc),
            ("comparative ratio", "comparative_ratio", self.min_ratio),
        ):
            threshold = thresholds.at(row.length)
            if threshold is None:
                continue
            value = getattr(row, metric)
            if self.gate_on == "lower" and results is not None:
                interval = results.interval(row.arm, row.length, metric, row.scoring)
                if interval is not None:
                    value, label = interval.low, f"{label} lower 95% bound"
            if not value >= threshold:  # NaN fails too
                failures.append(f"{label} {value:.3f} < {threshold:g}")
        return failures

    def gated(self, length: int) -> bool:
        """Whether any threshold applies at ``length``."""
        return (
            self.min_auc.at(length) is not None
            or self.min_ratio.at(length) is not None
            or bool(self.compare_fail)
        )
