"""The run's batches: which inputs the model embeds together, the same in every kind of run.

A model's vector for an input can move in its last bits with the batch it came in (a matrix
product's blocking follows the batch's size), so the batches are one rule, decided by the
inputs alone: grouped by kind and exact token count in the order the plan lists them, a
batch full at :func:`batch_texts` inputs, the rest of each group a last, shorter batch. A
whole run, a resumed run and the shard jobs of a sharded run (each embedding whole batches
of it) therefore give every input the same vector, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from pytest_niah.haystacks.plan import ModelInput

MAX_BATCH = 512

Batch = list[ModelInput]


def batch_texts(budget: int, batch_size: int, tokens: int) -> int:
    """Texts of ``tokens`` tokens per batch: under the token budget (0: ``batch_size``)."""
    if budget <= 0:
        return batch_size
    return max(1, min(MAX_BATCH, budget // max(tokens, 1)))


class BatchFormer:
    """Forms the run's batches from inputs in plan order.

    Args:
        size: Texts per batch for inputs of a given token count.
    """

    def __init__(self, size: Callable[[int], int]) -> None:
        self._size = size
        self._groups: dict[tuple[str, int], Batch] = {}

    def add(self, item: ModelInput) -> Batch | None:
        """Take one input; return the batch it completes, if it completes one."""
        group = self._groups.setdefault((item.kind, item.tokens), [])
        group.append(item)
        if len(group) < self._size(item.tokens):
            return None
        self._groups[(item.kind, item.tokens)] = []
        return group

    def rest(self) -> list[Batch]:
        """The last, shorter batch of each group, in the order the groups began."""
        out = [group for group in self._groups.values() if group]
        self._groups = {}
        return out


def form_batches(items: Iterable[ModelInput], size: Callable[[int], int]) -> Iterator[Batch]:
    """Every batch of ``items``, in the order :class:`BatchFormer` completes them."""
    former = BatchFormer(size)
    for item in items:
        batch = former.add(item)
        if batch is not None:
            yield batch
    yield from former.rest()


class BatchShares:
    """Which of ``count`` jobs embeds each batch: the job with the fewest tokens so far.

    Batches are dealt in the order they are formed, ties to the lower job, so every job
    deals the same hands; a job's load exceeds another's by at most one batch.
    """

    def __init__(self, count: int) -> None:
        self.load = [0] * count

    def owner(self, batch: Batch) -> int:
        """The 0-based job that embeds ``batch``."""
        job = min(range(len(self.load)), key=lambda i: (self.load[i], i))
        self.load[job] += max(sum(item.tokens for item in batch), 1)
        return job
