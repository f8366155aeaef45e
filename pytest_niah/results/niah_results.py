"""The one typed, immutable results object: per-case rows, per-length tables, provenance.

Every test, the terminal summary and every file read this object. It is written and read
through the file format of :mod:`pytest_niah.results.results_schema` (strictly validated), and
``to_json`` / ``from_json`` round-trip it exactly (floats keep every bit; NaN is ``null``).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_niah.bounded_reads import MiB, ReadRefused, gunzip_bounded, read_bounded
from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.identity import LIBRARIES, installed_versions
from pytest_niah.errors import ConfigError, ResultsError
from pytest_niah.files import write_atomic
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.measure.records import (
    CaseResult,
    EffectiveLength,
    IntervalRow,
    MetricRow,
    NegativeScores,
    RetrievalRow,
)
from pytest_niah.results.results_schema import (
    READABLE_RESULTS_VERSIONS,
    RESULTS_SCHEMA_VERSION,
    ModelInfo,
    ResultsDocument,
)
from pytest_niah.results.results_validation import validate
from pytest_niah.results.speed_record import SpeedRecord

GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of every gzip file (a saved run is one)."""
# The most read of a results file or saved run (decompressed): far past any real grid's,
# short of what would exhaust a CI runner's memory.
MAX_RESULTS_BYTES = 256 * MiB

# The packages whose versions a run records: those that measure, and those that embed.
TRACKED_PACKAGES = ("pytest-niah", "pytest", "numpy", "scipy", "scikit-learn", *LIBRARIES)

__all__ = ["RESULTS_SCHEMA_VERSION", "ModelInfo", "NiahResults", "package_versions"]


@dataclass(frozen=True)
class NiahResults:
    """Everything one experiment produced. Build with :func:`pytest_niah.experiment.run_experiment`.

    Attributes:
        placement: Per length, how many needle groups had their needles between sentences or
            between words, and how many positions shared an offset.
        speed: How fast the model embedded each length (a measurement: not deterministic,
            never compared or gated); ``None`` where not recorded.
    """

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
    placement: Mapping[str, Any] = field(default_factory=dict)
    speed: SpeedRecord | None = None
    schema_version: int = RESULTS_SCHEMA_VERSION

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

    def without_speed(self) -> NiahResults:
        """The same results without the speed record: what is deterministic, to compare."""
        return dataclasses.replace(self, speed=None)

    def case(self, case_id: str) -> CaseResult:
        """One case by id."""
        try:
            return self._case_index[case_id]
        except KeyError:
            raise KeyError(f"no case {case_id!r} in these results") from None

    @property
    def _case_index(self) -> dict[str, CaseResult]:
        index: dict[str, CaseResult] | None = self.__dict__.get("_index")
        if index is None:
            index = {c.id: c for c in self.cases}
            object.__setattr__(self, "_index", index)
        return index

    # -- serialization ------------------------------------------------------------------------

    def document(self) -> ResultsDocument:
        """The results in their file format."""
        return ResultsDocument.model_construct(
            schema_version=self.schema_version,
            config=self.config.to_dict(),
            seed=self.seed,
            model=self.model,
            corpus=dict(self.corpus),
            needle_set=dict(self.needle_set),
            versions=dict(self.versions),
            audit=self.audit.to_dict(),
            placement=dict(self.placement),
            tables=list(self.tables),
            cases=list(self.cases),
            negatives=list(self.negatives),
            intervals=list(self.intervals),
            retrieval=list(self.retrieval),
            effective_lengths=list(self.effective_lengths),
            speed=self.speed,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN becomes ``null``."""
        data: dict[str, Any] = self.document().model_dump(mode="json")
        return data

    def to_json(self, *, indent: int | None = 1) -> str:
        """Deterministic JSON text (sorted keys)."""
        return json.dumps(self.to_dict(), indent=indent, sort_keys=True, allow_nan=False)

    def save(self, path: str | os.PathLike[str], *, inside: Path | None = None) -> Path:
        """Write the JSON file whole or not at all (see :func:`pytest_niah.files.write_atomic`).

        ``inside``: the cache folder it goes in, where no symbolic link is written through.
        """
        return write_atomic(path, self.to_json(), inside=inside)

    @classmethod
    def from_document(cls, document: ResultsDocument, *, source: str = "<dict>") -> NiahResults:
        """Build from a validated document."""
        if document.schema_version not in READABLE_RESULTS_VERSIONS:
            raise ResultsError(
                f"{source}: results schema version {document.schema_version!r} is not "
                f"{RESULTS_SCHEMA_VERSION}",
                "re-create the file with this pytest-niah version",
            )
        try:
            config = NiahConfig.from_dict(document.config)
            audit = AuditReport.from_dict(document.audit)
        except (
            ConfigError,
            LookupError,
            TypeError,
            ValueError,
            AttributeError,
            ArithmeticError,
        ) as exc:
            # A hand-edited config or audit of any JSON shape: a file problem, never a crash.
            raise ResultsError(
                f"{source}: the results' config or audit is not valid ({exc})",
                "write the file again with --niah-json or NiahResults.save",
            ) from None
        return cls(
            config=config,
            model=document.model,
            corpus=document.corpus,
            needle_set=document.needle_set,
            versions=document.versions,
            audit=audit,
            cases=tuple(document.cases),
            negatives=tuple(document.negatives),
            tables=tuple(document.tables),
            intervals=tuple(document.intervals),
            retrieval=tuple(document.retrieval),
            effective_lengths=tuple(document.effective_lengths),
            placement=document.placement,
            speed=document.speed,
            # An older file is this version without what it lacks (a speed record).
            schema_version=RESULTS_SCHEMA_VERSION,
        )

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> NiahResults:
        """Rebuild from :meth:`to_dict` output (validated)."""
        try:
            text = json.dumps(data, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ResultsError(
                f"{source}: not JSON data ({exc})", "pass what NiahResults.to_dict returns"
            ) from None
        return cls.from_json(text, source=source)

    @classmethod
    def from_json(cls, text: str, *, source: str = "<json>") -> NiahResults:
        """Parse and validate :meth:`to_json` output."""
        return cls.from_document(validate(ResultsDocument, text, source), source=source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> NiahResults:
        """Read a file written by :meth:`save`."""
        return cls.from_json(read_text(path, "results file"), source=str(path))


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """A file's UTF-8 text, a leading byte order mark dropped (as every JSON file's).

    A gzip-compressed file (a saved run, see :mod:`pytest_niah.results.run_file`) is
    decompressed first, whatever its name: it is known by its first bytes.

    Raises:
        ResultsError: the file cannot be read, is a damaged gzip file or is not UTF-8; the
            message names it.
    """
    try:
        data = read_bounded(path, MAX_RESULTS_BYTES, what)
        if data.startswith(GZIP_MAGIC):
            data = gunzip_bounded(data, MAX_RESULTS_BYTES, what)
        return data.decode("utf-8-sig")
    except ReadRefused as exc:
        raise ResultsError(f"{path}: {exc.problem}", exc.hint) from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ResultsError(
            f"{path}: not a {what} (a damaged gzip file: {exc})",
            "the file was cut short or changed; write it again",
        ) from None
    except UnicodeDecodeError:
        raise ResultsError(
            f"{path}: not a {what} (its bytes are not UTF-8 text)",
            "the file is damaged or is something else; write it again",
        ) from None
    except OSError as exc:
        raise ResultsError(
            f"{path}: cannot read the {what} ({exc.strerror or exc})",
            "check the path and its permissions",
        ) from None


def package_versions(names: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of the packages that shape the numbers (read, not imported)."""
    return installed_versions(names)
