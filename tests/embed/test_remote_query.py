"""A served model's address holds no query string: the one a server needs comes from the
environment and is never shown.

Found: ``?hmac=``, ``?pw=``, ``?passphrase=``, ``?otp=`` and a bare ``?TOKEN`` in a served
address were accepted, and the address is written into results, reports and logs. No rule
can tell a secret parameter by its name, so any query string in the address is refused and
the fix (the environment variable ``NIAH_REMOTE_QUERY``) is named in the error.
"""

from __future__ import annotations

import pytest
from remote_kit import KEY_ENV, embed_error, remote

from pytest_niah.embed.models import check_model_name
from pytest_niah.embed.remote_address import QUERY_ENV, parse_remote
from pytest_niah.errors import ConfigError

HIDDEN = "Zq7hidden"

QUERIES = [
    f"?hmac={HIDDEN}",
    f"?pw={HIDDEN}",
    f"?passphrase={HIDDEN}",
    f"?otp={HIDDEN}",
    f"?{HIDDEN}",
    f"?api-version=1&x={HIDDEN}",
    "?",
]


@pytest.mark.parametrize("query", QUERIES)
def test_any_query_string_in_the_address_is_refused_naming_the_fix(query):
    with pytest.raises(ConfigError) as caught:
        check_model_name(f"openai+https://h.example/v1{query}#m", tokenizer="packaged-minilm")
    error = caught.value
    assert "holds a query string (not shown)" in error.problem
    assert QUERY_ENV in error.hint
    assert HIDDEN not in str(error) and "h.example" not in str(error)


def test_the_query_from_the_environment_is_sent_but_never_shown(monkeypatch):
    monkeypatch.setenv(QUERY_ENV, f"?api-version=1&hmac={HIDDEN}")
    served = parse_remote("openai+https://h.example/v1#m")
    assert (
        served.url("embeddings") == f"https://h.example/v1/embeddings?api-version=1&hmac={HIDDEN}"
    )
    assert served.endpoint == "https://h.example/v1"
    assert HIDDEN not in served.shown("embeddings")
    assert served.shown("embeddings").startswith("https://h.example/v1/embeddings?(query from")
    monkeypatch.delenv(QUERY_ENV)
    assert (
        parse_remote("openai+https://h.example/v1#m").url("models") == "https://h.example/v1/models"
    )


def test_a_server_echoing_the_query_back_never_gets_it_into_a_message(server, monkeypatch):
    # The loopback server answers 404 "no route /v1/embeddings?hmac=..." to a path with a
    # query: the request carried it, and its echo is blanked out of the error.
    monkeypatch.setenv(QUERY_ENV, f"hmac={HIDDEN}&otp=123456")
    message = str(embed_error(remote(server, api_key_env=KEY_ENV)))
    assert "HTTP 404" in message and f"(query from {QUERY_ENV}, not shown)" in message
    assert HIDDEN not in message and "123456" not in message
