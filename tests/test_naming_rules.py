"""Rules of ``naming.py`` that mutants found unchecked, beside test_naming.py."""

from __future__ import annotations

import hashlib

from pytest_niah.naming import MAX_LABEL_LENGTH, file_slug, label_char, label_file_name


def _digest(label: str) -> str:
    return hashlib.sha256(label.encode("utf-8")).hexdigest()


def test_a_hashed_name_is_the_slug_cut_at_sixty_and_ten_hex_digits():
    # Found (mutation sweep mutA, naming.py:24 ten digits -> 11, :26 sixty characters -> 61).
    assert label_file_name("Prod") == f"Prod-{_digest('Prod')[:10]}"
    long = "Model" * 20  # 100 characters, not lowercase: hashed, its slug cut
    assert label_file_name(long) == f"{long[:60]}-{_digest(long)[:10]}"
    assert len(label_file_name(long)) == 71


def test_a_label_with_nothing_to_keep_is_named_unnamed_plus_its_hash():
    # Found (mutation sweep mutA, naming.py:47 the "unnamed" stand-in dropped): no empty
    # name, no hidden file and no "..": only dots and dashes leave nothing of the slug.
    assert file_slug("..") == file_slug("-.-") == file_slug("") == "unnamed"
    assert label_file_name("..") == f"unnamed-{_digest('..')[:10]}"


def test_a_plain_label_of_up_to_the_limit_names_itself_and_one_longer_is_hashed():
    # Found (mutation sweep mutA, naming.py:22 the limit 100 -> 101, :63 `<=` -> `<`).
    assert MAX_LABEL_LENGTH == 100
    exact = "m" * 100
    assert label_file_name(exact) == exact
    longer = "m" * 101
    assert label_file_name(longer) == f"{'m' * 60}-{_digest(longer)[:10]}"


def test_a_plain_label_ending_like_a_hash_is_hashed_itself():
    # Found (mutation sweep mutA, naming.py:63 the hash-tail clause dropped): otherwise
    # "abc-0123456789" could be the hashed name of another label.
    label = "abc-0123456789"
    assert label_file_name(label) == f"{label}-{_digest(label)[:10]}"
    assert label_file_name("abc-012345678") == "abc-012345678"  # nine digits: plain


def test_dots_underscores_and_dashes_are_label_characters():
    # Found (mutation sweep mutA, naming.py:31 the `in "._-"` clause dropped).
    assert all(label_char(ch) for ch in "._-aZ9")
    assert not any(label_char(ch) for ch in "/ :\\")
    assert label_file_name("model_v1.2-small") == "model_v1.2-small"
