"""How much a pytest-niah run costs on top of embedding its texts, on one grid, on this machine.

    python benchmarks/bench_grid.py [--corpus ../shared/corpus/gutenberg] [--model packaged-minilm]
        [--lengths 128,1024] [--positions N] [--groups dietary,vehicle] [--quick]
        [--naive-sample 60] [--skip b,f] [--json out.json] [--profile prof.out]

Measurements (model load is excluded from every timing and reported on its own):

(a)  bare ``SentenceTransformer.encode(texts, batch_size=32)`` of the unique texts the engine
     embeds (documents and queries), on a freshly loaded model; the haystacks are built
     first with ``HaystackBuilder`` exactly as the engine builds them (not timed in (a)).
(b)  a cold plugin run: ``python -m pytest --niah-model=... --niah-cache-dir=<fresh>`` in a
     subprocess in an empty folder; whole wall time (imports, model load, collection too).
(b') ``run_experiment`` in-process behind a cold ``CachingEmbedder`` (fresh SQLite cache).
(c)  the same again on the now warm caches (in-process; the results cache beside the
     embedding cache, as the plugin uses it, where the engine has one), and the pytest
     subprocess again; (c2), for information, the warm run with the results cache bypassed
     (embeddings cached, haystacks rebuilt).
(d)  naive per-case encoding: ``model.encode([text])`` for question, haystack, needle and
     control of every case, timed on a seeded sample of cases and extrapolated.
(e)  ``pytest --collect-only`` of the full default grid in a subprocess, and whether torch was
     imported by the end of collection (a conftest records ``sys.modules``).
(f)  peak RSS of a subprocess doing only (b'), at two grid sizes.

The script reports; it never gates: it exits 0 whatever the verdicts.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
# Tokenizers keep their default (parallel) threads: that is how users run pytest-niah.

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO.parent / "shared" / "corpus" / "gutenberg"
QUICK = {"lengths": "128,1024,4096", "positions": 4, "groups": "dietary,location,vehicle"}
WORKER_TAG = "NIAH_BENCH_WORKER"
RSS_TAG = "NIAH_BENCH_RSS"
STEPS = ("a", "b", "c", "d", "e", "f")
# pytest in a child interpreter, without writing a .pytest_cache into the bench folders.
PYTEST = (sys.executable, "-m", "pytest", "-p", "no:cacheprovider")

REST = "rest (Python: corpus, haystack assembly, scoring, tables, bootstrap, results I/O)"

# Targets.
TARGET_COLD = 1.10
TARGET_WARM = 0.03
TARGET_NAIVE = 5.0
TARGET_COLLECT_S = 2.0
TARGET_RSS_RATIO = 1.25  # "roughly independent of the number of cases"

# Runs (b') in a child and reports that child's own peak RSS (RUSAGE_CHILDREN of this launcher
# holds exactly one child, so the high-water mark is that child's).
_LAUNCHER = (
    "import json, resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:])\n"
    f"print({RSS_TAG!r}, json.dumps({{'rc': r.returncode, "
    "'maxrss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}), flush=True)\n"
)

_COLLECT_CONFTEST = """\
import json, os, sys

def pytest_collection_finish(session):
    names = ("torch", "sentence_transformers", "transformers", "scipy", "sklearn")
    with open(os.environ["NIAH_BENCH_MODULES"], "w") as handle:
        json.dump({name: name in sys.modules for name in names}, handle)
"""


# ----------------------------------------------------------------------------- helpers


def _log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _timed(action: Callable[[], Any]) -> tuple[dict[str, float], Any]:
    """Run ``action``; its wall seconds and this process's CPU seconds (all threads)."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    value = action()
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}, value


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_child(command: list[str], **kwargs: Any) -> tuple[dict[str, float], Any]:
    """A subprocess's wall seconds and CPU seconds (its own and its waited-for children's)."""
    cpu = _children_cpu()
    wall = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    return {"wall": time.perf_counter() - wall, "cpu": _children_cpu() - cpu}, done


def _forget_corpus() -> None:
    """Drop the package's in-process corpus cache, so each run pays corpus loading as a new
    process would (the folder loader memoizes books by path, size and mtime)."""
    from pytest_niah.inputs import corpus

    reader = getattr(corpus, "_read_stamped", None)
    if reader is not None and hasattr(reader, "cache_clear"):
        reader.cache_clear()


class _Timed:
    """A transparent proxy around an embedder that adds up the wall seconds of its calls."""

    _TIMED = ("encode_documents", "encode_queries", "token_spans")

    def __init__(self, target: Any) -> None:
        self._target = target
        self.seconds = dict.fromkeys(self._TIMED, 0.0)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name not in self._TIMED:
            return value

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start

        return timed


def grid_config(args: argparse.Namespace, **changes: Any) -> Any:
    """The NiahConfig of the grid under test (everything else at its default)."""
    from pytest_niah.config.niah import NiahConfig

    values: dict[str, Any] = {
        "model": args.model,
        "corpus": str(args.corpus),
        "lengths": args.lengths,
        "positions": args.positions,
        "groups": tuple(g for g in (args.groups or "").split(",") if g),
    }
    values.update(changes)
    return NiahConfig(**{k: v for k, v in values.items() if v is not None})


def grid_options(args: argparse.Namespace, *, positions: int | None = None) -> list[str]:
    """The same grid as pytest options."""
    options = [f"--niah-model={args.model}", f"--niah-corpus={args.corpus}"]
    if args.lengths:
        options.append(f"--niah-lengths={args.lengths}")
    if positions or args.positions:
        options.append(f"--niah-positions={positions or args.positions}")
    if args.groups:
        options.append(f"--niah-groups={args.groups}")
    return options


def engine_texts(config: Any, embedder: Any) -> dict[str, Any]:
    """Build the haystacks as ``run_experiment`` does; return them and the texts it embeds."""
    from pytest_niah.experiment import needle_kind, query_text
    from pytest_niah.haystacks.builder import HaystackBuilder
    from pytest_niah.haystacks.chunking import chunk_texts
    from pytest_niah.inputs.corpus import load_corpus
    from pytest_niah.inputs.needles import load_needle_set

    needle_set = load_needle_set(config.needles).select(config.groups or None)
    expansions = None
    if any(a.startswith("expand") for a in config.arms):
        from pytest_niah.inputs.expansions import load_expansions

        expansions = load_expansions(config.expansions)
    corpus = load_corpus(config.corpus)
    kinds = tuple(dict.fromkeys(needle_kind(arm) for arm in config.arms))
    builder = HaystackBuilder(corpus, needle_set, embedder.token_spans, config.seed)
    haystacks = builder.build(
        config.lengths, config.positions, kinds, config.orders, config.controls
    )
    chunk_tokens = config.chunk_tokens or embedder.max_tokens or 512
    chunked = any(s != "whole" for s in config.scoring)
    spans = embedder.token_spans([h.text for h in haystacks]) if chunked else None
    pieces: list[str] = []
    for i, h in enumerate(haystacks):
        for scoring in config.scoring:
            if scoring == "whole":
                pieces.append(h.text)
            else:
                assert spans is not None
                pieces.extend(chunk_texts(h.text, spans[i], chunk_tokens))
    documents = list(dict.fromkeys(pieces))
    seen = set(documents)
    documents += list(
        dict.fromkeys(h.needle for h in haystacks if h.needle and h.needle not in seen)
    )
    queries = list(
        dict.fromkeys(
            query_text(g, arm, expansions) for arm in config.arms for g in needle_set.groups
        )
    )
    return {
        "needle_set": needle_set,
        "haystacks": haystacks,
        "documents": documents,
        "queries": queries,
        "cases": sum(1 for h in haystacks if not h.is_control)
        * len(config.scoring)
        * len(config.arms),
    }


def _results_cache_supported() -> bool:
    import inspect

    from pytest_niah.experiment import run_experiment

    return "results_cache" in inspect.signature(run_experiment).parameters


def timed_run(
    config: Any, inner: Any, cache_path: Path, *, results_cache: bool = True
) -> dict[str, Any]:
    """``run_experiment`` behind a CachingEmbedder on ``cache_path``, as the plugin calls it.

    Where the engine has a results cache, it lives beside the embedding cache (as the
    plugin's session puts it) unless ``results_cache`` is false.
    """
    from pytest_niah.embed.cache import CachingEmbedder, EmbeddingCache
    from pytest_niah.experiment import run_experiment

    _forget_corpus()
    timed_inner = _Timed(inner)
    cache = EmbeddingCache(cache_path)
    kwargs: dict[str, Any] = {}
    reused: list[Path] = []
    if results_cache and _results_cache_supported():
        kwargs = {"results_cache": cache_path.parent / "results", "on_reuse": reused.append}
    try:
        caching = CachingEmbedder(timed_inner, cache)
        outer = _Timed(caching)
        seconds, results = _timed(lambda: run_experiment(config, embedder=outer, **kwargs))
        stats = cache.stats()
    finally:
        cache.close()
    model = timed_inner.seconds["encode_documents"] + timed_inner.seconds["encode_queries"]
    through_cache = outer.seconds["encode_documents"] + outer.seconds["encode_queries"]
    tokenize = outer.seconds["token_spans"]
    return {
        "seconds": seconds,
        "cases": len(results.cases),
        "embedded": caching.embedded,
        "cache": stats,
        "results_reused": bool(reused) if kwargs else None,
        "breakdown": {  # wall seconds
            "model encode (inner embedder)": model,
            "embedding cache (lookups, hashing, SQLite writes)": through_cache - model,
            "tokenizer token_spans (haystack building)": tokenize,
            REST: seconds["wall"] - through_cache - tokenize,
        },
    }


def load_inner(config: Any) -> tuple[Any, float, float]:
    """The engine's embedder for ``config``, loaded; (embedder, load s, fingerprint s)."""
    from pytest_niah.embed.embedders import load_embedder

    embedder = load_embedder(config)
    load_s, _ = _timed(lambda: embedder.model)
    fingerprint_s, _ = _timed(lambda: embedder.fingerprint)
    return embedder, load_s["wall"], fingerprint_s["wall"]


def _rss_kb() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


# ----------------------------------------------------------------------------- worker (f)


def worker(args: argparse.Namespace) -> None:
    """(b') alone in this process; one tagged JSON line on stdout."""
    config = grid_config(args)
    inner, load_s, _ = load_inner(config)
    after_load_kb = _rss_kb()
    run = timed_run(config, inner, Path(args.worker_cache) / "embeddings.sqlite")
    print(
        WORKER_TAG,
        json.dumps(
            {
                "load_s": load_s,
                "seconds": run["seconds"]["wall"],
                "cases": run["cases"],
                "maxrss_after_load_kb": after_load_kb,
                "maxrss_self_kb": _rss_kb(),
            }
        ),
        flush=True,
    )


def _tagged(output: str, tag: str) -> dict[str, Any] | None:
    for line in reversed(output.splitlines()):
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1 :])  # type: ignore[no-any-return]
    return None


def measure_rss(args: argparse.Namespace, positions: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="niah-bench-rss-") as tmp:
        command = [
            sys.executable,
            "-c",
            _LAUNCHER,
            sys.executable,
            str(Path(__file__).resolve()),
            "--model",
            args.model,
            "--corpus",
            str(args.corpus),
            "--positions",
            str(positions),
            "--worker-cache",
            tmp,
        ]
        if args.lengths:
            command += ["--lengths", args.lengths]
        if args.groups:
            command += ["--groups", args.groups]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    launcher = _tagged(done.stdout, RSS_TAG) or {}
    inside = _tagged(done.stdout, WORKER_TAG) or {}
    if not inside:
        _log(f"RSS worker failed (rc {done.returncode}):\n{done.stderr[-3000:]}")
    return {
        "positions": positions,
        "cases": inside.get("cases"),
        "seconds": inside.get("seconds"),
        "peak_rss_mb": (launcher.get("maxrss_kb") or 0) / 1024,
        "rss_after_model_load_mb": (inside.get("maxrss_after_load_kb") or 0) / 1024,
        "rc": launcher.get("rc", done.returncode),
    }


# ----------------------------------------------------------------------------- subprocesses


def pytest_run(args: argparse.Namespace, project: Path, cache_dir: Path) -> dict[str, Any]:
    """(b): the plugin, cold or warm depending on ``cache_dir``; whole wall time."""
    command = [
        *PYTEST,
        *grid_options(args),
        f"--niah-cache-dir={cache_dir}",
        "-q",
    ]
    seconds, done = _run_child(command, cwd=project)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = next(
        (line.strip("= ") for line in reversed(lines) if re.search(r"\d+ (passed|xfailed)", line)),
        lines[-1] if lines else "",
    )
    if done.returncode not in (0, 1):
        _log(f"pytest exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return {**seconds, "rc": done.returncode, "summary": summary}


def collection(args: argparse.Namespace) -> dict[str, Any]:
    """(e): collect the full default grid; pytest's own seconds and whether torch got imported."""
    with tempfile.TemporaryDirectory(prefix="niah-bench-collect-") as tmp:
        project = Path(tmp)
        (project / "conftest.py").write_text(_COLLECT_CONFTEST)
        modules_file = project / "modules.json"
        env = dict(os.environ, NIAH_BENCH_MODULES=str(modules_file))
        command = [
            *PYTEST,
            "--collect-only",
            "-q",
            f"--niah-model={args.model}",
        ]
        seconds, done = _run_child(command, cwd=project, env=env)
        modules = json.loads(modules_file.read_text()) if modules_file.exists() else None
    found = re.search(r"(\d+) tests? collected in ([\d.]+)s", done.stdout)
    if found is None:
        _log(f"collection output not understood (rc {done.returncode}):\n{done.stdout[-2000:]}")
    return {
        "collected": int(found.group(1)) if found else None,
        "pytest_s": float(found.group(2)) if found else None,
        "wall_s": seconds["wall"],
        "cpu_s": seconds["cpu"],
        "modules": modules,
        "rc": done.returncode,
    }


# ----------------------------------------------------------------------------- naive (d)


def naive(model: Any, built: dict[str, Any], sample: int, seed: int) -> dict[str, Any]:
    """One ``encode([text])`` per text of a case: question, haystack, needle, control."""
    haystacks = built["haystacks"]
    controls = {(h.group_id, h.length): h for h in haystacks if h.is_control and h.control == 0}
    questions = {g.id: g.question for g in built["needle_set"].groups}
    cases = [h for h in haystacks if not h.is_control]
    chosen = random.Random(seed).sample(cases, min(sample, len(cases)))
    texts = [
        (questions[h.group_id], h.text, h.needle, controls[h.group_id, h.length].text)
        for h in chosen
    ]

    def run() -> None:
        for case in texts:
            for text in case:
                model.encode([text], convert_to_numpy=True, show_progress_bar=False)

    seconds, _ = _timed(run)
    scale = built["cases"] / len(chosen)
    return {
        "sampled": len(chosen),
        "sample": seconds,
        "cases": built["cases"],
        "per_case_ms": seconds["wall"] * 1000 / len(chosen),
        "wall": seconds["wall"] * scale,  # extrapolated
        "cpu": seconds["cpu"] * scale,
    }


# ----------------------------------------------------------------------------- report


def _secs(value: dict[str, float] | None) -> str:
    if not value:
        return "n/a"
    return f"{value['wall']:9,.2f} s  (cpu {value['cpu']:,.1f} s)"


def _ratio(top: dict[str, float] | None, bottom: dict[str, float] | None, kind: str) -> Any:
    if not top or not bottom or not bottom.get(kind):
        return None
    return top[kind] / bottom[kind]


def verdicts(m: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per target: value, threshold, verdict on wall time (and on CPU time)."""
    rows: list[dict[str, Any]] = []

    def add(name: str, shown: str, threshold: str, ok: bool | None, ok_cpu: Any = "") -> None:
        def word(flag: Any) -> str:
            return "" if flag == "" else "SKIP" if flag is None else "PASS" if flag else "FAIL"

        rows.append(
            {
                "target": name,
                "shown": shown,
                "threshold": threshold,
                "verdict": word(ok),
                "verdict_cpu": word(ok_cpu),
            }
        )

    def ratio_row(name: str, top: Any, bottom: Any, threshold: str, good: Any, fmt: str) -> None:
        wall, cpu = _ratio(top, bottom, "wall"), _ratio(top, bottom, "cpu")
        unit = "x" if name.startswith("(d)") else ""
        shown = (
            "n/a" if wall is None else f"{format(wall, fmt)}{unit} (cpu {format(cpu, fmt)}{unit})"
        )
        add(
            name,
            shown,
            threshold,
            None if wall is None else good(wall),
            None if cpu is None else good(cpu),
        )

    a, cold, warm, naive_s = m.get("a_encode"), m.get("b_prime_cold"), m.get("c_warm"), None
    ratio_row(
        "(b')/(a) cold full run",
        cold,
        a,
        f"<= {TARGET_COLD:.2f}",
        lambda r: r <= TARGET_COLD,
        ".3f",
    )
    ratio_row(
        "(c)/(b') warm re-run",
        warm,
        cold,
        f"<= {TARGET_WARM:.2f}",
        lambda r: r <= TARGET_WARM,
        ".4f",
    )
    naive_s = m.get("d_naive")
    ratio_row(
        "(d)/(b') speed-up over naive",
        naive_s,
        cold,
        f">= {TARGET_NAIVE:g}x",
        lambda r: r >= TARGET_NAIVE,
        ".2f",
    )
    collect = m.get("e_collect") or {}
    seconds = collect.get("pytest_s")
    add(
        "(e) collection of the full grid",
        "n/a"
        if seconds is None
        else f"{seconds:.2f} s (pytest's own; wall {collect['wall_s']:.2f})",
        f"< {TARGET_COLLECT_S:g} s",
        None if seconds is None else seconds < TARGET_COLLECT_S,
    )
    modules = collect.get("modules")
    torch = None if modules is None else bool(modules.get("torch"))
    add(
        "(e) torch imported at collection",
        "n/a" if torch is None else ("yes" if torch else "no"),
        "no",
        None if torch is None else not torch,
    )
    rss = m.get("f_rss") or []
    threshold = f"ratio <= {TARGET_RSS_RATIO:g}"
    if len(rss) == 2 and all(r["peak_rss_mb"] for r in rss):
        small, large = rss
        ratio = large["peak_rss_mb"] / small["peak_rss_mb"]
        shown = (
            f"{small['peak_rss_mb']:.0f} MB @ {small['cases']} cases -> "
            f"{large['peak_rss_mb']:.0f} MB @ {large['cases']} cases (x{ratio:.2f})"
        )
        add("(f) peak RSS vs cases", shown, threshold, ratio <= TARGET_RSS_RATIO)
    else:
        add("(f) peak RSS vs cases", "n/a", threshold, None)
    return rows


def print_report(m: dict[str, Any]) -> None:
    grid = m["grid"]
    print()
    print(
        f"pytest-niah grid benchmark: model {grid['model']}, lengths {grid['lengths']}, "
        f"positions {grid['positions']}, groups {grid['groups'] or 'all'}; "
        f"{m['texts']['documents']} documents + {m['texts']['queries']} queries, "
        f"{m['cases']} cases"
    )
    print(f"machine: {m['machine']}")
    print(f"code: {m.get('code')}")
    print(f"load average at start / end: {m['load_start']} / {m.get('load_end')}")
    rows: list[tuple[str, str]] = [
        ("model import + load, engine embedder (excluded)", f"{m['load_engine_s']:9,.2f} s"),
        ("model fingerprint (hash of weights; excluded)", f"{m['fingerprint_s']:9,.2f} s"),
    ]
    if "load_fresh" in m:
        rows.append(("fresh SentenceTransformer load for (a) (excluded)", _secs(m["load_fresh"])))
    rows.append(("haystack build + text collection (not in (a))", _secs(m["build"])))
    rows.append(("(a) bare model.encode(texts, batch_size=32)", _secs(m.get("a_encode"))))
    if "b_pytest_cold" in m:
        b = m["b_pytest_cold"]
        rows.append(("(b) pytest cold, whole wall time", f"{_secs(b)}  [{b['summary']}]"))
    rows.append(("(b') run_experiment, cold cache", _secs(m.get("b_prime_cold"))))
    for key, value in (m.get("b_prime_breakdown") or {}).items():
        rows.append((f"    {key}", f"{value:9,.2f} s"))
    if "c_warm" in m:
        how = {True: "results cache hit", False: "results cache missed", None: "no results cache"}
        name = f"(c) run_experiment, warm cache ({how[m.get('c_results_reused')]})"
        rows.append((name, _secs(m["c_warm"])))
        for key, value in (m.get("c_breakdown") or {}).items():
            rows.append((f"    {key}", f"{value:9,.2f} s"))
    if "c2_warm_no_results_cache" in m:
        name = "(c2) warm embeddings, results cache bypassed (info)"
        rows.append((name, _secs(m["c2_warm_no_results_cache"])))
        for key, value in (m.get("c2_breakdown") or {}).items():
            rows.append((f"    {key}", f"{value:9,.2f} s"))
    if "c_pytest_warm" in m:
        c = m["c_pytest_warm"]
        rows.append(("(c) pytest warm, whole wall time", f"{_secs(c)}  [{c['summary']}]"))
    if "d_naive" in m:
        d = m["d_naive"]
        rows.append(
            (
                "(d) naive per-case encode, EXTRAPOLATED",
                f"{_secs(d)}  [{d['sampled']} sampled cases took {d['sample']['wall']:.1f} s: "
                f"{d['per_case_ms']:.0f} ms/case x {d['cases']} cases]",
            )
        )
    if "e_collect" in m:
        e = m["e_collect"]
        imported = sorted(k for k, v in (e["modules"] or {}).items() if v)
        rows.append(
            (
                "(e) collect the full default grid",
                f"{e['pytest_s']} s pytest's own, wall {e['wall_s']:.2f} s  [{e['collected']} "
                f"tests; imported by collection end: {', '.join(imported) or 'none of'} "
                f"{'' if imported else ', '.join(e['modules'] or {})}]",
            )
        )
    for r in m.get("f_rss") or []:
        rows.append(
            (
                f"(f) peak RSS of (b') alone, positions {r['positions']}",
                f"{r['peak_rss_mb']:9,.0f} MB  [{r['cases']} cases; "
                f"{r['rss_after_model_load_mb']:.0f} MB after model load; run "
                f"{r['seconds'] or 0:.1f} s]",
            )
        )
    width = max(len(name) for name, _ in rows)
    print()
    print(f"{'measurement':<{width}}  value (wall; cpu = process CPU time, all threads)")
    print(f"{'-' * width}  {'-' * 50}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    print()
    targets = m["targets"]
    width = max(len(t["target"]) for t in targets)
    shown = max(len(t["shown"]) for t in targets)
    print(f"{'target':<{width}}  {'value':<{shown}}  {'threshold':<14}  wall  cpu")
    print(f"{'-' * width}  {'-' * shown}  {'-' * 14}  ----  ----")
    for t in targets:
        print(
            f"{t['target']:<{width}}  {t['shown']:<{shown}}  {t['threshold']:<14}  "
            f"{t['verdict']:<4}  {t['verdict_cpu']}"
        )
    print()


# ----------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", default=None, help=f"folder of books (default {DEFAULT_CORPUS})"
    )
    parser.add_argument("--model", default="packaged-minilm")
    parser.add_argument("--lengths", default=None, help="comma list; default: the plugin's")
    parser.add_argument("--positions", type=int, default=None, help="default: the plugin's (10)")
    parser.add_argument("--groups", default=None, help="comma list of groups or categories")
    parser.add_argument(
        "--quick", action="store_true", help="lengths 128,1024,4096, 4 positions, 3 categories"
    )
    parser.add_argument("--naive-sample", type=int, default=60, help="cases timed for (d)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the (d) sample")
    parser.add_argument(
        "--skip", default="", help=f"comma list of measurements to skip, from {','.join(STEPS)}"
    )
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--profile", default=None, help="write a cProfile of (b') here")
    parser.add_argument("--worker-cache", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.lengths = args.lengths or QUICK["lengths"]
        args.positions = args.positions or QUICK["positions"]
        args.groups = args.groups or QUICK["groups"]
    args.corpus = Path(args.corpus).resolve() if args.corpus else DEFAULT_CORPUS.resolve()
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    return args


def _code_state() -> str:
    """The commit measured, and package files changed since (others edit concurrently)."""

    def git(*command: str) -> str:
        done = subprocess.run(
            ["git", *command], cwd=REPO, capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "pytest_niah").splitlines()
    changed = ", ".join(line[3:] for line in dirty)
    return f"{head}" + (f" + uncommitted {changed}" if changed else " (package clean)")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.worker_cache:
        worker(args)
        return 0
    config = grid_config(args)
    m: dict[str, Any] = {
        "grid": {
            "model": args.model,
            "lengths": list(config.lengths),
            "positions": config.positions,
            "groups": args.groups or "",
            "corpus": str(args.corpus),
        },
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}",
        "load_start": _load(),
        "code": _code_state(),
    }
    with tempfile.TemporaryDirectory(prefix="niah-bench-") as tmp_name:
        tmp = Path(tmp_name)
        _log("loading the engine's embedder")
        inner, m["load_engine_s"], m["fingerprint_s"] = load_inner(config)
        import torch

        m["machine"] += f", torch {torch.__version__} with {torch.get_num_threads()} threads"

        _log("building haystacks as the engine does")
        _forget_corpus()
        m["build"], built = _timed(lambda: engine_texts(config, inner))
        texts = built["documents"] + built["queries"]
        m["texts"] = {"documents": len(built["documents"]), "queries": len(built["queries"])}
        m["cases"] = built["cases"]

        model = None
        if "a" not in args.skip or "d" not in args.skip:
            from sentence_transformers import SentenceTransformer

            from pytest_niah.embed.embedders import resolve_model_name

            device = inner.devices[0] if inner.devices else "cpu"
            m["load_fresh"], model = _timed(
                lambda: SentenceTransformer(resolve_model_name(args.model), device=device)
            )
        if "a" not in args.skip:
            _log(f"(a) bare encode of {len(texts)} texts")
            encode = functools.partial(model.encode, texts, batch_size=32, show_progress_bar=False)
            m["a_encode"], _ = _timed(encode)

        _log("(b') run_experiment, cold cache")
        cache_path = tmp / "inproc" / "embeddings.sqlite"
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            cold = profiler.runcall(lambda: timed_run(config, inner, cache_path))
            profiler.dump_stats(args.profile)
        else:
            cold = timed_run(config, inner, cache_path)
        m["b_prime_cold"] = cold["seconds"]
        m["b_prime_breakdown"] = cold["breakdown"]
        m["b_prime_embedded"] = cold["embedded"]
        if cold["embedded"] != len(texts) or cold["cases"] != built["cases"]:
            _log(
                f"WARNING: the engine embedded {cold['embedded']} texts and scored "
                f"{cold['cases']} cases; (a) encoded {len(texts)} texts for {built['cases']} cases"
            )

        if "c" not in args.skip:
            _log("(c) run_experiment, warm cache")
            warm = timed_run(config, inner, cache_path)
            m["c_warm"] = warm["seconds"]
            m["c_breakdown"] = warm["breakdown"]
            m["c_embedded"] = warm["embedded"]
            m["c_results_reused"] = warm["results_reused"]
            if warm["results_reused"]:
                _log("(c2) run_experiment, warm embedding cache, results cache bypassed")
                again = timed_run(config, inner, cache_path, results_cache=False)
                m["c2_warm_no_results_cache"] = again["seconds"]
                m["c2_breakdown"] = again["breakdown"]

        if "d" not in args.skip:
            _log(f"(d) naive per-case encoding of {args.naive_sample} sampled cases")
            m["d_naive"] = naive(model, built, args.naive_sample, args.seed)
        del model, built, texts
        gc.collect()

        if "b" not in args.skip:
            project = tmp / "project"
            project.mkdir()
            _log("(b) pytest subprocess, cold cache")
            m["b_pytest_cold"] = pytest_run(args, project, tmp / "pytest-cache")
            if "c" not in args.skip:
                _log("(c) pytest subprocess, warm cache")
                m["c_pytest_warm"] = pytest_run(args, project, tmp / "pytest-cache")

        if "e" not in args.skip:
            _log("(e) collection of the full default grid")
            m["e_collect"] = collection(args)

    if "f" not in args.skip:
        positions = config.positions
        small = 4 if positions > 4 else max(1, positions // 2)
        m["f_rss"] = []
        for size in (small, positions):
            _log(f"(f) peak RSS of (b') alone, positions {size}")
            m["f_rss"].append(measure_rss(args, size))

    m["load_end"] = _load()
    m["targets"] = verdicts(m)
    print_report(m)
    if args.json:
        Path(args.json).write_text(json.dumps(m, indent=2, default=str) + "\n")
        _log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
