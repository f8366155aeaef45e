"""What a GPU run is measured on: the stand-in model, the device, the attention implementations
to compare, and the machine, library versions and commit written beside the numbers.

``bench_gpu.py`` calls these before it loads anything: a missing stand-in builder or a device
torch cannot see is a :class:`SetupError` (exit 2), never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_grid import REPO, log_line

STANDIN = "standin"
MINILM = "packaged-minilm"
TOOL = "make_long_standin.py"
# The builder ships beside this script, so a bare clone can run it.
TOOL_PLACE = Path(__file__).resolve().parent / TOOL
DEFAULT = "default"  # the model's own attention: what the engine uses when not told
PADDED = ":padded"  # sentence-transformers' unpadded flash-attention path turned off


class SetupError(Exception):
    """A usage or setup problem: the message says what and how to fix it."""


# -- the stand-in ------------------------------------------------------------------------------


def find_tool(given: Path | None) -> Path:
    """The stand-in builder: ``--standin-tool``, else the one beside this script."""
    place = given if given is not None else TOOL_PLACE
    if place.is_file():
        return place
    raise SetupError(
        f"the stand-in builder {TOOL} is missing: looked for {place}. Fix: pass "
        f"--standin-tool=PATH to a builder (the project ships {TOOL_PLACE}), or pass "
        "--standin-dir=DIR holding a stand-in built before"
    )


def standin_folder(args: argparse.Namespace, scratch: Path) -> tuple[Path, float | None]:
    """A built stand-in, and the seconds its build took (``None``: reused)."""
    folder = args.standin_dir or scratch / "standin"
    if (folder / "modules.json").is_file():
        return folder, None
    tool = find_tool(args.standin_tool)
    log_line(f"building the {'small ' if args.small else ''}stand-in in {folder} with {tool}")
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            str(tool),
            str(folder),
            *(["--small"] if args.small else []),
            *(["--tokenizer", str(args.standin_tokenizer)] if args.standin_tokenizer else []),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or not (folder / "modules.json").is_file():
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise SetupError(f"{tool} failed to build the stand-in (exit {done.returncode}):\n{tail}")
    return folder, time.perf_counter() - started


# -- device, attention, machine ----------------------------------------------------------------


def resolve_device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise SetupError(f"--device={requested}: torch sees no CUDA GPU here. Fix: --device=cpu")
    return requested


def attention_specs(requested: str, device: str) -> tuple[list[str], list[str]]:
    """The attention implementations to run, and a note for each one left out."""
    import torch

    flash, why = _flash_available(device)
    unpad = _st_has_unpadding()
    if requested == "auto":
        specs = [DEFAULT]
        if not device.startswith("cuda"):
            specs.append("eager")  # the reference; cheap at a CPU's lengths
        specs += ["flash_attention_2"] + (["flash_attention_2" + PADDED] if unpad else [])
    else:
        specs = [DEFAULT, *(s.strip() for s in requested.split(",") if s.strip())]
    notes, out = [], []
    for spec in dict.fromkeys(specs):
        name = spec.removesuffix(PADDED)
        if name.startswith("flash_attention") and not flash:
            notes.append(f"{spec}: not run ({why})")
        elif spec.endswith(PADDED) and not unpad:
            notes.append(f"{spec}: not run (this sentence-transformers has no unpadded path)")
        elif name == "sdpa" and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            notes.append("sdpa: not run (needs torch >= 2)")
        else:
            out.append(spec)
    if not unpad:
        notes.append("sentence-transformers here has no unpadded path (unpad_inputs, >= 6)")
    return out, notes


def _flash_available(device: str) -> tuple[bool, str]:
    if not device.startswith("cuda"):
        return False, "flash attention needs a CUDA GPU"
    from transformers.utils import is_flash_attn_2_available

    if not is_flash_attn_2_available():
        return False, "flash-attn is not installed or does not fit this GPU: pip install flash-attn"
    return True, ""


def _st_has_unpadding() -> bool:
    # sentence-transformers 6 unpads text for flash attention by itself (Transformer.unpad_inputs).
    try:
        from sentence_transformers.base.modules.transformer import Transformer
    except ImportError:
        return False
    return hasattr(Transformer, "unpad_inputs")


def machine(device: str) -> dict[str, Any]:
    """The machine, device and library versions, for the header and the JSON."""
    from importlib import metadata

    import torch

    versions = {}
    for name in ("torch", "transformers", "sentence-transformers", "flash-attn"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    out: dict[str, Any] = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "device": device,
        "versions": versions,
    }
    if device.startswith("cuda"):
        index = torch.device(device).index or 0
        out["device_name"] = torch.cuda.get_device_name(index)
        out["device_memory_gib"] = torch.cuda.get_device_properties(index).total_memory / 2**30
        out["cuda"] = torch.version.cuda
    else:
        out["device_name"] = _cpu_name()
    return out


def _cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine()


def commit() -> str:
    """The checkout's commit, read from .git: a GPU machine may have no git program."""
    git = REPO / ".git"
    with contextlib.suppress(OSError, IndexError):
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = Path(git.read_text().partition(":")[2].strip())
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:7]
        ref = head[5:]
        common = git / "commondir"
        roots = [git] + ([git / common.read_text().strip()] if common.is_file() else [])
        for root in roots:
            if (root / ref).is_file():
                return (root / ref).read_text().strip()[:7]
            packed = root / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split()[0][:7]
    return "unknown"
