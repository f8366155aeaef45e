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


def is_remote(name: str) -> bool:
    """``name`` asks for a served model (``openai+...``)."""
    return name.startswith(REMOTE_PREFIX)


def parse_remote(name: str, *, key: str = "") -> RemoteModel:
    """The parts of ``openai+http(s)://HOST:PORT/PATH#MODEL``.

    Args:
        name: The served model's address.
        key: The API key, refused anywhere in the address; empty: not known.

    Raises:
        ConfigError: a secret in the address (:func:`~pytest_niah.embed.secrets.url_secret`:
            it would be written into results), another scheme, no host, a bad port, or no
            ``#MODEL``. No message repeats a secret.
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
    base = endpoint + (f"?{parts.query}" if parts.query else "")
    return RemoteModel(base=base, model=model.strip(), endpoint=endpoint)


def api_key(variable: str | None = None) -> str:
    """The API key in environment variable ``variable`` (``None``: the default one), or ``""``."""
    from pytest_niah.config.options import default

    return os.environ.get(variable or str(default("api_key_env")), "").strip()
