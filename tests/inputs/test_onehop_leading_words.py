"""A one-hop needle's word may not begin with a word of its question.

Found: the one-hop leak check passed compound words that begin with the question's word:
``dogwalker``, ``doghouse``, ``DogHouse`` and ``dog2`` for "Which character owns a dog?"
(MiniLM reads ``dogwalker`` as ``dog ##walker``). The word rule (at load) and the model's
own tokenizer (before a run) both refuse them now, naming the word; the built-in needles
pass both, on every tokenizer family (the packaged pair and the stand-ins).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from standins import EVERY_TOKENIZER
from tokenizers import Tokenizer

from pytest_niah.embed.fast_tokenizer import HaystackTokenizer
from pytest_niah.embed.models import packaged_folder
from pytest_niah.haystacks.audit import check_onehop_tokens
from pytest_niah.inputs.needles import NeedleGroup, NeedleSet, NeedleSetError, builtin_needle_set
from pytest_niah.inputs.words import matching_words, shared_content_words

COMPOUNDS = ["dogwalker", "doghouse", "DogHouse", "dog2"]
QUESTION = "Which character owns a dog?"


def dog_group(word: str, question: str = QUESTION) -> NeedleGroup:
    base = builtin_needle_set().groups[0]
    literal = [n for n in base.needles if n[0] == "literal"]
    return dataclasses.replace(
        base,
        question=question,
        needles=(
            ("onehop", "default", f"{{name}} hired the {word} each morning."),
            ("onehop", "inverted", f"Each morning, the {word} was hired by {{name}}."),
            *literal,
        ),
    )


def tokenizer_of(model: str) -> HaystackTokenizer:
    folder = packaged_folder(model)
    assert folder is not None
    return HaystackTokenizer(Tokenizer.from_file(str(Path(folder) / "tokenizer.json")))


@pytest.mark.parametrize("word", COMPOUNDS)
def test_the_word_rule_refuses_a_needle_word_beginning_with_the_questions(word):
    assert shared_content_words(QUESTION, f"{{name}} hired the {word}.") == {"dog"}
    assert matching_words(QUESTION, f"{{name}} hired the {word}.") == [("dog", word.lower())]
    data = builtin_needle_set().to_dict()
    data["groups"] = [dog_group(word).to_dict()]
    with pytest.raises(NeedleSetError) as caught:
        NeedleSet.from_dict(data)
    message = str(caught.value)
    assert "shares the content word(s) dog" in message
    assert f"'{word.lower()}' for 'dog'" in message  # the word is named
    assert "needles.onehop.default" in message


def test_the_stem_of_a_plural_question_word_counts_and_short_words_only_match_themselves():
    assert shared_content_words("Which character owns dogs?", "{name} built a doghouse.")
    assert not shared_content_words("Which character has an ox?", "{name} went to Oxford.")
    assert not shared_content_words(QUESTION, "{name} hired a hotdog vendor.")  # not leading


@pytest.mark.parametrize("which", EVERY_TOKENIZER)
def test_the_models_tokenizer_refuses_a_word_that_begins_with_the_questions(request, which):
    tokenizer = request.getfixturevalue(which)
    ids = tokenizer.encode_batch(["dog", "dogwalker"])
    if tuple(ids[1].ids[: len(ids[0].ids)]) != tuple(ids[0].ids):
        pytest.skip(f"{which} does not read 'dogwalker' as 'dog' first")
    with pytest.raises(NeedleSetError) as caught:
        check_onehop_tokens([dog_group("dogwalker")], tokenizer, "my-needles.json")
    message = str(caught.value)
    assert "'dogwalker' begins with the question's word 'dog'" in message
    assert "my-needles.json" in message and "needles.onehop.default" in message


def test_minilm_reads_dogwalker_as_dog_then_more():
    tokenizer = tokenizer_of("packaged-minilm")
    dog, walker = tokenizer.encode_batch(["dog", "dogwalker"])
    assert len(dog.ids) == 1 and walker.ids[0] == dog.ids[0] and len(walker.ids) > 1


@pytest.mark.parametrize("which", EVERY_TOKENIZER)
def test_the_builtin_needles_pass_every_tokenizer_family(request, which):
    """The packaged pair and the stand-ins of the study's models (tests/standins.py)."""
    check_onehop_tokens(builtin_needle_set().groups, request.getfixturevalue(which), "builtin")
