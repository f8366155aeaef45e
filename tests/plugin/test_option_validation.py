"""Every bad value is a pytest usage error that names the option and says how to fix it."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("arg", "option", "fix"),
    [
        (
            "--niah-lengths=abc",
            "--niah-lengths",
            "'abc' is not a whole number of tokens. Fix: give e.g. '128,256,512'",
        ),
        ("--niah-lengths=0", "--niah-lengths", "each length must be 16..1,000,000 tokens"),
        ("--niah-lengths=,", "--niah-lengths", "the list is empty. Fix: give e.g. '128,256,512'"),
        ("--niah-positions=0", "--niah-positions", "give a number of at least 1"),
        ("--niah-positions=many", "--niah-positions", "'many' is not a whole number"),
        (
            "--niah-arms=bogus",
            "--niah-arms",
            "unknown value 'bogus'. Fix: choose from onehop, literal",
        ),
        ("--niah-min-auc=1.5", "--niah-min-auc", "1.5 is out of range. Fix: give a value in 0..1"),
        (
            "--niah-min-auc=128=x",
            "--niah-min-auc",
            "'x' is not a number. Fix: give a value in 0..1",
        ),
        (
            "--niah-min-auc=L128=0.7",
            "--niah-min-auc",
            "no whole-number length before '='. Fix: write e.g. '128=0.7'",
        ),
        ("--niah-min-ratio=-0.1", "--niah-min-ratio", "out of range. Fix: give a value in 0..1"),
        ("--niah-model-kwargs={bad", "--niah-model-kwargs", "is not valid JSON"),
        ("--niah-model-kwargs=[1]", "--niah-model-kwargs", "is JSON but not an object"),
        ("--niah-encode-kwargs={bad", "--niah-encode-kwargs", "give an object such as"),
        (
            "--niah-device=tpu",
            "--niah-device",
            "device 'tpu' is not valid. Fix: use auto, cpu, mps, cuda, cuda:N",
        ),
        ("--niah-dtype=int8", "--niah-dtype", "choose from auto, float32, float16, bfloat16"),
        ("--niah-batch-size=0", "--niah-batch-size", "give a number of at least 1"),
        ("--niah-controls=0", "--niah-controls", "give a number of at least 1"),
        ("--niah-max-seq-length=0", "--niah-max-seq-length", "give a number of at least 1"),
    ],
)
def test_bad_value_is_a_usage_error(niah, arg, option, fix):
    result = niah.run("--collect-only", arg)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"argument {option}:" in err
    assert fix in err
    assert "test_needle" not in result.stdout.str()


def test_bad_value_is_rejected_even_when_inert(niah):
    result = niah.run("--collect-only", "--niah-lengths=abc", model=None)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "argument --niah-lengths:" in result.stderr.str()


@pytest.mark.parametrize(
    ("key", "value", "fix"),
    [
        (
            "niah_lengths",
            "nope",
            "'nope' is not a whole number of tokens. Fix: give e.g. '128,256,512'",
        ),
        ("niah_arms", "literal,bogus", "unknown value 'bogus'. Fix: choose from onehop, literal"),
        ("niah_min_auc", "2", "2 is out of range. Fix: give a value in 0..1"),
        ("niah_strict", "maybe", "'maybe' is not a boolean. Fix: use true or false"),
    ],
)
def test_bad_ini_value_names_the_ini_key(niah, key, value, fix):
    niah.pytester.makeini(f"[pytest]\n{key} = {value}\n")
    result = niah.run("--collect-only", omit=[key.removeprefix("niah_").replace("_", "-")])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"pytest-niah: ini option {key}:" in err
    assert fix in err
