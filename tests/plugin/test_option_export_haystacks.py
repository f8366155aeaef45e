"""--niah-export-haystacks: every haystack a model embeds, its ids the tokenizer's own."""

from __future__ import annotations

import json

from tokenizers import Tokenizer

from pytest_niah.haystacks.tokens import WordTokenizer


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _check(line, encode) -> None:
    ids = encode(line["text"])
    assert line["ids"] == ids, line["id"]
    assert len(ids) == line["length"], line["id"]
    if line["needle_span"] is not None:
        start, end = line["needle_span"]
        assert 0 <= start < end <= line["length"], line["id"]


def test_every_haystack_is_written_with_the_ids_of_its_text(niah):
    result = niah.run("--niah-export-haystacks=out/haystacks.jsonl")
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates, xfailed=niah.n_cases // 2)
    lines = _lines(niah.pytester.path / "out" / "haystacks.jsonl")
    needles = [line for line in lines if line["needle_span"] is not None]
    # Each case's haystack (the arms share theirs: one per group, kind, order, length,
    # position) and the controls of every group of the needle set.
    assert len({line["id"] for line in needles}) == len(needles) == niah.n_cases
    assert {line["model"] for line in lines} == {niah.label}
    words = WordTokenizer()
    for line in lines:
        _check(line, lambda text: words.encode_batch([text])[0].ids)


def test_the_v4_shaped_stand_in_runs_and_exports_exact_haystacks(niah, standin_model):
    """The Qwen2-style byte-level BPE reads a word after a space as another token than the
    word alone; no needle is refused for it, and every haystack's ids are its text's."""
    folder = standin_model("v4")
    result = niah.run(
        f"--niah-model={folder}",
        "--niah-groups=dietary-01,language-02",
        "--niah-lengths=128",
        "--niah-export-haystacks=h.jsonl",
        omit=("arms",),
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    lines = _lines(niah.pytester.path / "h.jsonl")
    assert len([line for line in lines if line["needle_span"]]) == 2 * 1 * 2 * 3
    for line in lines:
        _check(line, lambda text: tokenizer.encode(text, add_special_tokens=False).ids)
