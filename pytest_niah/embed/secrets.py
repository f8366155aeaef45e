"""Keeping the API key of a served model out of every address, message and file.

Two rules, each written here once:

- :func:`url_secret` finds a secret in a served model's address (``openai+URL#MODEL``):
  credentials before the host, a parameter whose name says secret (``api_key=``,
  ``token=``, ``sig=``, Azure's ``code=``, the fields of a SAS ...), a value shaped like a
  credential (``sk-...``, ``hf_...``, a JWT, a long random token), or the key itself in any
  spelling (percent-encoded, case changed). Such an address is refused: everything it says
  is written into results, reports and the saved run. The key belongs in the environment
  variable ``--niah-api-key-env`` names.
- :func:`redact` blanks the key out of text a server sent back, in every form a server may
  echo it (case changed, JSON-escaped, percent-encoded, base64, spaced out), before the text
  is cut; :func:`excerpt` then cuts it, and blanks a piece of the key left at the cut.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from urllib.parse import quote, quote_plus, unquote, unquote_plus

BLANK = "***"
WITHHELD = "[withheld: it holds the API key in a form pytest-niah cannot blank]"
# The shortest piece of the key blanked where a cut leaves one.
MIN_PIECE = 4
# A parameter name that says its value is secret.
SECRET_NAME = re.compile(
    r"key|token|secret|passw|pwd|auth|credential|signature|^sig$|session|bearer|jwt|cookie|"
    r"private|"
    # Azure Functions' ?code= key, and the fields of a shared access signature (SAS): a
    # SAS is a credential as a whole, its sv/se/sp parts included.
    r"^code$|^sas$|^sv$|^se$|^sp$|^sr$|^srt$|^ss$|^st$|^spr$|^skoid$|^sktid$|^ske$|^sks$|^skv$",
    re.IGNORECASE,
)
# A value shaped like a credential: a vendor key prefix, a JWT, or a long random token.
CREDENTIAL = re.compile(
    r"(?:\b(?:sk|pk|rk)[-_][A-Za-z0-9_-]{8,}"
    r"|\b(?:hf|ghp|gho|ghu|ghs|ghr|glpat|xox[abpors])[-_][A-Za-z0-9_-]{8,}"
    r"|github_pat_[A-Za-z0-9_]{8,}"
    r"|\b(?:AKIA|ASIA)[A-Z0-9]{12,}"
    r"|\bAIza[A-Za-z0-9_-]{20,}"
    r"|\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}"
    r"|\b(?:Bearer|Basic)\s+\S{8,})"
)
# A run of letters and digits this long, holding both, is a random token, not a word.
RANDOM_RUN = re.compile(r"[A-Za-z0-9]{24,}")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/*")
_PARAM = re.compile(r"(?:^|[?&;#/])([^?&;#/=]*)=")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")


def url_secret(address: str, key: str = "") -> str | None:
    """What in ``address`` is a secret, in words that do not repeat it; ``None``: nothing.

    Args:
        address: A served model's address (``openai+URL#MODEL``, or the URL alone).
        key: The API key (the value of ``--niah-api-key-env``); empty: not known.
    """
    views = _decoded_views(address)
    if key.strip() and any(key.strip().lower() in view.lower() for view in views):
        return "the API key itself"
    for view in views:
        after_scheme = _SCHEME.sub("", view, count=1)
        authority = re.split(r"[/?#]", after_scheme, maxsplit=1)[0]
        if "@" in authority:
            return "credentials before the host (user:password@)"
        names = [name for name in _PARAM.findall(view) if SECRET_NAME.search(name)]
        if names:
            return f"the parameter {_shown_name(names[0])}"
        rest = after_scheme[len(authority) :]  # the host is no secret: path, query, model
        if CREDENTIAL.search(rest) or any(_is_random(run) for run in RANDOM_RUN.findall(rest)):
            return "a value shaped like a credential (an API key or token)"
    return None


def _decoded_views(text: str) -> list[str]:
    """``text`` as given and with percent-encoding undone until nothing changes.

    A key encoded twice or more is still the key. Each pass shortens the text or turns a
    ``+`` into a space, so the loop ends.
    """
    views = [text]
    while (decoded := unquote_plus(views[-1])) != views[-1]:
        views += [unquote(views[-1]), decoded]
    return list(dict.fromkeys(views))


def _shown_name(name: str) -> str:
    """A parameter name fit to print (a name shaped like a credential is not shown)."""
    if len(name) <= 32 and re.fullmatch(r"[\w.-]+", name) and not _is_random(name):
        return repr(name)
    return "(name not shown)"


def _is_random(run: str) -> bool:
    return len(run) >= 24 and any(c.isdigit() for c in run) and any(c.isalpha() for c in run)


def key_forms(key: str) -> list[str]:
    """The spellings of ``key`` a server may echo, longest first (case is ignored when matched).

    The key as it is, JSON-escaped (a slash or every character escaped), percent-encoded,
    and base64 (both alphabets) at each of the three alignments it can take inside a longer
    encoded text.
    """
    key = key.strip()
    if not key:
        return []
    forms = {
        key,
        json.dumps(key)[1:-1],
        json.dumps(key, ensure_ascii=True)[1:-1].replace("/", "\\/"),
        "".join(f"\\u{ord(c):04x}" for c in key),
        quote(key, safe=""),
        quote_plus(key, safe=""),
        html.escape(key),
    }
    raw = key.encode()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        first, last = -(-offset // 3), (offset + len(raw)) // 3
        core = encoded[4 * first : 4 * last]
        if len(core) >= 8:
            forms.update({core, core.replace("+", "-").replace("/", "_")})
    return sorted(forms, key=len, reverse=True)


def redact(text: str, key: str) -> str:
    """``text`` with every form of ``key`` blanked; all of it withheld if the key survives."""
    forms = key_forms(key)
    if not forms:
        return text
    for form in forms:
        text = re.sub(re.escape(form), BLANK, text, flags=re.IGNORECASE)
    text = _spaced(key.strip()).sub(BLANK, text)
    return WITHHELD if _still_holds(text, key.strip()) else text


def _spaced(key: str) -> re.Pattern[str]:
    """The key echoed with white space between its characters (``s k - 1 2 ...``)."""
    return re.compile(r"\s+".join(map(re.escape, key)), re.IGNORECASE)


def _still_holds(text: str, key: str) -> bool:
    """``key`` is in ``text`` once escapes, percent-encoding, base64 or spacing are undone."""
    needle = key.lower()
    unescaped = _JSON_ESCAPE.sub(lambda m: chr(int(m[1], 16)), text).replace("\\/", "/")
    views = [*_decoded_views(text), html.unescape(text), unescaped, "".join(text.split())]
    for run in _BASE64_RUN.findall(text):
        for alphabet in (None, b"-_"):
            try:
                decoded = base64.b64decode(run + "=" * (-len(run) % 4), altchars=alphabet)
            except (binascii.Error, ValueError):
                continue
            views.append(decoded.decode("utf-8", "replace"))
    return any(needle in view.lower() for view in views)


def excerpt(text: str, key: str, limit: int) -> str:
    """A single-line piece of ``text``, at most ``limit`` characters, with ``key`` blanked.

    The key is blanked before the cut, so no part of it survives the cut; a piece of it
    (``MIN_PIECE`` characters or more) left at the end (the server cut its echo) is blanked too.
    """
    text = redact(" ".join(text.split()), key)
    if text == WITHHELD:
        return text
    text = text[:limit]
    lowered = text.lower()
    for form in key_forms(key):
        for size in range(min(len(form) - 1, len(text)), MIN_PIECE - 1, -1):
            if lowered.endswith(form[:size].lower()):
                return text[:-size] + BLANK
    return text
