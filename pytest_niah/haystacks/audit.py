"""What the leak audit saw while drawing snippets, and the one-hop check in the model's tokens."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_niah.errors import NeedleSetError
from pytest_niah.haystacks.tokens import Tokenizer
from pytest_niah.inputs.needles import NEEDLE_ORDERS, NeedleGroup
from pytest_niah.inputs.words import NAME_PLACEHOLDER, content_forms, read_as_model

__all__ = ["AuditReport", "check_onehop_tokens"]


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


def check_onehop_tokens(groups: Iterable[NeedleGroup], tokenizer: Tokenizer, source: str) -> None:
    """Refuse a one-hop needle that holds a question's word in the model's own tokens.

    The load-time rule compares words after dropping hidden characters; a tokenizer may
    drop or fold more than that. Here each needle word (a run between spaces, punctuation
    trimmed) is encoded alone and compared with each content word of the question: a
    needle word whose token ids begin with the question word's (``dogwalker`` is ``dog
    ##walker`` to MiniLM) makes the model read the question's word in the needle.

    Raises:
        NeedleSetError: Naming the group, the needle, the word and the fix.
    """
    for group in groups:
        question_words = list(content_forms(read_as_model(group.question)).values())
        for order in NEEDLE_ORDERS:
            template = group.template("onehop", order)
            needle_words = _needle_words(template)
            if not question_words or not needle_words:
                continue
            encoded = tokenizer.encode_batch([*question_words, *needle_words])
            pairs = zip(question_words, encoded, strict=False)
            asked = {tuple(e.ids): w for w, e in pairs if e.ids}
            for word, encoding in zip(needle_words, encoded[len(question_words) :], strict=True):
                ids = tuple(encoding.ids)
                shared = next((w for a, w in asked.items() if ids[: len(a)] == a), None)
                if shared is not None:
                    raise NeedleSetError.at(
                        source,
                        f"the one-hop needle's word {word!r} begins with the question's word "
                        f"{shared!r} to this model's tokenizer (its token ids begin with "
                        "that word's).",
                        "reword the needle without the question's words, hidden characters "
                        "or other spellings the tokenizer reads as them.",
                        group=group.id,
                        field=f"needles.onehop.{order}",
                    )


def _needle_words(template: str) -> list[str]:
    """The needle's words as split by white space, punctuation trimmed (hidden marks kept)."""
    words = []
    for chunk in template.replace(NAME_PLACEHOLDER, " ").split():
        word = _trim_punctuation(chunk)
        if word:
            words.append(word)
    return list(dict.fromkeys(words))


def _trim_punctuation(chunk: str) -> str:
    start, end = 0, len(chunk)
    while start < end and unicodedata.category(chunk[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(chunk[end - 1]).startswith("P"):
        end -= 1
    return chunk[start:end]
