"""Hostile needles, added tokens, every tokenizer: a haystack's ids are always its text's.

A property test: for needle text with NBSP, NFKC-sensitive characters, CJK, emoji, the word
markers ``▁`` and ``Ġ`` and curly quotes, on every tokenizer family, with added tokens
(special and not, spanning a space, stripping white space on either side), each haystack
built (in token space where the tokenizer allows, else from text) carries exactly the ids
the tokenizer gives its text, holds the length it claims, and its needle span is read off
those ids' offsets.
"""

from __future__ import annotations

import json

import pytest
from haystack_building import SLOW_OK
from hypothesis import given
from hypothesis import strategies as st
from standins import STANDIN_FIXTURES, with_added
from test_every_tokenizer import check_exact, haystacks_and_encodings
from tokenizers import AddedToken

from pytest_niah.inputs.needles import load_needle_set

HOSTILE = (
    "",
    "\u00a0",
    "ﬁne",
    "Ｆｕｌｌ",
    "①",
    "東京の",
    "😀",
    "▁",
    "Ġ",
    "“curly”",
    "’s",
    "e\u0301",
    "<mask>",
    ". the",
    "[X]",
)
ADDED = (
    (),
    (AddedToken("<mask>", special=True, lstrip=True),),
    (AddedToken(". the", special=False),),
    (AddedToken("[X]", special=False, rstrip=True),),
    (AddedToken("dachshund named", special=False), AddedToken("[X]", lstrip=True)),
)
FAMILIES = ("minilm_tokenizer", *STANDIN_FIXTURES)


def needle_set(tmp_path, prefix: str, middle: str, suffix: str):
    template = f"{{name}} {prefix} walks a dachshund{middle} named Rex {suffix}every day."
    group = {
        "id": "pet-01",
        "category": "pet",
        "question": "Which character owns a dog?",
        "keywords": ["dog"],
        "answer_cues": ["dachshund"],
        "needles": {
            "onehop": {"default": template, "inverted": template.replace("every", "each")},
            "literal": {"default": template, "inverted": template},
        },
        "expansion_terms": ["puppy"],
    }
    spec = {"schema_version": 1, "name": "hostile", "names": ["Tomas", "Aiko"], "groups": [group]}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return load_needle_set(path)


@pytest.mark.parametrize("which", FAMILIES)
@SLOW_OK
@given(
    prefix=st.sampled_from(HOSTILE),
    middle=st.sampled_from(HOSTILE),
    suffix=st.sampled_from(HOSTILE),
    added=st.sampled_from(ADDED),
)
def test_every_haystack_carries_its_texts_ids(
    request, tmp_path_factory, shared_corpus, which, prefix, middle, suffix, added
):
    base = request.getfixturevalue(which)
    tokenizer = with_added(base, *added) if added else base
    needles = needle_set(tmp_path_factory.mktemp("needles"), prefix, middle, suffix)
    for haystack, carried in haystacks_and_encodings(shared_corpus, tokenizer, needles, (128,)):
        check_exact(haystack, carried, tokenizer)
