"""A local model folder, checked before loading: it exists, holds a model, runs no code of its own.

Code of its own (a module class outside sentence-transformers in ``modules.json``) is
refused unless ``--niah-trust-remote-code`` is given. Nothing here imports torch.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_niah.errors import EmbedderError

# One of these is in every folder sentence-transformers or model2vec can load.
MODEL_MARKERS = ("modules.json", "config.json")
# PyLate's classes that sentence-transformers' MultiVectorEncoder loads as its own, never
# importing pylate: naming them runs no code outside the library.
LIBRARY_ALIASED_MODULES = frozenset({"pylate.models.Dense.Dense"})


def modules_outside_sentence_transformers(folder: Path) -> list[str]:
    """The module classes a folder's ``modules.json`` names outside sentence-transformers.

    Such a class is the folder's own code (``custom_st.Transformer`` beside ``custom_st.py``)
    or another package's: importing it runs that code. sentence-transformers 6 refuses it
    without ``trust_remote_code``; version 5 imported a local folder's class with a warning,
    so pytest-niah checks for itself. A missing or unreadable ``modules.json`` names none
    (loading reports what is wrong with it).
    """
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(modules, list):
        return []
    refs = [m.get("type") for m in modules if isinstance(m, dict)]
    outside = [r for r in refs if isinstance(r, str) and not r.startswith("sentence_transformers.")]
    return [r for r in outside if r not in LIBRARY_ALIASED_MODULES]


def check_model_folder(path: str, *, trust_remote_code: bool) -> None:
    """A local folder that exists, holds a model, and runs no code of its own unless trusted."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise EmbedderError(
            f"model path {path!r} does not exist",
            "give an existing folder that holds a sentence-transformers model, or a hub name "
            "such as 'org/model'",
        )
    if not folder.is_dir():
        raise EmbedderError(
            f"model path {path!r} is not a folder",
            "give the folder that holds the model's files (config.json, the weights, the "
            "tokenizer), not one of those files",
        )
    if not any((folder / marker).is_file() for marker in MODEL_MARKERS):
        raise EmbedderError(
            f"model folder {path!r} holds no model (no {' or '.join(MODEL_MARKERS)})",
            "give the folder a model was saved to with SentenceTransformer.save(...) or "
            "save_pretrained(...)",
        )
    own_code = modules_outside_sentence_transformers(folder)
    if own_code and not trust_remote_code:
        raise EmbedderError(
            f"model folder {path!r} runs its own code ({', '.join(own_code)} in modules.json), "
            "which pytest-niah never allows by default",
            "if you trust it, add --niah-trust-remote-code",
        )
