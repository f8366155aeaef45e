"""Helpers of the robustness tests: bad inputs must stop a run with one clear message.

Every bad input gets a pytest usage error (exit code 4) before any test runs, never a
traceback: ``ERROR: pytest-niah: ...`` when the option or file is checked at configure time,
or, when it can only be found while the experiment runs (a model that will not load, a
corpus that will not download, a damaged cache), one stop of the session before the first
test -- ``pytest-niah could not run 'LABEL': <problem>. Fix: <hint>`` -- printed once. The
helpers here run pytest with pytest-niah inside a pytester folder and check exactly that.

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

# C extensions imported by in-process pytester runs are kept by tests/conftest.py; see
# _sentence_transformers_imported_first below for the one import that must happen out here.

REPO = Path(__file__).resolve().parents[2]
TINY_CORPUS = REPO / "fixtures" / "corpus" / "tiny"
FIXTURES = REPO / "fixtures" / "robustness"
NEEDLES = FIXTURES / "needles"
CORPORA = FIXTURES / "corpus"

LEXICAL = "lexical:tfidf"
MINILM = "packaged-minilm"
# One group, one length, two positions, both orders: 4 cases and 1 gate. The books are the
# default corpus: the pinned books shipped inside the package.
GRID: dict[str, str] = {
    "lengths": "128",
    "positions": "2",
    "groups": "dietary-01",
}
# A line of a pytest traceback entry ("path/file.py:12: ValueError"); warnings are indented.
TRACEBACK_LOCATION = re.compile(r"^\S.*\.py:\d+: \w*(Error|Exception|Interrupt)\b")
# A summary line that counts tests that ran ("3 passed", "1 failed, 4 xfailed").
RAN = re.compile(r"\b\d+ (passed|failed|xfailed|xpassed|skipped|errors?)\b")
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
    def assert_stopped(result: pytest.RunResult, label: str, *fragments: str) -> str:
        """The session stopped once, before any test: exit code 4, one message naming
        ``label``, every fragment and a fix; no test ran; no traceback, no exception chain.

        Returns:
            The message, from ``pytest-niah could not run`` to its end.
        """
        text = output_of(result)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, text
        head = f"pytest-niah could not run {label!r}: "
        assert text.count("pytest-niah could not run") == 1, f"not exactly one stop in:\n{text}"
        # pytest prints "! _pytest.outcomes.Exit: <message> !"; the message may span lines.
        found = re.search(re.escape(head) + r".*? !$", text, re.DOTALL | re.MULTILINE)
        assert found is not None, f"no stop naming {label!r} in:\n{text}"
        message = found.group(0).removesuffix(" !")
        assert " Fix: " in message, f"no fix in:\n{message}"
        for fragment in fragments:
            assert fragment in message, f"{fragment!r} not in:\n{message}"
        ran = RAN.search(text)
        assert ran is None, f"tests ran ({ran.group(0)!r}) in:\n{text}"
        assert not failure_sections(result), text
        for marker in CHAIN_MARKERS:
            assert marker not in text, text
        assert_no_traceback(result)
        return message


@pytest.fixture(scope="session", autouse=True)
def _sentence_transformers_imported_first() -> None:
    """Import sentence-transformers before any pytester fixture is set up.

    On import it adds finders to ``sys.meta_path`` that serve its deprecated module paths
    (``sentence_transformers.models``, which model folders' modules.json name). pytester
    snapshots ``sys.meta_path`` when its fixture is set up and restores it at teardown and
    after each in-process run, while tests/conftest.py keeps the installed modules: if the
    first import happened after that snapshot, the finders were dropped and every later
    model load in this process failed with "No module named 'sentence_transformers.models'".
    """
    import sentence_transformers  # noqa: F401


@pytest.fixture
def niah_run(pytester: pytest.Pytester) -> NiahRun:
    """Run pytest-niah on a tiny grid inside this test's pytester folder."""
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
