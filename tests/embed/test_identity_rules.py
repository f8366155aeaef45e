"""Rules of embed/identity.py that mutants found unchecked, beside test_identity*.py."""

from __future__ import annotations

from pytest_niah.embed.identity import model_identity


def test_an_identity_is_the_same_as_the_last_release_gave_so_caches_carry_over():
    # Found (mutation, identity.py:41 EMBEDDING_SCHEMA 2 -> 3): the identity keys every
    # cache, so any change of how it is made (its schema number included) drops every
    # user's embedding cache. This digest changes only with a deliberate schema bump.
    identity = model_identity(
        {"kind": "files", "files": {"config.json": "ab" * 32}},
        {"device": "cpu", "dtype": "float32"},
        versions=False,
    )
    assert identity.parts["schema"] == 2
    assert identity.digest == "66ce32b7641f4ab7ae8b2a9fb32e74f435431cfd35275c22cea9a9189cf83a90"
    assert identity.short == identity.digest[:12]
