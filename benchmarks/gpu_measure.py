"""Measuring one model in ``bench_gpu.py``: bare ``encode`` and the engine on the same texts.

Each attention implementation is a row (:class:`gpu_rows.Row`): bare ``encode`` of exactly the
texts the engine embeds, in the engine's batches, then a cold ``run_experiment``; the fastest
of ``--repeat`` runs counts, and an out-of-memory is recorded in the row, never raised.
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_grid import log_line
from bench_grid_steps import grid_config
from gpu_rows import Row
from gpu_setup import DEFAULT, PADDED


def engine_config(args: argparse.Namespace, model: str, spec: str, **changes: Any) -> Any:
    """bench_grid's grid from the command line, for ``model`` and attention ``spec``."""
    attention = spec.removesuffix(PADDED)
    kwargs = {} if attention == DEFAULT else {"attn_implementation": attention}
    grid = argparse.Namespace(**{**vars(args), "model": model})
    return grid_config(grid, model_kwargs=kwargs, **changes)


def _prepared(embedder: Any, spec: str) -> Any:
    """The embedder's loaded model, with the unpadded path off for a ``:padded`` spec."""
    model = embedder.model
    if spec.endswith(PADDED):
        model[0].unpad_inputs = False
    return model


def _reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def _peak(device: str) -> float | None:
    if not device.startswith("cuda"):
        return None
    import torch

    return float(torch.cuda.max_memory_allocated()) / 2**30


def _free(device: str) -> None:
    """Let go of the last model before the next loads: peaks are per row."""
    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def is_oom(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:  # the engine wraps the model's error in its own
        text = str(seen).lower()
        if isinstance(seen, MemoryError) or "out of memory" in text or "can't allocate" in text:
            return True
        seen = seen.__cause__
    return False


def plan_texts(args: argparse.Namespace, model: str) -> list[Any]:
    """Every input the engine embeds, with its text; and one untimed warm-up engine run."""
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.experiment import plan_inputs, run_experiment

    config = engine_config(args, model, DEFAULT)
    embedder = load_embedder(config)
    # The text path: the plan then keeps every input's text, which bare encodes (bench_grid (a)).
    embedder.__dict__["_features"] = None
    with tempfile.TemporaryDirectory() as cache:
        _, inputs = plan_inputs(config, embedder=embedder, cache_dir=cache)
    # Imports and first calls the engine makes once per process: not what a run costs.
    tiny = engine_config(args, model, DEFAULT, lengths=[min(config.lengths)], positions=1)
    with tempfile.TemporaryDirectory() as cache:
        run_experiment(tiny, embedder=embedder, cache_dir=cache, progress=False)
    return inputs


def engine_batches(
    inputs: list[Any], size: int, per_batch: int, max_batch: int
) -> Iterator[list[Any]]:
    """The engine's batches (embed/runner.py): one kind and token count each, budget-sized."""
    groups: dict[tuple[str, int], list[Any]] = {}
    for item in inputs:
        groups.setdefault((item.kind, item.tokens), []).append(item)
    for (_, tokens), group in groups.items():
        step = per_batch if size <= 0 else max(1, min(max_batch, size // max(tokens, 1)))
        for start in range(0, len(group), step):
            yield group[start : start + step]


def bare_encode(args: argparse.Namespace, model_name: str, spec: str, inputs: list[Any]) -> Row:
    """Bare ``encode`` of the engine's texts in the engine's batches."""
    from pytest_niah.embed.batching import MAX_BATCH
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.experiment import budget

    config = engine_config(args, model_name, spec)
    row = Row(model_name, spec, config.dtype)
    runs: list[float] = []
    batch: list[Any] = []
    try:
        embedder = load_embedder(config)
        model = _prepared(embedder, spec)
        row.attention = _attention_label(model, spec)
        row.inputs = "unpad" if getattr(model[0], "can_flatten_inputs", False) else "pad"
        size = budget(config, embedder)
        batches = list(engine_batches(inputs, size, config.batch_size, MAX_BATCH))
        prompts = {kind: embedder.prompt(kind) or None for kind in {i.kind for i in inputs}}
        row.bare = {
            "texts": len(inputs),
            "tokens": sum(i.tokens for i in inputs),
            "batches": len(batches),
            "token_budget": size,
            "parameters": sum(p.numel() for p in model.parameters()),
            "window": model.max_seq_length,
        }
        model.encode(["warm-up"] * 2, show_progress_bar=False)
        for _ in range(args.repeat):
            _reset_peak(args.device)
            started = time.perf_counter()
            for batch in batches:
                model.encode(
                    [i.text for i in batch],
                    batch_size=len(batch),
                    prompt=prompts[batch[0].kind],
                    show_progress_bar=False,
                )
            runs.append(time.perf_counter() - started)
    except Exception as exc:
        row.bare_oom = is_oom(exc)
        where = f" ({len(batch)} texts of {batch[0].tokens:,} tokens)" if batch else ""
        row.error = f"bare{where}: {type(exc).__name__}: {exc}"[:500]
    if runs:
        seconds = min(runs)  # noise only ever adds time
        row.bare |= {
            "seconds": seconds,
            "all_seconds": runs,
            "tokens_per_s": row.bare["tokens"] / seconds,
        }
    row.bare["device_memory_gib"] = _peak(args.device)
    model = embedder = None  # the next row's peak must not hold this model
    _free(args.device)
    return row


def engine_run(args: argparse.Namespace, model_name: str, spec: str, row: Row) -> None:
    """Cold ``run_experiment`` on fresh caches, model loaded and warmed up first."""
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.experiment import RunReport, load_inputs, run_experiment

    config = engine_config(args, model_name, spec)
    runs: list[tuple[float, Any, float | None]] = []
    path = ""
    for _ in range(args.repeat):
        embedder: Any = None
        try:
            with tempfile.TemporaryDirectory() as cache:
                inputs = load_inputs(config, cache_dir=Path(cache))
                embedder = load_embedder(config, memo_dir=Path(cache))
                _prepared(embedder, spec).encode(["warm-up"] * 2, show_progress_bar=False)
                embedder.windows  # noqa: B018 - the model's load is not the engine's cost
                report = RunReport()
                _reset_peak(args.device)
                started = time.perf_counter()
                run_experiment(
                    config, embedder=embedder, inputs=inputs, cache_dir=cache, report=report
                )
                runs.append((time.perf_counter() - started, report, _peak(args.device)))
                path = "text" if embedder.reads_text else "ids"
        except Exception as exc:
            row.engine_oom = is_oom(exc)
            message = f"engine: {type(exc).__name__}: {exc}"[:500]
            row.error = "; ".join(filter(None, [row.error, message]))
            row.engine["device_memory_gib"] = _peak(args.device)
            break
        finally:
            embedder = None
            _free(args.device)
    if not runs:
        return
    seconds, report, peak = min(runs, key=lambda run: run[0])  # noise only ever adds time
    row.inputs = f"{row.inputs}/{path}"
    row.engine = {
        "seconds": seconds,
        "all_seconds": [run[0] for run in runs],
        "split": report.seconds,
        "embedded": report.embedding.embedded,
        "tokens": report.embedding.tokens,
        "tokens_per_s": report.embedding.tokens / seconds,
        "device_memory_gib": peak,
        "notes": report.notes,
    }


def _attention_label(model: Any, spec: str) -> str:
    config = getattr(getattr(model[0], "auto_model", None), "config", None)
    actual = str(getattr(config, "_attn_implementation", None) or spec.removesuffix(PADDED))
    if spec == DEFAULT:
        return f"{actual} (default)"
    return actual + (" padded" if spec.endswith(PADDED) else "")


def measure_model(args: argparse.Namespace, name: str, model: str, specs: list[str]) -> list[Row]:
    """Every attention implementation of one model; the default's own name is not run twice."""
    log_line(f"{name}: building the haystacks the engine embeds")
    try:
        inputs = plan_texts(args, model)
    except Exception as exc:
        failed = Row(name, DEFAULT, str(args.dtype), error=f"planning: {type(exc).__name__}: {exc}")
        failed.bare_oom = is_oom(exc)
        return [failed]
    finally:
        _free(args.device)
    rows: list[Row] = []
    default = ""
    for spec in specs:
        if spec == default:
            continue  # already measured as the default
        log_line(f"{name}, {spec}: bare encode")
        row = bare_encode(args, model, spec, inputs)
        row.model = name
        if spec == DEFAULT:
            default = row.attention.removesuffix(" (default)")
        # The engine runs even where bare ran out of memory: its targets are the engine's.
        log_line(f"{name}, {row.attention}: engine")
        engine_run(args, model, spec, row)
        log_line(f"{name}, {row.attention}: ratio {row.ratio} {row.error[:300]}")
        rows.append(row)
    return rows
