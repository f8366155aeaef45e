"""Rules of ``embed/secrets.py`` that the server tests do not reach (issue 34, item 6).

Each test is the behaviour a surviving mutant broke: an echoed key is blanked where it
stands, whole, and the text around it is kept (not withheld).
"""

from __future__ import annotations

import base64
import json

import pytest

from pytest_niah.embed.secrets import BLANK, WITHHELD, excerpt, redact, url_secret


@pytest.mark.parametrize(
    "key",
    [
        "ab/cd\u00e9-12345",  # a non-ASCII letter: \u00e9 in JSON
        'ab/cd"ef-12345',  # a quote: \" in JSON
        "ab/cd\\ef-12345",  # a backslash: \\ in JSON
    ],
)
def test_a_key_with_a_slash_and_an_escaped_character_is_blanked_whole_in_json(key):
    # Found (mutation seed 318002408, secrets.py:112): Python's json.dumps escapes the
    # quote, backslash and non-ASCII characters but leaves "/" as it is, a spelling of
    # its own when the key holds both; a form cut by one character leaked the first one.
    echo = json.dumps({"error": "bad key", "key": key})
    assert redact(echo, key) == json.dumps({"error": "bad key", "key": BLANK})


@pytest.mark.parametrize("key", ["Zq7#xY", "Zq7#xY1", "Zq7#xY12"])
def test_a_short_key_echoed_in_base64_is_blanked_and_the_text_kept(key):
    # Found (mutation seed 318002408, secrets.py:124): a key of 6 to 8 bytes has a base64
    # core of exactly 8 characters; it is a form to blank, so the text is kept rather than
    # withheld as a whole.
    encoded = base64.b64encode(key.encode()).decode().rstrip("=")
    url_safe = base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")
    text = f"rejected credential {encoded} (also {url_safe}) for this model"
    redacted = redact(text, key)
    assert redacted.startswith("rejected credential ") and redacted.endswith(" for this model")
    assert encoded not in redacted and url_safe not in redacted


def test_a_secret_parameter_with_a_long_name_is_refused_without_its_name():
    """A name over 32 characters may itself carry the credential: never printed."""
    from pytest_niah.embed.secrets import url_secret

    long_name = "api_key_for_the_embedding_gateway_prod"  # 38 characters, words only
    found = url_secret(f"openai+https://example.test/v1?{long_name}=x#model")
    assert found == "the parameter (name not shown)"
    assert url_secret("openai+https://example.test/v1?api_key=x#model") == "the parameter 'api_key'"


def test_a_piece_of_the_key_at_the_end_of_an_excerpt_is_blanked_down_to_four_characters():
    # Found (mutation, secrets.py:29 MIN_PIECE 4 -> 5, :172 `len(form) - 1` -> `- 2`): a
    # server that cut its echo of the key leaves a piece at the end: every piece from all
    # but its last character down to four characters is blanked; three are left (too common).
    key = "sk-abcdefghijklmnop"
    assert excerpt(f"echo: {key[:-1]}", key, 200) == "echo: ***"
    for before in ("echo: ", "echo:"):  # every size, whatever the text's length
        for size in (4, 5, 6, 9):
            assert excerpt(f"{before}{key[:size]}", key, 200) == f"{before}***", size
    assert excerpt(f"echo: {key[:3]}", key, 200) == f"echo: {key[:3]}"
    # The cut itself leaves a piece of four: blanked too.
    assert excerpt(f"echo: {key[:4]}zz", key, 10) == "echo: ***"


@pytest.mark.parametrize("key", ["", "   "])
def test_no_key_blanks_nothing(key):
    # Found (mutation, secrets.py:132 `if not forms: return text` deleted): without a key
    # there is nothing to blank; the text comes back as it was, not cut to pieces.
    text = "POST /v1/embeddings: 503 Service Unavailable (retry after 2 s)"
    assert redact(text, key) == text


def test_an_excerpt_that_would_hold_the_key_is_withheld_whole_however_short_the_limit():
    # Found (mutation, secrets.py:167 the withheld check deleted): a key echoed in a form
    # that cannot be blanked (spaced out in one place only) withholds the text, and the
    # excerpt says so in full rather than cutting the notice to the limit.
    key = "sk-abcdefgh1234"
    assert excerpt("error: sk-abcd efgh1234 bad", key, 20) == WITHHELD


def test_a_secret_parameters_name_is_shown_up_to_32_characters():
    # Found (mutation, secrets.py:91 the `<= 32` bound): a name of 32 characters is shown,
    # one of 33 is not (too long to be a plain name; it may be a key itself).
    name = "x" * 25 + "api_key"
    assert url_secret(f"http://h/v1?{name}=1#m") == f"the parameter {name!r}"
    assert url_secret(f"http://h/v1?x{name}=1#m") == "the parameter (name not shown)"


def test_a_run_of_24_letters_and_digits_is_a_token_and_one_of_23_a_word():
    # Found (mutation, secrets.py:97 the `>= 24` bound): the shortest random-looking run that
    # counts as a credential is 24 characters, holding both letters and digits.
    token = "a" * 23 + "1"
    assert url_secret(f"http://h/v1/{token}#m") is not None
    assert url_secret(f"http://h/v1/{token[1:]}#m") is None
    assert url_secret(f"http://h/v1/{'a' * 24}#m") is None  # no digit: a word
    assert url_secret(f"http://h/v1/{'1' * 24}#m") is None  # no letter: a number


def test_a_six_byte_key_echoed_in_base64_is_blanked_where_it_stands():
    # Found (mutation, secrets.py:124 the `>= 8` bound): six bytes make eight base64
    # characters, the shortest base64 form blanked (a shorter one would match words).
    encoded = base64.b64encode(b"abcdef").decode()
    assert len(encoded) == 8
    assert redact(f"token {encoded} here", "abcdef") == f"token {BLANK} here"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("api_key2", True),  # letters and a digit, but short: a name, not a token
        ("<b>token", False),  # not a plain name: not printed as it is
        ("a1b2c3d4e5f6g7h8i9j0k1l2_key", False),  # a random-looking run: maybe a key
    ],
)
def test_a_secret_parameters_name_is_shown_only_when_plain_and_not_random(name, shown):
    # Found (mutation, secrets.py:91 and :97, each clause of the rule dropped).
    said = url_secret(f"http://h/v1?{name}=1#m")
    assert said == (f"the parameter {name!r}" if shown else "the parameter (name not shown)")


def test_without_a_key_an_excerpt_is_only_the_text_on_one_line_cut_to_the_limit():
    # Found (mutation, secrets.py:109 `return []` -> None): no key has no forms to look for.
    assert excerpt("  some  text\n here ", "", 8) == "some tex"
    assert excerpt("  some  text\n here ", "  ", 80) == "some text here"


def test_the_key_upper_cased_then_base64_encoded_withholds_the_text():
    # Found (mutation, secrets.py:156 the decoded base64 run never looked at): base64 of the
    # key in another case matches none of its forms, so it is found only by decoding.
    echoed = base64.b64encode(b"SK-ABCDEFGH1234").decode()
    assert redact(f"echo {echoed} done", "sk-abcdefgh1234") == WITHHELD


def test_a_form_of_the_key_that_holds_the_key_itself_is_blanked_whole():
    # Found (mutation, secrets.py:126 the forms tried shortest first): HTML-escaped, a key
    # ending in "&" is the key then "amp;"; the longer form is blanked first, so no
    # "amp;" is left behind.
    text = "error: key=Abc123xyz&amp; was refused"
    assert redact(text, "Abc123xyz&") == f"error: key={BLANK} was refused"


@pytest.mark.parametrize(
    ("before", "blanked"),
    [(b"", "***IT8="), (b"a", "YXNr***NCE/"), (b"ab", "YWJz***MzQhPw==")],
)
def test_the_key_inside_longer_base64_is_blanked_group_by_group(before, blanked):
    # Found (mutation, secrets.py:123 the core's bounds `4 *` -> `5 *`): base64 writes each
    # 3 bytes as 4 characters; every group of 4 that holds only the key's bytes is blanked,
    # and the groups that also hold the bytes around it (here "a", "ab" and "!?") are kept.
    key = "sk-abcdefgh1234"
    encoded = base64.b64encode(before + key.encode() + b"!?").decode()
    assert redact(f"echo {encoded} end", key) == f"echo {blanked} end"


@pytest.mark.parametrize("key", ["ab/cd-12345", "ab/cd\u00e9-12345"])
def test_a_key_echoed_with_every_slash_escaped_is_blanked_whole(key):
    # Found (mutation, secrets.py:113 `[1:-1]` -> `[1:-2]`): encoders that escape "/" as
    # "\/" (PHP's, ASCII-only ones) write a spelling of their own; it is blanked to the
    # last character.
    echo = json.dumps({"key": key}).replace("/", "\\/")
    assert redact(echo, key) == json.dumps({"key": BLANK})


@pytest.mark.parametrize("key", ["sk-abcdefgh1234", "sk-abcdefgh12345", "sk-abcdefgh1234567890x"])
def test_base64_echoed_without_its_padding_is_still_decoded(key):
    # Found (mutation, secrets.py:153 the padding `% 4` -> `% 5`): a base64 run whose "="
    # padding was dropped (as URLs and JWTs do) gets it back before decoding, whatever
    # its length; here the key upper-cased, so only decoding finds it.
    echoed = base64.b64encode(key.upper().encode()).decode().rstrip("=")
    assert redact(f"echo {echoed} done", key) == WITHHELD


@pytest.mark.parametrize("times", [1, 2, 3, 5])
def test_a_key_percent_encoded_any_number_of_times_is_found_in_an_address(times):
    # Found (fresh mutation draw 1863714026, secrets.py:84 `2 -> 3`): the decoding stopped
    # after two passes, so a key encoded three times in an address went unseen.
    from urllib.parse import quote

    key = "sk-live/Ab+12:xyz"
    encoded = key
    for _ in range(times):
        encoded = quote(encoded, safe="")
    assert url_secret(f"openai+http://h:1/v1?x={encoded}#m", key) == "the API key itself"
    excerpted = excerpt(f"server said: {encoded}", key, 200)
    assert encoded not in excerpted


def test_a_plus_left_as_it_is_in_an_encoded_key_is_read_as_the_keys_own():
    # A key's "+" that a client did not encode reads as a space to form decoding, and as
    # itself to path decoding; the address is read both ways (a mutant that kept only the
    # form decoding survived the tests above).
    from urllib.parse import quote

    key = "sk-live/Ab+12:xyz"
    address = f"openai+http://h:1/v1?x={quote(key, safe='+')}#m"
    assert "+" in address
    assert url_secret(address, key) == "the API key itself"
