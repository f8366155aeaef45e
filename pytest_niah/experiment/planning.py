"""Planning a run: its haystacks block by block, and the model inputs of each.

Blocks are built, and their model inputs prepared, on worker threads; one more merges them
into the plan in order while the caller embeds what is ready
(:func:`~pytest_niah.experiment.background_planning.plan_in_background`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.vocabulary import MAXSIM
from pytest_niah.embed.protocol import Embedder
from pytest_niah.embed.window_probe import WindowMeasurement
from pytest_niah.experiment.run_inputs import Inputs, needle_kind, query_text
from pytest_niah.haystacks.audit import check_onehop_tokens
from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.haystacks.haystack import Block
from pytest_niah.haystacks.plan import DOCUMENT, QUERY, ModelInput, Plan, PreparedBlock

DEFAULT_CHUNK_TOKENS = 512  # for models without a window (the lexical baseline, static models)


@dataclass
class Planning:
    """A run's plan before any embedding: the builder's blocks still to come.

    Attributes:
        plan: The plan (filled as blocks are planned).
        builder: The haystack builder.
        questions: (arm, group id) -> the question text embedded for it.
        queries: The questions' model inputs.
        blocks: The blocks, not built yet (a generator), each with its model inputs
            prepared on the thread that built it.
        window: Document tokens the model reads (the measured window where it is shorter).
        tokenizer: The haystack tokenizer.
        measured: What the window probe found (``None``: it did not run).
    """

    plan: Plan
    builder: HaystackBuilder
    questions: dict[tuple[str, str], str]
    queries: list[ModelInput]
    blocks: Iterator[PreparedBlock]
    window: int | None
    tokenizer: Any
    measured: WindowMeasurement | None = None


def haystack_builder(
    config: NiahConfig, embedder: Embedder, inputs: Inputs, cache_dir: Path | None
) -> HaystackBuilder:
    """The builder of a model's haystacks (the export builds them again with it)."""
    # Haystacks in token space for a backend that reads ids (text is still derived and kept).
    splice = not embedder.reads_text and MAXSIM not in config.scoring
    return HaystackBuilder(
        inputs.corpus, inputs.needle_set, embedder.tokenizer, config.seed, cache_dir, splice=splice
    )


def needle_kinds(config: NiahConfig) -> tuple[str, ...]:
    """The needle kinds a run's arms read, in order."""
    return tuple(dict.fromkeys(needle_kind(arm) for arm in config.arms))


def start_planning(
    config: NiahConfig,
    embedder: Embedder,
    inputs: Inputs,
    cache_dir: Path | None,
    measured: WindowMeasurement | None = None,
) -> Planning:
    """Everything needed to build a run's haystacks and plan their inputs.

    It reads the model's tokenizer and window: for a sentence-transformers model that loads
    the model itself. Inputs are cut to the window ``measured`` found where it falls short
    of the declared one, so a needle past it is unread, as past a declared window.
    """
    tokenizer = embedder.tokenizer
    windows = embedder.windows
    window = windows.document if measured is None else measured.effective
    chunk_tokens = config.chunk_tokens or window or DEFAULT_CHUNK_TOKENS
    plan = Plan(config.scoring, window, chunk_tokens, keep_text=embedder.reads_text)
    builder = haystack_builder(config, embedder, inputs, cache_dir)
    groups = inputs.selected.groups
    questions = {
        (arm, g.id): query_text(g, arm, inputs.expansions) for arm in config.arms for g in groups
    }
    texts = list(dict.fromkeys(questions.values()))
    query_window = windows.query
    if window is not None and window != windows.document:
        # The measured window: questions are cut as much shorter as documents are.
        if windows.query is None or windows.document is None:
            query_window = min(windows.query or window, window)
        else:
            query_window = max(1, windows.query - (windows.document - window))
    queries = plan.add_texts(QUERY, texts, tokenizer.encode_batch(texts), query_window)
    kinds = needle_kinds(config)
    if "onehop" in kinds:
        check_onehop_tokens(groups, tokenizer, inputs.needle_set.source)
    blocks = builder.each_block(
        plan.prepare,
        groups,
        config.lengths,
        config.positions,
        kinds,
        config.orders,
        config.controls,
        config.draws,
    )
    return Planning(plan, builder, questions, queries, blocks, window, tokenizer, measured)


def block_inputs(planning: Planning, block: Block | PreparedBlock) -> list[ModelInput]:
    """Plan one block: its haystacks' pieces and needles alone; return the new inputs."""
    plan = planning.plan
    fresh = plan.add_block(block)
    built = block.block if isinstance(block, PreparedBlock) else block
    needles = list(dict.fromkeys(h.needle for h in built.haystacks if h.needle))
    needles = [n for n in needles if n not in plan.needles]
    if needles:
        known = dict(built.needles)  # tokenized by the builder already
        missing = [n for n in needles if n not in known]
        if missing:
            known |= zip(missing, planning.tokenizer.encode_batch(missing), strict=True)
        encodings = [known[n] for n in needles]
        fresh += plan.add_texts(DOCUMENT, needles, encodings, planning.window)
    return fresh
