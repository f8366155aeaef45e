"""Model options a model cannot take: a window it has no setter for, options a lexical
baseline would silently ignore. Each ends in a correct run or a clear error, never a traceback.
"""

from __future__ import annotations

import re

import pytest

from pytest_niah.embed.st_loading import set_window
from pytest_niah.errors import ConfigError

STATIC = "packaged-static"


def test_a_static_model_reads_only_the_window_it_is_given(niah_run):
    """packaged-static has no window of its own (StaticEmbedding.max_seq_length has no
    setter); --niah-max-seq-length cuts its texts instead, like a window."""
    result = niah_run.run("--niah-max-seq-length=64", model=STATIC)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    niah_run.no_traceback(result)
    out = result.stdout.str()
    assert re.search(r"packaged-static, arm onehop, scoring whole: reads 64 tokens", out), out
    assert "at 128 tokens the model reads only the first 64 tokens" in out


class _NoWindow:
    """A stand-in model whose window cannot be set (a property without a setter)."""

    def __init__(self) -> None:
        self.modules = [object()]

    def __getitem__(self, index: int) -> object:
        return self.modules[index]

    @property
    def max_seq_length(self) -> int:
        return 512


def test_a_model_whose_window_cannot_be_set_is_a_clear_error():
    with pytest.raises(ConfigError) as caught:
        set_window("some/model", _NoWindow(), 64)
    message = str(caught.value)
    assert "--niah-max-seq-length=64: the window of model 'some/model' cannot be set" in message
    assert "Fix: drop --niah-max-seq-length for this model" in message


@pytest.mark.parametrize(
    "arg",
    [
        "--niah-max-seq-length=64",
        '--niah-encode-kwargs={"task": "text-matching"}',
        '--niah-model-kwargs={"attn_implementation": "eager"}',
    ],
)
def test_an_option_the_lexical_baseline_would_ignore_is_a_usage_error(niah_run, arg):
    option = arg.split("=", 1)[0]
    result = niah_run.run(arg, "--collect-only")
    niah_run.assert_usage_error(
        result,
        f"{option} has no effect on the lexical baseline (lexical:tfidf)",
        f"Fix: drop {option}, or use it with a neural model",
    )


def test_a_window_with_a_lexical_baseline_beside_a_neural_model_is_accepted(niah_run):
    """The option applies to the other model; the baseline reads whole texts as always."""
    result = niah_run.run(
        "--niah-model=lexical:tfidf",
        f"--niah-model={STATIC}",
        "--niah-max-seq-length=64",
        "--collect-only",
        model=None,
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
