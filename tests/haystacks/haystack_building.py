"""What the builder's tests share: a needle subset, a build of its haystacks, their checks."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from pytest_niah.haystacks.builder import HaystackBuilder
from pytest_niah.inputs.needles import builtin_needle_set

GROUPS = builtin_needle_set().select(["dietary-01", "location-02", "hobby-03"])
SLOW_OK = settings(
    max_examples=max(1, settings.default.max_examples // 4),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def build(
    corpus,
    tokenizer,
    *,
    needle_set=GROUPS,
    selected=None,
    lengths=(128,),
    positions=3,
    seed=1,
    kinds=("onehop",),
    controls=1,
    cache_dir=None,
    draws=(None,),
):
    builder = HaystackBuilder(corpus, needle_set, tokenizer, seed, cache_dir)
    groups = needle_set.groups if selected is None else selected
    orders = ("default", "inverted")
    blocks = list(builder.blocks(groups, lengths, positions, kinds, orders, controls, draws))
    return builder, [h for b in blocks for h in b.haystacks]


def check_haystack(h, tokenizer) -> None:
    encoding = tokenizer.encode_batch([h.text])[0]
    assert len(encoding.ids) == h.length, h.id
    if h.is_control:
        return
    assert h.text[h.needle_char : h.needle_char + len(h.needle)] == h.needle
    assert encoding.char_to_token(h.needle_char) == h.needle_offset
    last = encoding.char_to_token(h.needle_char + len(h.needle) - 1)
    assert last - h.needle_offset + 1 == h.needle_tokens
    assert h.needle_tokens == len(tokenizer.encode_batch([h.needle])[0].ids)
    # The needle sits in a gap: it starts the text or follows a space.
    assert h.needle_char == 0 or h.text[h.needle_char - 1] == " "
