"""Which device and dtype a model runs in, known without importing torch.

The model's identity (and so every cache key) depends on the device type and dtype, and a
warm run must find its cached results without importing torch. So ``auto`` is resolved by
asking the CUDA driver directly (through ctypes) when torch is not loaded yet, and by torch
when it is. When a model is finally loaded, :func:`check_against_torch` confirms the answer.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from dataclasses import dataclass
from functools import cache
from importlib import metadata

from pytest_niah.config.parsers import parse_devices
from pytest_niah.errors import EmbedderError

_CU_COMPUTE_CAPABILITY_MAJOR = 75  # CUdevice_attribute


@dataclass(frozen=True)
class Placement:
    """Where a model runs.

    Attributes:
        devices: torch device strings, one per process (several for a multi-GPU pool).
        dtype: ``float32``, ``float16`` or ``bfloat16``.
    """

    devices: tuple[str, ...]
    dtype: str

    @property
    def device_type(self) -> str:
        """``cpu``, ``cuda`` or ``mps``: what changes an embedding's bits (not the index)."""
        return self.devices[0].partition(":")[0]


def resolve_placement(device: str, dtype: str) -> Placement:
    """Resolve ``--niah-device`` and ``--niah-dtype`` (``auto`` included) without torch.

    Raises:
        EmbedderError: a CUDA or MPS device is asked for where there is none.
    """
    devices = tuple(_resolve_device(d) for d in parse_devices(device))
    return Placement(devices, _resolve_dtype(dtype, devices[0]))


def _resolve_device(requested: str) -> str:
    if requested == "auto":
        if _cuda_devices() > 0:
            return "cuda"
        return "mps" if _has_mps() else "cpu"
    if requested.startswith("cuda"):
        count = _cuda_devices()
        index = int(requested.partition(":")[2] or 0)
        if index >= count:
            raise EmbedderError(
                f"device {requested!r} was asked for, but "
                + (
                    f"only {count} CUDA device(s) are visible" if count else "no CUDA GPU is usable"
                ),
                "use --niah-device=auto (or cpu), or check CUDA_VISIBLE_DEVICES and the torch "
                "build",
            )
    if requested == "mps" and not _has_mps():
        raise EmbedderError(
            "device 'mps' (an Apple GPU) was asked for, but "
            + (
                "the torch installed here cannot use it"
                if platform.system() == "Darwin"
                else f"this machine ({platform.system()} {platform.machine()}) has none"
            ),
            "use --niah-device=auto (or cpu); mps needs a Mac with Apple silicon and a torch "
            "build with MPS (torch.backends.mps.is_available())",
        )
    return requested


def _resolve_dtype(requested: str, device: str) -> str:
    if requested != "auto":
        return requested
    if not device.startswith("cuda"):
        return "float32"
    index = int(device.partition(":")[2] or 0)
    return "bfloat16" if _compute_capability(index) >= 8 else "float16"


def _cuda_devices() -> int:
    """How many CUDA devices torch would use."""
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    return _driver_device_count()


@cache
def _driver_device_count() -> int:
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return 0
    try:
        if "+cpu" in metadata.version("torch"):
            return 0  # a CPU build of torch never uses a GPU
    except metadata.PackageNotFoundError:
        return 0
    driver = _libcuda()
    if driver is None or driver.cuInit(0) != 0:
        return 0
    count = ctypes.c_int(0)
    if driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def _compute_capability(index: int) -> int:
    torch = sys.modules.get("torch")
    if torch is not None:
        return int(torch.cuda.get_device_capability(index)[0])
    driver = _libcuda()
    major = ctypes.c_int(0)
    device = ctypes.c_int(0)
    if driver is None or driver.cuDeviceGet(ctypes.byref(device), index) != 0:
        return 0
    driver.cuDeviceGetAttribute(ctypes.byref(major), _CU_COMPUTE_CAPABILITY_MAJOR, device)
    return major.value


@cache
def _libcuda() -> ctypes.CDLL | None:
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def _has_mps() -> bool:
    torch = sys.modules.get("torch")
    if torch is not None:
        backend = getattr(torch.backends, "mps", None)
        return bool(backend is not None and backend.is_available())
    return platform.system() == "Darwin" and platform.machine() == "arm64"


def confirmed_by_torch(device: str, dtype: str) -> Placement:
    """:func:`resolve_placement` again once torch is loaded: torch's answer wins.

    Call it after importing torch; a caller whose earlier placement differs must recompute
    everything keyed by it (the model identity).
    """
    import torch  # noqa: F401 - loaded, so the resolution asks torch

    return resolve_placement(device, dtype)
