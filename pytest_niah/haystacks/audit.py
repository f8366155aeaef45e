"""What the leak audit saw while drawing snippets for haystacks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AuditReport:
    """What the leak audit saw while drawing snippets."""

    snippets_used: int
    snippets_rejected: int
    sentences_too_long: int
    term_hits: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "snippets_used": self.snippets_used,
            "snippets_rejected": self.snippets_rejected,
            "sentences_too_long": self.sentences_too_long,
            "term_hits": dict(self.term_hits),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditReport:
        """Inverse of :meth:`to_dict`."""
        return cls(
            snippets_used=int(data["snippets_used"]),
            snippets_rejected=int(data["snippets_rejected"]),
            sentences_too_long=int(data["sentences_too_long"]),
            term_hits=tuple(sorted((str(k), int(v)) for k, v in data["term_hits"].items())),
        )
