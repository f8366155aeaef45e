"""The engine against bare ``encode`` on a GPU, per attention implementation, in one command.

    python benchmarks/bench_gpu.py [--small] [--device auto|cuda|cpu] [--lengths 128,8192]
        [--positions N] [--groups dietary,vehicle] [--attention auto|sdpa,flash_attention_2]
        [--models standin,packaged-minilm] [--standin-dir DIR] [--json out.json]

It builds the 8K stand-in encoder with ``benchmarks/make_long_standin.py`` (a random
BERT-large-shaped model, 342M parameters, 8,192 positions; ``--small``: a 5M-parameter one
for a CPU) in a temporary folder (``--standin-dir`` builds there once and reuses it), then,
for the stand-in and the packaged MiniLM, and for each attention implementation:

bare s: ``SentenceTransformer.encode`` of exactly the texts the engine embeds (questions,
    haystacks, chunks, needles), batched as the engine batches them (by kind and token count,
    as many per batch as its token budget allows), in the same model, dtype and device. The
    model's load and one warm-up batch are not timed.
engine s: a cold ``run_experiment`` on fresh caches (haystack building, planning, encoding,
    measuring, the embedding cache's writes and the model files' hashing), model loaded and
    warmed up beforehand, as ``bench_grid.py`` (b) times it.
ratio: engine s / bare s. Target: <= 1.10 on a GPU (<= 1.25 on a CPU, bench_grid's target).
bare GiB, engine GiB: peak device memory (``torch.cuda.max_memory_allocated``, model
    weights included) of each; ``n/a`` on a CPU, where the process's peak RSS is printed.
tok/s: tokens the engine embedded per second of engine time.
inputs: how the texts reached the model: bare ``pad`` or ``unpad`` (sentence-transformers'
    unpadded flash-attention path), engine ``ids`` (token ids, no tokenizing) or ``text``.

Attention implementations (``--attention auto``): the model's default (what the engine uses
when not told; sdpa with torch >= 2), ``flash_attention_2`` on a GPU where flash-attn is
installed (sentence-transformers >= 6 then unpads on its own), and ``flash_attention_2:padded``
(that path turned off) where this sentence-transformers has it; on a CPU ``eager`` as well.
Name others explicitly (``--attention eager,sdpa``). Dtype: bfloat16 on a GPU; float32 on a CPU,
where bfloat16 is slow and not what a GPU run measures (``--dtype`` overrides both).

Targets when a GPU is lent: engine <= 1.10x bare in bfloat16, and no out-of-memory at 8,192
tokens with the defaults (default attention, token budget and batch size). An out-of-memory
is a row of the table (verdict OOM), never a crash. The script prints the device, the machine
and one table, writes every number with machine and commit to ``--json``, and exits 0 whatever
it measured (2 on a usage or setup error: a bad option, a missing stand-in builder).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_checks import check_output
from bench_grid import DEFAULT_CORPUS, QUICK, REPO, TARGETS, _log, _verdict

if importlib.util.find_spec("pytest_niah") is None:
    # A bare GPU machine may have the dependencies but not this checkout installed.
    sys.path.insert(0, str(REPO))

STANDIN = "standin"
MINILM = "packaged-minilm"
TOOL = "make_long_standin.py"
# The builder ships beside this script, so a bare clone can run it.
TOOL_PLACE = Path(__file__).resolve().parent / TOOL
DEFAULT = "default"  # the model's own attention: what the engine uses when not told
PADDED = ":padded"  # sentence-transformers' unpadded flash-attention path turned off
LONG = 8192  # the length the no-out-of-memory target is about


class SetupError(Exception):
    """A usage or setup problem: the message says what and how to fix it."""


@dataclass
class Row:
    """One model and attention implementation: bare and engine, or why not."""

    model: str
    attention: str
    dtype: str
    bare: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] = field(default_factory=dict)
    inputs: str = ""
    error: str = ""
    bare_oom: bool = False
    engine_oom: bool = False

    @property
    def ratio(self) -> float | None:
        """Engine seconds over bare seconds, when both ran."""
        if "seconds" in self.bare and "seconds" in self.engine:
            return float(self.engine["seconds"]) / float(self.bare["seconds"])
        return None

    def verdict(self, target: float) -> str:
        """MET or MISSED against ``target``, OOM, or ERROR."""
        if self.bare_oom or self.engine_oom:
            return "OOM"
        if self.ratio is None:
            return "ERROR"
        return "MET" if self.ratio <= target else "MISSED"

    def to_dict(self, target: float) -> dict[str, Any]:
        """Every number of the row, for the JSON."""
        return {
            "model": self.model,
            "attention": self.attention,
            "dtype": self.dtype,
            "inputs": self.inputs,
            "bare": self.bare,
            "engine": self.engine,
            "ratio": self.ratio,
            "target": target,
            "verdict": self.verdict(target),
            "error": self.error,
            "out_of_memory": {"bare": self.bare_oom, "engine": self.engine_oom},
        }


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
    _log(f"building the {'small ' if args.small else ''}stand-in in {folder} with {tool}")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(tool), str(folder), *(["--small"] if args.small else [])],
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


# -- measuring ---------------------------------------------------------------------------------


def _config(args: argparse.Namespace, model: str, spec: str, **changes: Any) -> Any:
    from pytest_niah.config.niah import NiahConfig

    attention = spec.removesuffix(PADDED)
    values: dict[str, Any] = {
        "model": model,
        "corpus": str(args.corpus),
        "lengths": args.lengths,
        "positions": args.positions,
        "groups": args.groups,
        "device": args.device,
        "dtype": args.dtype,
        "model_kwargs": {} if attention == DEFAULT else {"attn_implementation": attention},
    }
    return NiahConfig(**{k: v for k, v in (values | changes).items() if v is not None})


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


def _is_oom(exc: BaseException) -> bool:
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

    config = _config(args, model, DEFAULT)
    embedder = load_embedder(config)
    # The text path: the plan then keeps every input's text, which bare encodes (bench_grid (a)).
    embedder.__dict__["_features"] = None
    with tempfile.TemporaryDirectory() as cache:
        _, inputs = plan_inputs(config, embedder=embedder, cache_dir=cache)
    # Imports and first calls the engine makes once per process: not what a run costs.
    tiny = _config(args, model, DEFAULT, lengths=[min(config.lengths)], positions=1)
    with tempfile.TemporaryDirectory() as cache:
        run_experiment(tiny, embedder=embedder, cache_dir=cache, progress=False)
    return inputs


def _batches(inputs: list[Any], size: int, per_batch: int, max_batch: int) -> Iterator[list[Any]]:
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
    from pytest_niah.embed.loader import load_embedder
    from pytest_niah.embed.runner import MAX_BATCH
    from pytest_niah.experiment import budget

    config = _config(args, model_name, spec)
    row = Row(model_name, spec, config.dtype)
    runs: list[float] = []
    batch: list[Any] = []
    try:
        embedder = load_embedder(config)
        model = _prepared(embedder, spec)
        row.attention = _attention_label(model, spec)
        row.inputs = "unpad" if getattr(model[0], "can_flatten_inputs", False) else "pad"
        size = budget(config, embedder)
        batches = list(_batches(inputs, size, config.batch_size, MAX_BATCH))
        prompts = {kind: embedder._prompt(kind) or None for kind in {i.kind for i in inputs}}
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
        row.bare_oom = _is_oom(exc)
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

    config = _config(args, model_name, spec)
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
            row.engine_oom = _is_oom(exc)
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
    _log(f"{name}: building the haystacks the engine embeds")
    try:
        inputs = plan_texts(args, model)
    except Exception as exc:
        failed = Row(name, DEFAULT, str(args.dtype), error=f"planning: {type(exc).__name__}: {exc}")
        failed.bare_oom = _is_oom(exc)
        return [failed]
    finally:
        _free(args.device)
    rows: list[Row] = []
    default = ""
    for spec in specs:
        if spec == default:
            continue  # already measured as the default
        _log(f"{name}, {spec}: bare encode")
        row = bare_encode(args, model, spec, inputs)
        row.model = name
        if spec == DEFAULT:
            default = row.attention.removesuffix(" (default)")
        # The engine runs even where bare ran out of memory: its targets are the engine's.
        _log(f"{name}, {row.attention}: engine")
        engine_run(args, model, spec, row)
        _log(f"{name}, {row.attention}: ratio {row.ratio} {row.error[:300]}")
        rows.append(row)
    return rows


# -- the table ---------------------------------------------------------------------------------

COLUMNS = (
    ("model", "<"),
    ("attention", "<"),
    ("dtype", "<"),
    ("inputs", "<"),
    ("bare s", ">"),
    ("engine s", ">"),
    ("ratio", ">"),
    ("bare GiB", ">"),
    ("engine GiB", ">"),
    ("tok/s", ">"),
    ("verdict", "<"),
)


def _number(value: Any, digits: int) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def table(rows: list[Row], target: float) -> list[str]:
    """One line per row under a header, columns aligned."""
    cells = [
        [
            row.model,
            row.attention,
            row.dtype,
            row.inputs or "-",
            _number(row.bare.get("seconds"), 2),
            _number(row.engine.get("seconds"), 2),
            _number(row.ratio, 3),
            _number(row.bare.get("device_memory_gib"), 2),
            _number(row.engine.get("device_memory_gib"), 2),
            _number(row.engine.get("tokens_per_s"), 0),
            row.verdict(target),
        ]
        for row in rows
    ]
    names = [name for name, _ in COLUMNS]
    widths = [max(len(line[i]) for line in [names, *cells]) for i in range(len(COLUMNS))]

    def line(values: list[str]) -> str:
        parts = zip(values, COLUMNS, widths, strict=True)
        return "  ".join(f"{value:{align}{width}}" for value, (_, align), width in parts)

    lines = [line(names), "  ".join("-" * w for w in widths), *(line(c) for c in cells)]
    return [text.rstrip() for text in lines]


def verdicts(rows: list[Row], target: float, lengths: tuple[int, ...]) -> list[str]:
    """The two targets: engine over bare per row, no out-of-memory at 8K with the defaults."""
    lines = []
    for row in rows:
        what = f"engine / bare, {row.model}, {row.attention}, {row.dtype}"
        if row.ratio is not None and row.verdict(target) != "OOM":
            lines.append(_verdict(what, row.ratio, target))
        else:
            lines.append(f"{what}: {row.verdict(target)}: {row.error}")
    defaults = [row for row in rows if row.attention.endswith("(default)")]
    for row in defaults:
        what = f"no out-of-memory at {LONG:,} tokens with the defaults, {row.model}"
        if LONG not in lengths:
            lines.append(f"{what}: not measured ({LONG} is not in --lengths)")
        else:
            lines.append(f"{what}: {'MISSED (out of memory)' if row.engine_oom else 'MET'}")
    return lines


# -- main ----------------------------------------------------------------------------------------


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="build the 5M-parameter stand-in")
    parser.add_argument("--device", default="auto", help="auto, cuda, cuda:N or cpu")
    parser.add_argument("--dtype", default="auto", help="auto: bfloat16 on a GPU, float32 on a CPU")
    parser.add_argument("--attention", default="auto", help="auto, or a list: eager,sdpa,...")
    parser.add_argument("--models", default=f"{STANDIN},{MINILM}", help="default: %(default)s")
    parser.add_argument("--corpus", type=str, default=DEFAULT_CORPUS)
    parser.add_argument("--lengths", default=None, help="default: the engine's (128 to 8192)")
    parser.add_argument("--positions", type=int, default=None)
    parser.add_argument("--groups", default=None)
    parser.add_argument("--quick", action="store_true", help="a small grid: " + str(QUICK))
    parser.add_argument("--repeat", type=int, default=1, help="the fastest counts (default: 1)")
    parser.add_argument("--standin-dir", type=Path, default=None, help="build here once, reuse")
    parser.add_argument("--standin-tool", type=Path, default=None, help=f"path of {TOOL}")
    parser.add_argument("--json", type=Path, default=None, help="write every number here")
    args = parser.parse_args(argv)
    if args.quick:
        args.lengths = args.lengths or QUICK["lengths"]
        args.positions = args.positions or QUICK["positions"]
        args.groups = args.groups or QUICK["groups"]
    unknown = set(filter(None, args.models.split(","))) - {STANDIN, MINILM}
    if unknown or args.repeat < 1:
        parser.error(f"--models takes {STANDIN},{MINILM}; --repeat at least 1")
    check_output(parser, "--json", args.json)
    return args


def print_setup(
    args: argparse.Namespace, host: dict[str, Any], grid: dict[str, Any], specs: Sequence[str]
) -> None:
    """The device, machine, versions and grid the rows were measured on."""
    gpu = args.device.startswith("cuda")
    print(
        f"device: {args.device} ({host['device_name']}"
        + (f", {host['device_memory_gib']:.1f} GiB" if gpu else "")
        + f"); machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}; "
        + ", ".join(f"{k} {v}" for k, v in host["versions"].items())
        + f"; commit {commit()}",
        flush=True,
    )
    print(
        f"grid: lengths {','.join(map(str, grid['lengths']))}, positions "
        f"{grid['positions']}, groups {','.join(grid['groups']) or 'all'}; dtype "
        f"{args.dtype}; attention {', '.join(specs)}; repeat {args.repeat}",
        flush=True,
    )


def run_notes(args: argparse.Namespace, rows: Sequence[Row], gpu: bool) -> list[str]:
    """Each model's size and inputs, and on a CPU the process's memory and the dtype."""
    notes = []
    for name in dict.fromkeys(row.model for row in rows):
        bare = next((r.bare for r in rows if r.model == name and r.bare.get("parameters")), None)
        if bare is not None:
            notes.append(
                f"{name}: {bare['parameters'] / 1e6:.0f}M parameters, window {bare['window']}, "
                f"{bare['texts']:,} texts, {bare['tokens']:,} tokens, {bare['batches']:,} batches"
            )
    if not gpu:
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        notes.append(f"CPU: no device memory per row; peak RSS of this process {rss:,.0f} MiB")
        if args.dtype == "float32":
            notes.append("CPU: float32 (bfloat16 on a CPU is slow, not what a GPU run measures)")
    return notes


def run(args: argparse.Namespace) -> dict[str, Any]:
    from pytest_niah.errors import NiahError

    try:  # a bad grid is a usage error, found before anything is built or loaded
        _config(args, MINILM, DEFAULT)
    except NiahError as exc:
        raise SetupError(str(exc)) from exc
    with tempfile.TemporaryDirectory() as scratch:
        models = [m for m in args.models.split(",") if m]
        standin, built = (None, None)
        if STANDIN in models:  # first: a missing builder stops the run before anything loads
            standin, built = standin_folder(args, Path(scratch))
        args.device = resolve_device(args.device)
        if args.dtype == "auto":
            args.dtype = "bfloat16" if args.device.startswith("cuda") else "float32"
        specs, notes = attention_specs(args.attention, args.device)
        host = machine(args.device)
        grid = _config(args, MINILM, DEFAULT).to_dict()
        for per_row in ("model", "model_kwargs"):  # each row says its own
            grid.pop(per_row, None)
        gpu = args.device.startswith("cuda")
        target = TARGETS["cold_gpu"] if gpu else TARGETS["cold_cpu"]
        print_setup(args, host, grid, specs)
        rows: list[Row] = []
        for name in models:
            model = str(standin) if name == STANDIN else name
            label = name
            if name == STANDIN:
                label = "stand-in small" if args.small else "stand-in"
            rows += measure_model(args, label, model, specs)
    if built is not None:
        notes.insert(0, f"stand-in built in {built:.0f} s")
    notes += run_notes(args, rows, gpu)
    print("\n".join(table(rows, target)))
    lines = verdicts(rows, target, tuple(grid["lengths"]))
    print("\n".join(lines))
    print("\n".join(f"note: {n}" for n in dict.fromkeys(notes)), flush=True)
    return {
        "machine": host,
        "commit": commit(),
        "grid": grid,
        "standin": {"small": args.small, "dir": args.standin_dir, "build_seconds": built},
        "target": target,
        "rows": [row.to_dict(target) for row in rows],
        "verdicts": lines,
        "notes": list(dict.fromkeys(notes)),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure, print the table, write the JSON; 2 on a usage or setup error, else 0."""
    args = parse(argv)
    try:
        report = run(args)
    except SetupError as exc:
        print(f"bench_gpu.py: {exc}", file=sys.stderr)
        return 2
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
