"""Offline, a hub model missing from the Hugging Face cache stops the run at configure (#31).

Loading would find out only after collection, in tens of seconds; the cache folder says
it at once. The model name is made up, so no cache on any machine holds it.
"""

from __future__ import annotations

import pytest

from pytest_niah.embed.hub_cache import check_hub_cache
from pytest_niah.errors import EmbedderError

MISSING = "niah-made-up-org/no-such-model"


def test_a_missing_hub_model_fails_at_configure_with_the_fix(niah, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = niah.run(f"--niah-model={MISSING}", model=None)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert (
        f"pytest-niah: could not load model {MISSING!r}: it is not in the Hugging Face cache" in err
    )
    assert "(HF_HUB_OFFLINE=1)" in err and "Fix: " in err and "pass a local path" in err
    out = result.stdout.str()
    assert "loading inputs" not in result.stderr.str() + out  # no session ran
    assert "collected" not in out and "test_needle" not in out


def test_a_cached_hub_model_passes_the_check(monkeypatch, tmp_path):
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    (tmp_path / "models--org--cached" / "snapshots" / "0123abcd").mkdir(parents=True)
    check_hub_cache("org/cached")
    # A bare name is also looked for where sentence-transformers looks: its own org.
    (tmp_path / "models--sentence-transformers--bare" / "snapshots" / "0123").mkdir(parents=True)
    check_hub_cache("bare")
    with pytest.raises(EmbedderError, match="not in the Hugging Face cache"):
        check_hub_cache("org/not-cached")


def test_online_the_hub_decides(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    check_hub_cache(MISSING)  # no refusal: a download may still find it
