"""Haystacks of exact token lengths, with one needle each, plus no-needle controls.

For each needle group and length one seeded *stream* of book sentences is drawn
(:mod:`pytest_niah.haystacks.snippet_streams`, where the leak audit runs); the
control of that group and length is the stream's first L tokens, and every needle haystack
is the stream's first L - n tokens with the needle (n tokens) inserted at a gap chosen by
:mod:`pytest_niah.haystacks.placement`. Needle haystacks and their control thus share their
filler, so a score difference is the needle's doing.

Everything a haystack depends on is keyed by (seed, group, length, ...) and by the *whole*
needle set (the leak audit bans every group's terms), never by which groups a run selects:
a group's haystacks are the same in a run of all groups and in a run of that group alone.
Every haystack is tokenized once, in one batch per group and length, and checked: exactly L
tokens, the needle at its recorded token offset.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pytest_niah.errors import HaystackError
from pytest_niah.haystacks.assembly import Assembler, BlockParts
from pytest_niah.haystacks.audit import AuditReport
from pytest_niah.haystacks.exact_cuts import ExactCuts
from pytest_niah.haystacks.fillers import Stream
from pytest_niah.haystacks.haystack import Block, draw_seed, rng_for
from pytest_niah.haystacks.snippet_streams import SnippetDrawer
from pytest_niah.haystacks.tokens import Tokenizer
from pytest_niah.inputs.corpus import Corpus
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet

# Tokens a stream draws beyond its length for the needle (a guess: only prefetching reads it).
_NEEDLE_ALLOWANCE = 40

T = TypeVar("T")


def _itself(block: Block) -> Block:
    return block


@dataclass
class HaystackBuilder:
    """Builds the haystacks of a run, one group and length at a time.

    Args:
        corpus: Books to draw snippets from.
        needle_set: The *whole* needle set: every group's terms are banned from snippets
            and names are drawn from its list, whichever groups a run selects.
        tokenizer: The model's tokenizer.
        seed: Seed of every random choice.
        cache_dir: Where sentence token counts persist between runs (``None``: nowhere).
        threads: Blocks built at once (the haystacks do not depend on it).
        splice: Compose needle haystacks in token space where the tokenizer allows it
            (:mod:`~pytest_niah.haystacks.splice`) instead of tokenizing each; for backends
            that read token ids (a backend that reads text gets haystacks checked as text).
    """

    corpus: Corpus
    needle_set: NeedleSet
    tokenizer: Tokenizer
    seed: int
    cache_dir: Path | None = None
    threads: int = field(default_factory=lambda: min(4, os.cpu_count() or 1))
    splice: bool = False

    def __post_init__(self) -> None:
        joins = self.splice and bool(getattr(self.tokenizer, "splits_at_spaces", False))
        # Such a tokenizer's fillers are cut from their sentences' ids, encoded once.
        self._draw = SnippetDrawer(
            self.corpus, self.needle_set, self.tokenizer, self.seed, self.cache_dir, tokens=joins
        )
        cuts = ExactCuts(self.tokenizer, self._draw.joined if joins else None)
        # Needles are spliced (every junction checked) on more tokenizers than fillers joined.
        splices = joins or bool(getattr(self.tokenizer, "splices_needles", False))
        self._assembler = Assembler(self.tokenizer, cuts, self.splice and splices)

    # -- public -------------------------------------------------------------------------------

    def audit(self) -> AuditReport:
        """What the leak audit saw so far."""
        return self._draw.audit()

    def check_corpus_size(self, longest: int) -> None:
        """Fail early when the corpus cannot fill the longest haystack without repeating itself."""
        # ~4 characters per token is a generous upper bound for English subword tokenizers.
        chars = sum(len(s) for book in self._draw.books for s in book)
        if chars < longest * 4 * 2:
            raise HaystackError(
                f"corpus {self.corpus.name!r} holds about {chars // 4:,} tokens of text, too "
                f"little for haystacks of {longest:,} tokens (it needs at least twice that)",
                "add books to the folder or lower the longest --niah-lengths value",
            )

    def blocks(
        self,
        selected: Sequence[NeedleGroup],
        lengths: Sequence[int],
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
        draws: Sequence[int | None] = (None,),
    ) -> Iterator[Block]:
        """Every block of a run: shortest length first, then draw, groups in needle-set order.

        Selected groups get needle haystacks and controls; the other groups of the needle
        set get controls only (every question's negatives are the controls of all groups).
        ``draws``: the seeds of ``--niah-seeds`` (``None``: one untagged draw, see
        :meth:`block`).
        """
        return self.each_block(
            _itself, selected, lengths, positions, kinds, orders, controls, draws
        )

    def each_block(
        self,
        then: Callable[[Block], T],
        selected: Sequence[NeedleGroup],
        lengths: Sequence[int],
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
        draws: Sequence[int | None] = (None,),
    ) -> Iterator[T]:
        """:meth:`blocks`, each passed through ``then`` on the thread that built it.

        Per-block work after building (a plan's id arrays and input keys) then runs on the
        building threads, in parallel, instead of after them on one.
        """
        self.check_corpus_size(max(lengths))
        chosen = {g.id for g in selected}
        jobs = itertools.product(lengths, draws, self.needle_set.groups)
        counted: dict[int, Future[None]] = {}  # each length's counting ahead, once started

        def build(job: tuple[int, int | None, NeedleGroup]) -> T:
            length, draw, group = job
            if length in counted:
                # Drawn before its counting ahead ends, a stream would count the same
                # sentences again in small calls (the haystacks are the same either way).
                counted[length].result()
            needles = group.id in chosen
            return then(
                self.block(
                    group, length, positions, kinds, orders, controls, needles=needles, draw=draw
                )
            )

        # Blocks are independent (each draws from its own seeded generators), so several
        # are built at once: one thread's Python (drawing, the leak audit) runs while
        # another's tokenizer call, which releases the GIL, runs on the other cores.
        # Results are yielded in order, a few ahead at most, so memory stays flat.
        pool = ThreadPoolExecutor(self.threads, thread_name_prefix="pytest-niah-build")
        ahead: deque[Future[T]] = deque()
        # Sentence counts of a length's streams are counted in one call before its blocks
        # (the next length's while this one's build): see SnippetDrawer.prefetch.
        self._prefetch(lengths[0], controls, draws)
        following = dict(itertools.pairwise(lengths))
        try:
            for job in jobs:
                after = following.pop(job[0], None)  # at a length's first block only
                if after is not None:
                    counted[after] = pool.submit(self._prefetch, after, controls, draws)
                ahead.append(pool.submit(build, job))
                if len(ahead) > self.threads:
                    yield ahead.popleft().result()
            while ahead:
                yield ahead.popleft().result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            self._draw.save_counts()

    def _prefetch(self, length: int, controls: int, draws: Sequence[int | None]) -> None:
        """Count the sentences the streams of one length will most likely draw, at once."""
        self._draw.prefetch(
            [
                (
                    group.id,
                    length,
                    control,
                    length + (_NEEDLE_ALLOWANCE if control == 0 else 0),
                    draw,
                )
                for draw in draws
                for group in self.needle_set.groups
                for control in range(controls)
            ]
        )

    def block(
        self,
        group: NeedleGroup,
        length: int,
        positions: int,
        kinds: Sequence[str],
        orders: Sequence[str],
        controls: int = 1,
        *,
        needles: bool = True,
        draw: int | None = None,
    ) -> Block:
        """The controls, and (with ``needles``) the needle haystacks, of one group at one length.

        ``draw``: a seed of ``--niah-seeds``; its haystacks come from that seed and carry it
        in their ids. ``None``: the builder's seed, ids without a seed.
        """
        names = [self._name(group.id, length, p, draw) for p in range(positions)]
        texts = {
            (kind, order, p): group.needle(kind, order, names[p])
            for kind in kinds
            for order in orders
            for p in range(positions)
        }
        needle_encodings = self.tokenizer.encode_batch(list(texts.values()))
        needles_of = dict(zip(texts, needle_encodings, strict=True))
        longest = max(len(e) for e in needle_encodings)
        # A group that is not selected only gives controls: its needles need not fit (they
        # still size the filler stream, so its control is the one a full run draws).
        if needles and longest >= length:
            raise HaystackError(
                f"needle group {group.id!r}: a needle of {longest} tokens does not fit a "
                f"haystack of {length} tokens",
                f"shorten the needle or drop length {length} from --niah-lengths",
            )
        parts = BlockParts(
            group=group,
            length=length,
            names=names,
            needle_texts=texts,
            needle_tokens=needles_of,
            streams=self._streams(group.id, length, longest, controls, draw),
            needles=needles,
            draw=draw,
        )
        # First from one tokenizer call per control; should a cut text not give exactly
        # ``length`` tokens, again with every filler tokenized and checked on its own.
        block = self._assembler.assemble(parts, exact=False)
        if block is None:
            block = self._assembler.assemble(parts, exact=True)
        assert block is not None, "a block assembled with exact fits is always complete"
        if not needles:
            return block
        # The needles' own tokens go with the block: planning them needs no tokenizer call
        # (a small one waits behind the building threads' large ones).
        encoded = dict(zip(texts.values(), needle_encodings, strict=True))
        return dataclasses.replace(block, needles=tuple(encoded.items()))

    def _streams(
        self, group_id: str, length: int, longest: int, controls: int, draw: int | None
    ) -> list[Stream]:
        """The needles' and first control's stream (with room for a needle), then each control's."""
        first = self._draw.stream(group_id, length, 0, length + longest, draw)
        return [first] + [
            self._draw.stream(group_id, length, i, length, draw) for i in range(1, controls)
        ]

    # -- pieces -------------------------------------------------------------------------------

    def _name(self, group_id: str, length: int, position: int, draw: int | None) -> str:
        # One name per (group, length, position), shared by orders and arms so they pair up.
        rng = rng_for(draw_seed(self.seed, draw), "name", group_id, length, position)
        return self.needle_set.names[int(rng.integers(len(self.needle_set.names)))]
