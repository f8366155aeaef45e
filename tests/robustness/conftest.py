"""Helpers of the robustness tests: bad inputs must stop a run with one clear message.

Every bad input gets either a pytest usage error (exit code 4, ``ERROR: pytest-niah: ...``)
or, when it can only be found while the experiment runs, a failure of every test whose
message names the input and the fix -- never a traceback. The helpers here run pytest with
pytest-niah inside a pytester folder and check exactly that.

Helpers are fixtures, not imports: every conftest.py of this repo is a module "conftest".
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# torch & co. are imported once by tests/conftest.py (pytester runs need that).

REPO = Path(__file__).resolve().parents[2]
SHARED_CORPUS = REPO.parent / "shared" / "corpus" / "gutenberg"
TINY_CORPUS = REPO / "fixtures" / "corpus" / "tiny"
FIXTURES = REPO / "fixtures" / "robustness"
NEEDLES = FIXTURES / "needles"
CORPORA = FIXTURES / "corpus"

LEXICAL = "lexical:tfidf"
MINILM = "packaged-minilm"
# One group, one length, two positions, both orders: 4 cases and 1 gate.
GRID: dict[str, str] = {
    "corpus": str(SHARED_CORPUS),
    "lengths": "128",
    "positions": "2",
    "groups": "dietary-01",
}
# A line of a pytest traceback entry ("path/file.py:12: ValueError"); warnings are indented.
TRACEBACK_LOCATION = re.compile(r"^\S.*\.py:\d+: \w*(Error|Exception|Interrupt)\b")
SECTION = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$")
# Python's words between chained exceptions.
CHAIN_MARKERS = (
    "The above exception was the direct cause of the following exception",
    "During handling of the above exception, another exception occurred",
)


def output_of(result: pytest.RunResult) -> str:
    """Everything a run printed, stdout then stderr."""
    return result.stdout.str() + "\n" + result.stderr.str()


def assert_no_traceback(result: pytest.RunResult) -> None:
    """No Python or pytest traceback, no internal error: only messages."""
    text = output_of(result)
    assert "Traceback" not in text, text
    assert "INTERNALERROR" not in text, text
    for line in text.splitlines():
        assert not line.startswith("E   "), f"pytest traceback line {line!r} in:\n{text}"
        assert not TRACEBACK_LOCATION.match(line), f"traceback entry {line!r} in:\n{text}"


def failure_sections(result: pytest.RunResult) -> dict[str, str]:
    """The body of every section of the FAILURES block, by test id (``test_x[...]``)."""
    lines = result.outlines
    try:
        start = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ FAILURES =+", line))
    except StopIteration:
        return {}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        if line.startswith("=" * 5):
            break
        match = SECTION.match(line)
        if match:
            current = sections.setdefault(match.group("name"), [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(body) for name, body in sections.items()}


@dataclass
class NiahRun:
    """Runs pytest with pytest-niah in this test's pytester folder and checks its messages."""

    pytester: pytest.Pytester
    grid: dict[str, str] = field(default_factory=lambda: dict(GRID))
    chain_markers: tuple[str, ...] = CHAIN_MARKERS
    sections = staticmethod(failure_sections)
    no_traceback = staticmethod(assert_no_traceback)

    @property
    def path(self) -> Path:
        """The pytester folder (the run's working directory)."""
        return self.pytester.path

    def args(self, *args: str, model: str | None = LEXICAL, grid: bool = True) -> list[str]:
        """``args`` plus the tiny grid's options that ``args`` does not name."""
        named = {a.split("=", 1)[0].removeprefix("--niah-") for a in args if "=" in a}
        out = ["-p", "no:cacheprovider", "-p", "no:benchmark"]
        if model and "model" not in named:
            out.append(f"--niah-model={model}")
        if grid:
            out += [f"--niah-{k}={v}" for k, v in self.grid.items() if k not in named]
        return out + list(args)

    def run(
        self,
        *args: str,
        model: str | None = LEXICAL,
        grid: bool = True,
        subprocess: bool = False,
        timeout: float = 300,
    ) -> pytest.RunResult:
        """Run pytest on the tiny grid: in-process, or in a fresh interpreter."""
        full = self.args(*args, model=model, grid=grid)
        if subprocess:
            return self.pytester.runpytest_subprocess(*full, timeout=timeout)
        return self.pytester.runpytest(*full)

    @staticmethod
    def assert_usage_error(result: pytest.RunResult, *fragments: str) -> str:
        """Exit code 4, every fragment in the error, no test collected, no traceback."""
        err = result.stderr.str()
        assert result.ret == pytest.ExitCode.USAGE_ERROR, output_of(result)
        for fragment in fragments:
            assert fragment in err, f"{fragment!r} not in:\n{err}"
        assert "test_needle" not in result.stdout.str()
        assert_no_traceback(result)
        return err

    @staticmethod
    def assert_run_error(result: pytest.RunResult, *fragments: str) -> dict[str, str]:
        """Every test failed; each failure names every fragment; no traceback anywhere."""
        assert result.ret == pytest.ExitCode.TESTS_FAILED, output_of(result)
        outcomes = result.parseoutcomes()
        assert outcomes.get("failed", 0) > 0, outcomes
        for kind in ("passed", "xfailed", "skipped", "errors", "error"):
            assert outcomes.get(kind, 0) == 0, outcomes
        sections = failure_sections(result)
        assert len(sections) == outcomes["failed"], (sections.keys(), outcomes)
        for name, body in sections.items():
            for fragment in fragments:
                assert fragment in body, f"{fragment!r} not in the failure of {name}:\n{body}"
        assert_no_traceback(result)
        return sections


@pytest.fixture
def niah_run(pytester: pytest.Pytester) -> NiahRun:
    """Run pytest-niah on a tiny grid inside this test's pytester folder."""
    if not (SHARED_CORPUS / "manifest.json").is_file():
        pytest.fail(f"the shared corpus is missing at {SHARED_CORPUS}", pytrace=False)
    return NiahRun(pytester)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No NIAH_* variable of the calling shell steers a run; caches live in this test's folder.

    The hub stays offline; code a model folder brings is copied into this test's folder.
    """
    for name in list(os.environ):
        if name.startswith("NIAH_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NIAH_CACHE_DIR", str(tmp_path / "niah-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "hf-modules"))
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")


# --------------------------------------------------------------------------- model folders

MINILM_TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


def minilm_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 folder."""
    from pytest_niah.embed.models import resolve_model_name

    return Path(resolve_model_name(MINILM))


def copy_minilm(target: Path, *, without: Sequence[str] = ()) -> Path:
    """A copy of the packaged MiniLM folder (weights linked, not copied), minus some files."""
    source = minilm_dir()
    target.mkdir(parents=True)
    for item in source.iterdir():
        if item.name in without:
            continue
        if item.name.endswith((".safetensors", ".bin")):
            (target / item.name).symlink_to(item)
        elif item.is_dir():
            shutil.copytree(item, target / item.name)
        else:
            shutil.copy2(item, target / item.name)
    return target


def tiny_bert(target: Path, fill: float) -> Path:
    """A sentence-transformers model folder: a 1-layer BERT whose every weight is ``fill``.

    ``nan`` gives NaN embeddings; ``0.0`` gives all-zero (zero-norm) embeddings. It uses the
    packaged MiniLM's tokenizer and modules (mean pooling, normalization).
    """
    import torch
    from transformers import BertConfig, BertModel

    source = minilm_dir()
    target.mkdir(parents=True)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    model = BertModel(config)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.fill_(fill)
    model.save_pretrained(target)
    for name in (*MINILM_TOKENIZER_FILES, "modules.json", "sentence_bert_config.json"):
        shutil.copy2(source / name, target / name)
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    pooling["word_embedding_dimension"] = config.hidden_size
    (target / "1_Pooling").mkdir()
    (target / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return target


@pytest.fixture(scope="session")
def minilm_copy():
    """``minilm_copy(target, without=(...))``: a copy of the packaged MiniLM folder."""
    return copy_minilm


@pytest.fixture(scope="session")
def nan_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local model folder whose embeddings are all NaN."""
    return tiny_bert(tmp_path_factory.mktemp("models") / "nan-bert", float("nan"))


@pytest.fixture(scope="session")
def zero_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local model folder whose embeddings are all zero vectors."""
    return tiny_bert(tmp_path_factory.mktemp("models") / "zero-bert", 0.0)
