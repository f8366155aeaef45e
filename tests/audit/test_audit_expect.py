"""``--save`` and ``--expect``: the same deployment passes, a changed one exits 1 and says how."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def expect(audit, saved: str, *args: str, **kwargs):
    return audit("--expect", saved, *args, **kwargs)


@pytest.fixture(scope="module")
def saved_float32(served, tmp_path_factory):
    """The float32 deployment's fingerprint, saved once for the module's tests."""
    from audit_server import KEY_ENV, SECRET, SMALL

    from pytest_niah.cli import main

    path = tmp_path_factory.mktemp("float32") / "float32.json"
    with pytest.MonkeyPatch.context() as patch:
        for name in ("no_proxy", "NO_PROXY"):
            patch.setenv(name, "127.0.0.1,localhost")
        patch.setenv(KEY_ENV, SECRET)
        served.reset()
        argv = [served.model_name(), "--tokenizer", "packaged-minilm", "--api-key-env", KEY_ENV]
        code = main(["audit", *argv, *SMALL, "--save", str(path)])
    assert code == 0
    return str(path)


def test_the_same_deployment_audited_again_exits_0(audit, saved_float32):
    again = expect(audit, saved_float32)
    assert again.code == 0, again.err
    assert "--expect: the same deployment" in again.out
    assert again.data["changes"] == []


def test_the_json_of_an_audit_serves_as_expect_too(audit, tmp_path):
    first = audit()
    path = tmp_path / "audit.json"
    path.write_text(first.files["json"])
    assert expect(audit, str(path)).code == 0


def test_a_bfloat16_restart_is_told_apart_from_float32_and_matches_itself(
    audit, server, saved_float32, tmp_path
):
    server.extra.bfloat16 = True
    server.faults.batch_jitter = 2e-3  # batch-mates move it as much as the dtype does
    changed = expect(audit, saved_float32)
    assert changed.code == 1
    assert "fixed batch's vectors (another dtype or numerics)" in changed.out
    bf16 = tmp_path / "bf16.json"
    bf16.write_text(changed.files["save"])
    assert expect(audit, str(bf16)).code == 0  # the bfloat16 deployment, again
    server.extra.bfloat16, server.faults.batch_jitter = False, 0.0
    assert expect(audit, str(bf16)).code == 1  # back to float32


def test_batch_mate_jitter_alone_is_the_same_deployment(audit, server, tmp_path):
    server.faults.batch_jitter = 3e-3
    first = audit()
    path = tmp_path / "jitter.json"
    path.write_text(first.files["save"])
    assert expect(audit, str(path)).code == 0


def test_a_noisy_server_matches_itself_at_its_own_noise(audit, server, tmp_path):
    server.faults.noise = 2e-4
    first = audit()
    path = tmp_path / "noisy.json"
    path.write_text(first.files["save"])
    assert expect(audit, str(path)).code == 0


def test_another_model_of_the_same_dimension_exits_1(audit, server, saved_float32):
    server.extra.rotate = True
    changed = expect(audit, saved_float32)
    assert changed.code == 1
    assert "fixed batch's vectors (another model)" in changed.out
    assert [c["what"] for c in changed.data["changes"]] == ["fixed batch's vectors (another model)"]
    assert "another model" in changed.files["markdown"]


def test_another_dimension_exits_1(audit, server, saved_float32):
    server.faults.wrong_dim_after = 0  # every answer one dimension short
    changed = expect(audit, saved_float32)
    assert changed.code == 1
    assert "dimension: saved 384, now 383" in changed.out


def test_another_window_exits_1(audit, server, saved_float32):
    server.faults.window = 40
    changed = expect(audit, saved_float32)
    assert changed.code == 1
    assert "measured window: saved 62, now 40" in changed.out


def test_another_model_name_exits_1(audit, served, saved_float32):
    served.names = ("minilm", "other")
    try:
        changed = expect(audit, saved_float32, address=served.model_name("other"))
    finally:
        served.names = ("minilm",)
    assert changed.code == 1
    assert "model name: saved minilm, now other" in changed.out


def test_the_saved_fingerprint_holds_the_fixed_batch_and_no_secret(audit, saved_float32):
    from audit_server import SECRET

    text = Path(saved_float32).read_text()
    data = json.loads(text)
    assert data["kind"] == "pytest-niah endpoint fingerprint"
    assert len(data["vectors"]) == 3 and len(data["vectors"][0]) == 384
    assert SECRET not in text
