"""The one identity function, and every fingerprint made with it pinned to its bytes.

Stored results, embedding caches, results caches and snapshots are keyed by these digests:
a change of the canonical form (separators, key order, escaping, the fallback for values
JSON cannot hold) would orphan all of them silently. Each pin below is the value the code
gave before the digests were gathered into :mod:`pytest_niah.digest`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path, PurePosixPath
from types import SimpleNamespace

import pytest

from pytest_niah.config.niah import TRANSPORT, NiahConfig
from pytest_niah.digest import canonical_json, digest
from pytest_niah.embed.identity import ModelIdentity
from pytest_niah.inputs.expansions import ExpansionSet
from pytest_niah.inputs.needles import load_needle_set
from pytest_niah.results.results_schema import RESULTS_SCHEMA_VERSION

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VALUE = {"schema": 3, "name": "Zoë", "nested": {"b": [1, 2.5, None, True], "a": "é"}}
MODEL_PARTS = {
    "schema": 2,
    "source": {"kind": "files", "files": {"a.bin": "00" * 32}},
    "settings": {"device": PurePosixPath("/models/é"), "prompt": "Résumé: ", "window": 512},
}


def test_canonical_json_sorts_keys_and_drops_spaces() -> None:
    assert canonical_json({"b": [1, 2], "a": "é"}) == '{"a":"\\u00e9","b":[1,2]}'
    assert canonical_json({"b": [1, 2], "a": "é"}, ensure_ascii=False) == '{"a":"é","b":[1,2]}'
    assert canonical_json({"p": PurePosixPath("/x")}, default=str) == '{"p":"/x"}'
    with pytest.raises(TypeError):
        canonical_json({"p": PurePosixPath("/x")})


@pytest.mark.parametrize(
    ("ensure_ascii", "pinned"),
    [
        (True, "329c5b61e080f2a1a4523a207894d89f610f8ddffa9c3dc3ee553189db7987f7"),
        (False, "98279de62dbf677e703416d8e3fbdd63b1cbae3f8c93861cf2718ea901d960a4"),
    ],
)
def test_digest_is_pinned(ensure_ascii: bool, pinned: str) -> None:
    assert digest(VALUE, ensure_ascii=ensure_ascii) == pinned
    assert digest(dict(reversed(VALUE.items())), ensure_ascii=ensure_ascii) == pinned


def test_model_identity_is_pinned() -> None:
    identity = ModelIdentity.of(MODEL_PARTS)
    assert identity.digest == "cbbaba0e1eac1cd341a0f2bd33248aa55236994b504f306e78de0e98f19eb344"
    # The parts are kept as the JSON that was hashed: the path became its text.
    assert identity.parts["settings"]["device"] == "/models/é"


def test_needle_set_fingerprint_is_pinned() -> None:
    custom = load_needle_set(FIXTURES / "needles" / "valid_custom.json")
    assert custom.fingerprint() == (
        "364b8718bdface0f8c28a61277f4ae0307e531cb1ff779362c379d7f14fe4326"
    )
    accented = dataclasses.replace(custom, names=(*custom.names, "Zoë"))
    assert accented.fingerprint() == (
        "1b9ce52abce04b8eeece2dc651d05958ff8d4f59126a8d2588be2faa3d25693a"
    )


def test_expansion_set_fingerprint_is_pinned() -> None:
    expansions = ExpansionSet(
        name="crème",
        source="<dict>",
        terms={"dietary-01": ("pork", "crème brûlée"), "hobby-01": ("chess",)},
    )
    assert expansions.fingerprint() == (
        "4ae8adebc0fdfecf6d301640e9c022a69eec7eb93024131abffd575683af1366"
    )


@pytest.mark.parametrize("config", [NiahConfig(model="m"), NiahConfig(model="mödel", corpus="bü")])
def test_config_fingerprint_keeps_its_canonical_form(config: NiahConfig) -> None:
    # The defaults change as options are added, so the form is pinned, not the value.
    # The form hashes key_dict(): to_dict() without the transport options (config.niah.TRANSPORT:
    # timeout, concurrency, api-key env), which deliberately key no results.
    assert set(config.to_dict()) - set(config.key_dict()) == TRANSPORT
    text = json.dumps(config.key_dict(), sort_keys=True, separators=(",", ":"))
    assert config.fingerprint() == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert config.fingerprint() == digest(config.key_dict())[:16]


def test_results_key_keeps_its_canonical_form(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_niah.experiment import results_cache

    monkeypatch.setattr(results_cache, "package_versions", lambda: {"torch": "2.13.0", "ë": "1"})
    config = NiahConfig(model="mödel")
    embedder = SimpleNamespace(identity=SimpleNamespace(digest="ab" * 32))
    inputs = SimpleNamespace(
        corpus=SimpleNamespace(fingerprint=lambda: "c0" * 32),
        needle_set=SimpleNamespace(fingerprint=lambda: "4e" * 32),
        expansions=None,
    )
    identity = {
        "schema": RESULTS_SCHEMA_VERSION,
        "config": config.key_dict(),  # transport options (config.niah.TRANSPORT) key no results
        "model": "ab" * 32,
        "corpus": "c0" * 32,
        "needles": "4e" * 32,
        "expansions": None,
        "versions": {"torch": "2.13.0", "ë": "1"},
        "window_probe": results_cache.WINDOW_PROBE_VERSION,
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    key = results_cache.results_key(config, embedder, inputs)  # type: ignore[arg-type]
    assert key == hashlib.sha256(text.encode()).hexdigest() == digest(identity)
