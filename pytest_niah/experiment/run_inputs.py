"""What a run reads: the needle set, its selected groups, the books and expansion terms.

And what each arm makes of them: the needle it inserts (:func:`needle_kind`) and the text
embedded as its question (:func:`query_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_niah.config.niah import NiahConfig
from pytest_niah.inputs.corpus import Corpus, load_corpus
from pytest_niah.inputs.expansions import ExpansionSet, arm_size, load_expansions
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, load_needle_set


def needle_kind(arm: str) -> str:
    """Which needle an arm inserts: literal needles for ``literal``, one-hop otherwise."""
    return "literal" if arm == "literal" else "onehop"


def query_text(group: NeedleGroup, arm: str, expansions: ExpansionSet | None = None) -> str:
    """The text embedded as the query of ``group`` in ``arm`` (expanded for ``expandN``)."""
    size = arm_size(arm)
    if size is None:
        return group.question
    if expansions is None:
        raise ValueError(f"arm {arm!r} needs an expansion set")
    return expansions.expand(group.question, group.id, size)


@dataclass(frozen=True)
class Inputs:
    """What an experiment reads: the whole needle set, the selected groups, books, terms."""

    needle_set: NeedleSet
    selected: NeedleSet
    corpus: Corpus
    expansions: ExpansionSet | None


def load_inputs(config: NiahConfig, *, cache_dir: Path | None = None) -> Inputs:
    """The needle set, its selected groups, the corpus and expansion terms of ``config``."""
    needle_set = load_needle_set(config.needles)
    selected = needle_set.select(config.groups or None)
    expansions = (
        load_expansions(config.expansions)
        if any(arm_size(arm) is not None for arm in config.arms)
        else None
    )
    corpus = load_corpus(config.corpus, cache_dir=cache_dir / "corpus" if cache_dir else None)
    return Inputs(needle_set, selected, corpus, expansions)
