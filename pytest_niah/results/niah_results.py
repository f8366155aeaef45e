"""The one typed, immutable results object: per-case rows, per-length tables, provenance.

Every test, the terminal summary and every file read this object; ``to_json`` /
``from_json`` round-trip it exactly (floats keep every bit).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_niah.config.niah import NiahConfig
from pytest_niah.errors import ConfigError, ResultsError
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.measure.records import (
    CaseResult,
    EffectiveLength,
    IntervalRow,
    MetricRow,
    NegativeScores,
    RetrievalRow,
)

SCHEMA_VERSION = 1
TRACKED_PACKAGES = (
    "pytest-niah",
    "pytest",
    "numpy",
    "scipy",
    "scikit-learn",
    "torch",
    "transformers",
    "sentence-transformers",
)


@dataclass(frozen=True)
class ModelInfo:
    """Which model produced the scores."""

    name: str
    fingerprint: str
    max_tokens: int | None


@dataclass(frozen=True)
class NiahResults:
    """Everything one experiment produced. Build with :func:`pytest_niah.engine.run_experiment`."""

    config: NiahConfig
    model: ModelInfo
    corpus: Mapping[str, Any]
    needle_set: Mapping[str, Any]
    versions: Mapping[str, str]
    audit: AuditReport
    cases: tuple[CaseResult, ...]
    negatives: tuple[NegativeScores, ...]
    tables: tuple[MetricRow, ...]
    intervals: tuple[IntervalRow, ...] = ()
    retrieval: tuple[RetrievalRow, ...] = ()
    effective_lengths: tuple[EffectiveLength, ...] = ()
    schema_version: int = SCHEMA_VERSION

    @property
    def seed(self) -> int:
        """The seed every random choice came from."""
        return self.config.seed

    @property
    def variants(self) -> tuple[tuple[str, str], ...]:
        """Every (arm, scoring) pair of the run, in config order."""
        return tuple((a, s) for a in self.config.arms for s in self.config.scoring)

    def rows(
        self, by: str = "length", arm: str | None = None, scoring: str | None = None
    ) -> tuple[MetricRow, ...]:
        """Metric rows of one split, optionally of one arm and scoring."""
        return tuple(
            r
            for r in self.tables
            if r.by == by and arm in (None, r.arm) and scoring in (None, r.scoring)
        )

    def row(self, arm: str, length: int, scoring: str = "whole") -> MetricRow:
        """The per-length row of one arm and scoring."""
        for r in self.tables:
            if r.by == "length" and (r.arm, r.scoring, r.length) == (arm, scoring, length):
                return r
        raise KeyError(f"no metrics for arm {arm!r}, scoring {scoring!r} at length {length}")

    def interval(
        self, arm: str, length: int, metric: str, scoring: str = "whole"
    ) -> IntervalRow | None:
        """The bootstrap interval of one per-length metric, if computed."""
        for r in self.intervals:
            if (r.arm, r.scoring, r.length, r.metric) == (arm, scoring, length, metric):
                return r
        return None

    def effective_length(self, arm: str, scoring: str = "whole") -> EffectiveLength | None:
        """The effective context length of one arm and scoring, if computed."""
        for r in self.effective_lengths:
            if (r.arm, r.scoring) == (arm, scoring):
                return r
        return None

    def case(self, case_id: str) -> CaseResult:
        """One case by id."""
        try:
            return self._case_index[case_id]
        except KeyError:
            raise KeyError(f"no case {case_id!r} in these results") from None

    @property
    def _case_index(self) -> dict[str, CaseResult]:
        index = self.__dict__.get("_index")
        if index is None:
            index = {c.id: c for c in self.cases}
            object.__setattr__(self, "_index", index)
        return index

    # -- serialization -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN becomes ``null``."""
        return {
            "schema_version": self.schema_version,
            "config": self.config.to_dict(),
            "seed": self.seed,
            "model": dataclasses.asdict(self.model),
            "corpus": dict(self.corpus),
            "needle_set": dict(self.needle_set),
            "versions": dict(self.versions),
            "audit": self.audit.to_dict(),
            "tables": [_encode(dataclasses.asdict(r)) for r in self.tables],
            "cases": [_encode(dataclasses.asdict(c)) for c in self.cases],
            "negatives": [_encode(dataclasses.asdict(n)) for n in self.negatives],
            "intervals": [_encode(dataclasses.asdict(r)) for r in self.intervals],
            "retrieval": [_encode(dataclasses.asdict(r)) for r in self.retrieval],
            "effective_lengths": [_encode(dataclasses.asdict(r)) for r in self.effective_lengths],
        }

    def to_json(self, *, indent: int | None = 1) -> str:
        """Deterministic JSON text (sorted keys)."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True, allow_nan=False)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write JSON atomically (a reader never sees half a file)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        os.replace(tmp, target)
        return target

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<dict>") -> NiahResults:
        """Rebuild from :meth:`to_dict` output."""
        if not isinstance(data, Mapping):
            raise ResultsError(
                f"{source}: holds JSON {type(data).__name__}, not a results object; write one "
                "with --niah-json or NiahResults.save"
            )
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ResultsError(
                f"{source}: results schema version {version!r} is not {SCHEMA_VERSION}; "
                "re-create the file with this pytest-niah version"
            )
        try:
            return cls(
                config=NiahConfig.from_dict(data["config"]),
                model=ModelInfo(**data["model"]),
                corpus=data["corpus"],
                needle_set=data["needle_set"],
                versions=data["versions"],
                audit=AuditReport.from_dict(data["audit"]),
                tables=tuple(MetricRow(**_decode(r, MetricRow)) for r in data["tables"]),
                cases=tuple(CaseResult(**_decode(c, CaseResult)) for c in data["cases"]),
                negatives=tuple(
                    NegativeScores(**_decode(n, NegativeScores)) for n in data["negatives"]
                ),
                intervals=tuple(
                    IntervalRow(**_decode(r, IntervalRow)) for r in data.get("intervals", [])
                ),
                retrieval=tuple(
                    RetrievalRow(**_decode(r, RetrievalRow)) for r in data.get("retrieval", [])
                ),
                effective_lengths=tuple(
                    EffectiveLength(**_decode(r, EffectiveLength))
                    for r in data.get("effective_lengths", [])
                ),
            )
        except (KeyError, TypeError, ConfigError) as exc:
            raise ResultsError(
                f"{source}: not a pytest-niah results file ({type(exc).__name__}: {exc}); "
                "write one with --niah-json or NiahResults.save"
            ) from None

    @classmethod
    def from_json(cls, text: str, *, source: str = "<json>") -> NiahResults:
        """Parse :meth:`to_json` output."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ResultsError(
                f"{source}: not valid JSON ({exc.msg}, line {exc.lineno}); the file is damaged, "
                "write it again"
            ) from None
        return cls.from_dict(data, source=source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> NiahResults:
        """Read a file written by :meth:`save`."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ResultsError(f"{path}: cannot read results ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise ResultsError(
                f"{path}: not a results file (its bytes are not UTF-8 text); the file is "
                "damaged or is something else, write it again with --niah-json or NiahResults.save"
            ) from None
        return cls.from_json(text, source=str(path))


def package_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of the packages that shape the numbers (no imports)."""
    from importlib import metadata

    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def _encode(row: dict[str, Any]) -> dict[str, Any]:
    return {key: _to_json_value(value) for key, value in row.items()}


def _to_json_value(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return [_to_json_value(v) for v in value]
    return value


def _decode(row: Mapping[str, Any], kind: type) -> dict[str, Any]:
    floats = {f.name for f in dataclasses.fields(kind) if f.type in ("float", float)}
    out = {}
    for key, value in row.items():
        if key in floats and value is None:
            value = math.nan
        elif isinstance(value, list):
            value = tuple(math.nan if v is None else v for v in value)
        out[key] = value
    return out
