"""Device and dtype, resolved without torch; torch agrees once it is loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pytest_niah.embed import device as device_module
from pytest_niah.embed.device import Placement, confirmed_by_torch, resolve_placement
from pytest_niah.errors import ConfigError, EmbedderError


def torch_sees_cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def test_auto_resolves_without_importing_torch_and_torch_agrees():
    code = (
        "import json, sys\n"
        "from pytest_niah.embed.device import resolve_placement\n"
        "placement = resolve_placement('auto', 'auto')\n"
        "assert 'torch' not in sys.modules\n"
        "print(json.dumps([list(placement.devices), placement.dtype]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    devices, dtype = json.loads(done.stdout)
    assert confirmed_by_torch("auto", "auto") == Placement(tuple(devices), dtype)


def test_auto_is_cpu_and_float32_without_a_gpu():
    if torch_sees_cuda():
        placement = resolve_placement("auto", "auto")
        assert placement.devices == ("cuda",)
        assert placement.dtype in {"bfloat16", "float16"}
    else:
        assert resolve_placement("auto", "auto") == Placement(("cpu",), "float32")
        assert confirmed_by_torch("auto", "auto") == Placement(("cpu",), "float32")


@pytest.mark.parametrize("requested", ["cuda", "cuda:0", "cuda:1,cuda:0"])
def test_a_cuda_device_that_is_not_there_is_an_error_with_a_fix(requested):
    if torch_sees_cuda():
        pytest.skip("a CUDA GPU is here")
    with pytest.raises(EmbedderError) as info:
        resolve_placement(requested, "auto")
    message = str(info.value)
    assert "no CUDA GPU is usable" in message and repr(requested.split(",")[0]) in message
    assert "Fix: use --niah-device=auto (or cpu)" in message and "CUDA_VISIBLE_DEVICES" in message


def test_a_cuda_index_past_the_last_gpu_is_an_error(monkeypatch):
    monkeypatch.setattr(device_module, "_cuda_devices", lambda: 2)
    monkeypatch.setattr(device_module, "_compute_capability", lambda index: 8)
    assert resolve_placement("cuda:0,cuda:1", "auto") == Placement(("cuda:0", "cuda:1"), "bfloat16")
    with pytest.raises(EmbedderError, match=r"only 2 CUDA device\(s\) are visible"):
        resolve_placement("cuda:2", "auto")


def test_auto_dtype_on_a_gpu_follows_its_compute_capability(monkeypatch):
    monkeypatch.setattr(device_module, "_cuda_devices", lambda: 1)
    monkeypatch.setattr(device_module, "_compute_capability", lambda index: 7)
    assert resolve_placement("auto", "auto") == Placement(("cuda",), "float16")
    assert resolve_placement("auto", "float32").dtype == "float32"
    assert resolve_placement("cpu", "auto") == Placement(("cpu",), "float32")


def test_explicit_choices_pass_through():
    assert resolve_placement("cpu", "bfloat16") == Placement(("cpu",), "bfloat16")
    assert Placement(("cuda:1", "cuda:0"), "float16").device_type == "cuda"
    assert Placement(("mps",), "float32").device_type == "mps"


def test_hidden_gpus_are_not_probed(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    device_module._driver_device_count.cache_clear()
    try:
        assert device_module._driver_device_count() == 0
    finally:
        monkeypatch.undo()
        device_module._driver_device_count.cache_clear()


@pytest.mark.parametrize("bad", ["gpu", "auto,cpu", "", "cuda:x"])
def test_a_device_that_is_not_one_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="is not valid"):
        resolve_placement(bad, "auto")


@pytest.mark.integration
def test_the_driver_probe_agrees_with_torch_in_a_fresh_process():
    """Without torch loaded, the count comes from libcuda (or the torch build) alone."""
    code = (
        "import sys\n"
        "from pytest_niah.embed.device import _cuda_devices\n"
        "count = _cuda_devices()\n"
        "assert 'torch' not in sys.modules\n"
        "import torch\n"
        "seen = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
        "assert count == seen, (count, seen)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
