"""How a run went, typed, and kept beside its results for the processes of a pytest run."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pytest_niah.embed.identity import ModelIdentity
from pytest_niah.embed.runner import EmbeddingStats
from pytest_niah.files import write_atomic


@dataclass
class RunReport:
    """How a run went: whether cached results answered, and what the model did.

    Attributes:
        reused: The results came from the results cache (no model was loaded).
        cached_results: That cache file.
        embedding: What the embedding phase did (the window probe's texts included).
        probe: What measuring the model's window embedded and read from the cache.
        notes: What pytest-niah decided for the user (presets applied, fallbacks).
        seconds: Where the time went: ``build`` (haystacks, tokenizing; on a worker thread,
            beside the model), ``encode`` (inside the model), ``measure`` (scores, tables,
            intervals) and ``total``.
        cache: The cache root the run used, or ``None`` when it used no cache.
        from_shards: The folder of part files the results were measured from, or ``None``.
        checked: What matched for reused results to be this run's (the model's part).
    """

    reused: bool = False
    cached_results: Path | None = None
    embedding: EmbeddingStats = field(default_factory=EmbeddingStats)
    probe: EmbeddingStats = field(default_factory=EmbeddingStats)
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    cache: Path | None = None
    from_shards: Path | None = None
    checked: str = ""

    def reuse_line(self) -> str | None:
        """One line for reused results: where from, and what was checked (else ``None``)."""
        if not self.reused:
            return None
        model = self.checked or "the model's identity"
        return (
            f"results reused from an identical earlier run ({self.cached_results}): checked "
            f"{model}, the options (transport options aside), the data and package versions"
        )

    def embedded_line(self) -> str:
        """What the run embedded and read from the cache, in one line: every run ends with it."""
        stats, where = self.embedding, f" (cache {self.cache})" if self.cache is not None else ""
        line = f"{stats.embedded:,} texts embedded, {stats.read:,} read from the cache{where}"
        if stats.dropped:
            line += f"; {stats.dropped} unusable cache rows embedded again"
        return line

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (paths as text, ``None`` kept)."""
        out = asdict(self)
        for name in ("cached_results", "cache", "from_shards"):
            value = getattr(self, name)
            out[name] = str(value) if value is not None else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunReport:
        """The report :meth:`to_dict` gave.

        Raises:
            TypeError: a field has the wrong kind of value.
            ValueError: a field has the wrong kind of value.
        """

        def path(name: str) -> Path | None:
            value = data.get(name)
            return Path(value) if value is not None else None

        known = {f.name for f in fields(EmbeddingStats)}
        stats = {k: v for k, v in (data.get("embedding") or {}).items() if k in known}
        probe = {k: v for k, v in (data.get("probe") or {}).items() if k in known}
        return cls(
            reused=bool(data.get("reused", False)),
            cached_results=path("cached_results"),
            embedding=EmbeddingStats(**stats),
            probe=EmbeddingStats(**probe),
            notes=[str(note) for note in data.get("notes") or []],
            seconds={str(k): float(v) for k, v in (data.get("seconds") or {}).items()},
            cache=path("cache"),
            from_shards=path("from_shards"),
            checked=str(data.get("checked") or ""),
        )

    def save(self, path: Path) -> Path:
        """Write the report to ``path``, whole or not at all."""
        return write_atomic(path, json.dumps(self.to_dict(), sort_keys=True))

    @classmethod
    def load(cls, path: Path) -> RunReport | None:
        """The report saved at ``path``; ``None`` when there is none or it is unreadable."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls.from_dict(data) if isinstance(data, dict) else None
        except (OSError, ValueError, TypeError, AttributeError):
            return None


def identity_checked(identity: ModelIdentity) -> str:
    """What a model's identity was checked by this run, in words (for :attr:`RunReport.checked`)."""
    source = identity.parts.get("source", {})
    kind = source.get("kind")
    if kind == "remote":
        return (
            "the server (what it reports about itself, and its answers this run: its window "
            "and the fixed texts, matching the fingerprint kept for it)"
        )
    if kind == "files":
        return f"the sha256 of the model's {len(source.get('files', {})):,} files"
    if kind == "hub":
        return f"the model's hub revision {str(source.get('revision', ''))[:12]}"
    return "the model's identity"
