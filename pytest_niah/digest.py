"""The one identity function: sha256 of canonical JSON.

Models, needle and expansion sets, configs and results caches are named by
:func:`digest` of a JSON-ready value. The canonical form is the value's JSON with sorted
keys and no spaces, encoded as UTF-8. The keyword arguments exist only because digests
already stored (caches, results files, snapshots) were made with slightly different
forms; each caller keeps its own, and ``tests/test_digest.py`` pins every one of them.

This module imports only the standard library: every layer may use it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

__all__ = ["canonical_json", "digest"]


def canonical_json(
    value: object,
    *,
    ensure_ascii: bool = True,
    default: Callable[[object], object] | None = None,
) -> str:
    r"""The canonical JSON text of ``value``: sorted keys, ``,`` and ``:`` without spaces.

    Args:
        value: A JSON-ready value (dicts, lists, strings, numbers, booleans, None).
        ensure_ascii: Escape non-ASCII characters as ``\uXXXX`` (as :func:`json.dumps`).
        default: Turns a value JSON cannot hold into one it can (e.g. ``str`` for paths);
            None raises :class:`TypeError` on such a value.
    """
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=ensure_ascii, default=default
    )


def digest(
    value: object,
    *,
    ensure_ascii: bool = True,
    default: Callable[[object], object] | None = None,
) -> str:
    """The sha256 (64 lowercase hex digits) of :func:`canonical_json` of ``value``, as UTF-8."""
    text = canonical_json(value, ensure_ascii=ensure_ascii, default=default)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
