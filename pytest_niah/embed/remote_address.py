"""A served model's address, ``openai+http(s)://HOST:PORT/PATH#MODEL``, and its API key.

Cheap: only the standard library. The address is checked at configure time
(:func:`parse_remote`), so a malformed one or one holding a secret is one usage error; the
embedder is :mod:`pytest_niah.embed.remote`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pytest_niah.errors import ConfigError

# A model behind an OpenAI-compatible embeddings server.
REMOTE_PREFIX = "openai+"
REMOTE_EXAMPLE = "openai+http://127.0.0.1:8000/v1#BAAI/bge-m3"
# The query string a server needs (Azure's ``api-version=...``, a signed ``?sig=``): never in
# the address, which results, reports and logs repeat, but in this environment variable.
QUERY_ENV = "NIAH_REMOTE_QUERY"
QUERY_SHOWN = "?(query from " + QUERY_ENV + ", not shown)"


@dataclass(frozen=True)
class RemoteModel:
    """A served model, from ``openai+http(s)://HOST:PORT/PATH#MODEL``.

    Attributes:
        base: The API root as given (``http://host:8000/v1``, query kept), no ``/`` at the end.
        model: The model name the server is asked for (after ``#``).
        endpoint: The API root without query: what messages and the identity name.
    """

    base: str
    model: str
    endpoint: str

    def url(self, route: str) -> str:
        """The URL of ``route`` (``embeddings``, ``models``) under the API root."""
        root, sep, query = self.base.partition("?")
        return f"{root}/{route}" + (f"?{query}" if sep else "")

    def shown(self, route: str) -> str:
        """:meth:`url` as messages show it: the query string (from the environment) withheld."""
        return f"{self.endpoint}/{route}" + (QUERY_SHOWN if "?" in self.base else "")

    @property
    def query(self) -> str:
        """The query string sent with every request (``""``: none), never to be shown."""
        return self.base.partition("?")[2]


def is_remote(name: str) -> bool:
    """``name`` asks for a served model (``openai+...``)."""
    return name.startswith(REMOTE_PREFIX)


def parse_remote(name: str, *, key: str = "") -> RemoteModel:
    """The parts of ``openai+http(s)://HOST:PORT/PATH#MODEL``.

    Args:
        name: The served model's address.
        key: The API key, refused anywhere in the address; empty: not known.

    The query string sent with each request comes from the environment variable
    ``NIAH_REMOTE_QUERY``, never from the address: the address is written into results,
    reports, test ids and logs, and no rule can tell a secret parameter by its name
    (``?hmac=``, ``?otp=``, a bare ``?TOKEN``).

    Raises:
        ConfigError: a secret in the address (:func:`~pytest_niah.embed.secrets.url_secret`:
            it would be written into results), any query string, another scheme, no host,
            a bad port, or no ``#MODEL``. No message repeats a secret.
    """
    from urllib.parse import urlsplit, urlunsplit

    from pytest_niah.embed.secrets import url_secret

    secret = url_secret(name, key)
    if secret is not None:
        raise ConfigError(
            f"--niah-model: the address of the served model holds {secret}, which would be "
            "written into results, reports, the saved run and logs (the address is not shown)",
            "drop it from the URL and put the key in an environment variable named by "
            "--niah-api-key-env (default OPENAI_API_KEY): pytest-niah sends it as "
            "'Authorization: Bearer' and writes it nowhere",
        )
    url, sep, model = name[len(REMOTE_PREFIX) :].partition("#")
    _refuse_query(url)
    problem = f"--niah-model: {name!r} is not a served model address"
    shape = f"write it as openai+http(s)://HOST:PORT/v1#MODEL, e.g. {REMOTE_EXAMPLE}"
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{problem} ({exc})", shape) from None
    if parts.scheme not in ("http", "https"):
        raise ConfigError(f"{problem}: the scheme must be http or https", shape)
    if not parts.hostname:
        raise ConfigError(f"{problem}: it names no host", shape)
    if not sep or not model.strip():
        raise ConfigError(
            f"{problem}: it names no model (the server's model name goes after '#')", shape
        )
    netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    if port is not None:
        netloc += f":{port}"
    path = parts.path.rstrip("/")
    endpoint = urlunsplit((parts.scheme, netloc, path, "", ""))
    query = os.environ.get(QUERY_ENV, "").strip().removeprefix("?")
    base = endpoint + (f"?{query}" if query else "")
    return RemoteModel(base=base, model=model.strip(), endpoint=endpoint)


def _refuse_query(url: str) -> None:
    """Refuse any query string in the address: no rule can tell a secret one by its name."""
    if "?" in url:
        raise ConfigError(
            "--niah-model: the address of the served model holds a query string (not "
            "shown), which would be written into results, reports, the saved run and logs",
            f"drop it from the address and put it in the environment variable {QUERY_ENV} "
            f"(e.g. {QUERY_ENV}='api-version=2024-02-01'): pytest-niah adds it to every "
            "request and writes it nowhere; an API key goes in --niah-api-key-env's variable",
        )


def api_key(variable: str | None = None) -> str:
    """The API key in environment variable ``variable`` (``None``: the default one), or ``""``."""
    from pytest_niah.config.options import default

    return os.environ.get(variable or str(default("api_key_env")), "").strip()
