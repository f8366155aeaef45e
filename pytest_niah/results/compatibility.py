"""Which runs may be compared: the fields two runs must share, and a refusal naming both values.

Two runs are compared only when they measured the same thing: the same seed, corpus, needle
and expansion sets, grid (lengths, positions, controls, orders, arms, scorings, chunk size)
and haystack tokenizer (:data:`FIELDS`). Any difference is refused, listing each differing
field with both values, unless the user allows it by name (``--niah-compare-allow``), except
a tokenizer's (:data:`NEVER_REFUSED`): it is what an upgrade across model families brings,
and each run counts its lengths in its own model's tokens, so it is compared and said.
Allowing a field of the grid compares only the cells both runs measured; the refusal's fix
says so, and a length where those are a minority of this run's cells cannot pass its gate
(:mod:`pytest_niah.measure.verdicts`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.vocabulary import COMPARED, WHOLE_HAYSTACK
from pytest_niah.errors import CompareError
from pytest_niah.results.niah_results import NiahResults


class NotKnown(Enum):
    """A value a run's plan cannot know before its model loads (the field is not checked)."""

    YET = "not known before the model loads"


NOT_KNOWN = NotKnown.YET


@dataclass(frozen=True)
class Measured:
    """What a run measures, as far as comparing it goes: its config, data and tokenizer.

    Read off finished results (:meth:`of`), or off a run's plan before anything is built or
    embedded (the plugin's ``baseline_check.planned``), so that the same rules refuse a
    baseline before the run.

    Attributes:
        tokenizer: The haystack tokenizer's identity, or :data:`NOT_KNOWN`.
        window: The tokens the model reads of a document (``None``: all), or
            :data:`NOT_KNOWN`.
    """

    config: NiahConfig
    corpus: Any
    needles: Any
    expansions: Any
    tokenizer: Any = NOT_KNOWN
    window: Any = NOT_KNOWN

    @classmethod
    def of(cls, results: NiahResults) -> Measured:
        """What finished results measured."""
        return cls(
            results.config,
            results.corpus.get("fingerprint"),
            results.needle_set.get("fingerprint"),
            results.needle_set.get("expansions"),
            results.model.tokenizer,
            results.model.max_tokens,
        )


def _effective_chunk(m: Measured) -> Any:
    if all(s in WHOLE_HAYSTACK for s in m.config.scoring):
        return None
    return m.config.chunk_tokens or m.window


# How to read each field of COMPARED (what --niah-compare-allow takes) off a run.
_VALUE_OF: dict[str, Callable[[Measured], Any]] = {
    # The haystack draws: --niah-seeds, else the one seed.
    "seed": lambda m: list(m.config.seeds) if m.config.seeds else m.config.seed,
    "corpus": lambda m: m.corpus,
    "needles": lambda m: m.needles,
    "expansions": lambda m: m.expansions,
    "lengths": lambda m: list(m.config.lengths),
    "positions": lambda m: m.config.positions,
    "controls": lambda m: m.config.controls,
    "orders": lambda m: list(m.config.orders),
    "arms": lambda m: list(m.config.arms),
    "scoring": lambda m: list(m.config.scoring),
    "chunk-tokens": _effective_chunk,
    "tokenizer": lambda m: m.tokenizer,
}


def _measured(run: NiahResults | Measured) -> Measured:
    return run if isinstance(run, Measured) else Measured.of(run)


def _reader(get: Callable[[Measured], Any]) -> Callable[[NiahResults | Measured], Any]:
    return lambda run: get(_measured(run))


# What two compared runs must share, by the name --niah-compare-allow takes, in COMPARED's
# order: a name without its reader is a KeyError on import, a reader without its name this.
# Each reads finished results or a run's plan alike.
FIELDS: dict[str, Callable[[NiahResults | Measured], Any]] = {
    name: _reader(_VALUE_OF[name]) for name in COMPARED
}
if FIELDS.keys() != _VALUE_OF.keys():
    raise RuntimeError(f"compared but not in COMPARED: {sorted(_VALUE_OF.keys() - FIELDS.keys())}")
# Fields of the grid: allowing one compares only the cells both runs measured, and says so.
GRID_FIELDS = frozenset({"lengths", "positions", "controls", "orders", "arms", "scoring"})
GRID_CAVEAT = (
    " (only the cells both runs measured are compared, and a length where fewer than half of "
    "this run's cells pair cannot pass its gate)"
)


# Fields two compared runs may differ in without being allowed by name, and why that is
# sound: an upgrade from one model family to another (jina-embeddings-v3 to v4) changes the
# tokenizer, and each run's lengths are counted in its own model's tokens.
NEVER_REFUSED: dict[str, str] = {
    "tokenizer": "the tokenizers differ: each run's lengths are in its own model's tokens",
}


@dataclass(frozen=True)
class Difference:
    """One field two runs disagree on."""

    field: str
    current: Any
    baseline: Any

    def describe(self) -> str:
        """``seed: 42 here, 7 in the baseline`` (and why it is compared, if never refused)."""
        said = f"{self.field}: {_short(self.current)} here, {_short(self.baseline)} in the baseline"
        why = NEVER_REFUSED.get(self.field)
        return f"{said} ({why})" if why else said


def _short(value: Any) -> str:
    text = str(value)
    return text[:12] if isinstance(value, str) and len(text) == 64 else text


def differences(
    current: NiahResults | Measured, baseline: NiahResults | Measured
) -> list[Difference]:
    """Every field of :data:`FIELDS` the two runs disagree on (one not known yet is skipped)."""
    a, b = _measured(current), _measured(baseline)
    found = []
    for name, get in FIELDS.items():
        mine, theirs = get(a), get(b)
        if NOT_KNOWN not in (mine, theirs) and mine != theirs:
            found.append(Difference(name, mine, theirs))
    return found


def check_comparable(
    current: NiahResults | Measured,
    baseline: NiahResults | Measured,
    *,
    allow: Iterable[str] = (),
    source: str = "",
    flags: str = "--niah-",
) -> list[Difference]:
    """Refuse to compare runs that measured different things; return the allowed differences.

    ``current`` may be a run's plan (:class:`Measured`): the plugin refuses a baseline
    with it before anything is built or embedded, and again with the finished results.
    ``flags`` is how the caller's options start (``--`` for ``pytest-niah report``), so
    the message names the options of the command that was run.

    Raises:
        CompareError: a field differs that ``allow`` does not name; the message lists each
            differing field with both values.
    """
    allowed = set(allow) | NEVER_REFUSED.keys()
    found = differences(current, baseline)
    refused = [d for d in found if d.field not in allowed]
    if refused:
        where = f" ({source})" if source else ""
        names = [d.field for d in refused]
        caveat = GRID_CAVEAT if GRID_FIELDS.intersection(names) else ""
        raise CompareError(
            f"{flags}compare: the baseline{where} measured something else: "
            + "; ".join(d.describe() for d in refused),
            f"compare with a run of the same {', '.join(names)}, or accept the "
            f"difference{caveat} with {flags}compare-allow={','.join(names)}",
        )
    return [d for d in found if d.field in allowed]


# -- haystack draws: which draw of one run is which of the other ---------------------------------

_DRAW_SUFFIX = re.compile(r"-s(\d+)$")


def draws(results: NiahResults) -> tuple[int, ...]:
    """The seeds a run's haystacks were drawn from: ``--niah-seeds``, else the one seed."""
    return tuple(results.config.seeds) or (results.config.seed,)


def pairs_by_draw(current: NiahResults, baseline: NiahResults) -> bool:
    """Pair cells by the seed their haystacks came from (one run, at least, pools draws).

    Draw N of ``--niah-seeds`` is the haystacks ``--niah-seed=N`` draws, so it pairs with
    that run. Two single-draw runs pair cell by cell whatever their seeds (the seed
    difference must be allowed, see :func:`check_comparable`).
    """
    return bool(current.config.seeds or baseline.config.seeds)


def draw_of(results: NiahResults, tagged: int | None) -> int | None:
    """The seed a case's or control's haystack came from (a case's ``seed`` field)."""
    return results.config.seed if tagged is None else tagged


def control_key(results: NiahResults, control_id: str) -> tuple[str, int]:
    """A control's id without its draw tag, and the seed it was drawn from."""
    match = _DRAW_SUFFIX.search(control_id)
    if match is None:
        return control_id, results.config.seed
    return control_id[: match.start()], int(match[1])


def no_common_draw(current: NiahResults, baseline: NiahResults) -> str:
    """Why two runs share no cell because of their draws, or ``""`` when they share one."""
    mine, theirs = draws(current), draws(baseline)
    if not pairs_by_draw(current, baseline) or set(mine) & set(theirs):
        return ""

    def said(results: NiahResults, seeds: tuple[int, ...]) -> str:
        if results.config.seeds:
            return f"--niah-seeds={','.join(map(str, seeds))}"
        return f"--niah-seed={seeds[0]} (one draw)"

    return (
        f"no haystack draw in common: this run drew {said(current, mine)}, the baseline "
        f"{said(baseline, theirs)}; draw N of --niah-seeds pairs only with draw N (or a "
        "--niah-seed=N run)"
    )
