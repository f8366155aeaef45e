"""``pytest-niah audit`` against loopback servers that cut, refuse, jitter or answer slowly."""

from __future__ import annotations

import pytest

from pytest_niah.audit.determinism import CONSTANT, DEPENDS, RANDOM, SIGN_FLIP
from pytest_niah.audit.past_window import CUTS, READS, REFUSES


def test_a_faithful_server_at_its_full_window_within_a_minute(audit):
    found = audit(small=False)
    assert found.code == 0, found.err
    data = found.data
    window = data["window"]
    assert (window["declared"], window["specials"], window["document"]) == (256, 2, 254)
    assert window["origin"] == "sentence_bert_config.json beside --tokenizer"
    assert window["measured"] == 254
    assert window["past"] == CUTS  # sentence-transformers cuts at its window, saying nothing
    assert data["determinism"]["repeat"] == 0.0
    assert data["vectors"]["dim"] == 384
    assert data["vectors"]["behaviour"] == DEPENDS
    assert data["batch"] == {"largest": 128, "tried": 128, "status": None, "message": ""}
    assert [(r["tokens"], r["concurrency"]) for r in data["latency"]] == [
        (31, 1),
        (31, 4),
        (127, 1),
        (127, 4),
        (254, 1),
        (254, 4),
    ]
    assert all(
        r["p50"] > 0 and r["p95"] >= r["p50"] and r["tokens_per_s"] > 0 for r in data["latency"]
    )
    assert [(r["tokens"], r["found"]) for r in data["needles"]] == [(63, 4), (127, 4), (222, 4)]
    assert 0 < data["tokens"] <= data["bound"]
    assert f"{data['tokens']:,} tokens in {data['requests']} requests" in found.out
    assert data["seconds"] <= 60
    assert "| window | measured | 254 tokens of text" in found.files["markdown"]


def test_a_server_that_cuts_at_40_tokens_is_measured_token_exact(audit, server):
    server.faults.window = 40
    found = audit()
    window = found.data["window"]
    assert (window["declared"], window["document"], window["measured"]) == (64, 62, 40)
    assert "reads only the first 40 of the 62 tokens it declares" in found.out
    assert window["past"] == CUTS
    # The needle check stays within what the server reads.
    assert [r["tokens"] for r in found.data["needles"]] == [10, 20, 35]


@pytest.mark.parametrize("status", [413, 400])
def test_a_server_refusing_long_inputs_is_named_with_its_status_and_message(audit, server, status):
    server.extra.refuse_over, server.extra.refuse_status = 62, status
    found = audit()
    window = found.data["window"]
    assert window["measured"] == 62  # the probe stays within the window
    assert (window["past"], window["status"]) == (REFUSES, status)
    assert window["message"] == "input exceeds the maximum of 62 tokens"
    assert f"refuses 77 tokens: HTTP {status}: input exceeds the maximum" in found.out


def test_a_server_reading_past_its_declared_window_is_named(audit):
    found = audit("--max-seq-length", "32")  # MiniLM reads 254: more than declared
    assert found.data["window"]["past"] == READS


def test_per_call_noise_shows_in_every_distance_and_the_run_goes_on(audit, server):
    server.faults.noise = 2e-4
    found = audit()
    det = found.data["determinism"]
    assert det["repeat"] > 1e-4 and det["batchmates"] > 1e-4 and det["pair"] > 1e-4
    assert det["refused"] is False
    assert det["verdict"].startswith("a run goes on")


def test_batch_mate_jitter_leaves_the_same_batch_exact(audit, server):
    server.faults.batch_jitter = 3e-3
    det = audit().data["determinism"]
    assert det["repeat"] == 0.0
    assert det["batchmates"] == pytest.approx(3e-3 * 2**0.5, rel=0.5)


@pytest.mark.parametrize(
    ("fault", "behaviour", "verdict"),
    [
        ("random", RANDOM, "do not depend on the input"),
        ("flip_sign", SIGN_FLIP, "flips the sign"),
    ],
)
def test_servers_that_ignore_the_text_are_named(audit, server, fault, behaviour, verdict):
    setattr(server.faults, fault, True)
    found = audit()
    assert found.data["vectors"]["behaviour"] == behaviour
    assert found.data["determinism"]["refused"] is True
    assert verdict in found.data["determinism"]["verdict"]
    assert sum(r["found"] for r in found.data["needles"]) < 12


def test_one_vector_for_every_text_is_named(monkeypatch):
    import numpy as np

    from pytest_niah.audit.determinism import behaviour

    same = np.ones((3, 4))
    assert behaviour(same, same, 0.0) == CONSTANT


def test_the_largest_batch_stops_at_the_first_refusal(audit, server):
    server.extra.max_batch = 5
    batch = audit("--max-batch", "16").data["batch"]
    assert batch["largest"] == 4 and batch["tried"] == 8 and batch["status"] == 413
    assert "exceeds max_client_batch_size 5" in batch["message"]


def test_a_slow_server_shows_in_the_latency(audit, server):
    server.faults.hold = 0.25
    rows = audit().data["latency"]
    assert all(r["p50"] >= 0.25 for r in rows)
    serial, concurrent = rows[0], rows[1]
    assert concurrent["tokens_per_s"] > serial["tokens_per_s"]  # two in flight at once
