"""The time left a run prints is estimated from the tokens the model reads of each block."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_niah.config.niah import NiahConfig
from pytest_niah.experiment import block_weights, load_inputs, run_experiment


def _config(**changes: object) -> NiahConfig:
    base = NiahConfig(model="packaged-static", lengths=(128, 2048), groups=("dietary-01",))
    return base.replace(**changes)


def test_a_window_caps_what_a_whole_haystack_block_weighs():
    config = _config()
    inputs = load_inputs(config)
    groups = len(inputs.needle_set.groups)
    every = block_weights(config, inputs)
    capped = block_weights(config, inputs, 254)
    assert capped[:groups] == every[:groups]  # 128 tokens: under the window, read whole
    # 2,048 tokens: the model reads 254 of each haystack, so the block weighs 254/2048 as much.
    assert [w * 2048 / 254 for w in capped[groups:]] == every[groups:]
    assert block_weights(config, inputs, 2048) == every  # a window at the length: no cap
    assert block_weights(config, inputs, 2047)[-1] < every[-1]


def test_chunk_scoring_weighs_every_token_again():
    config = _config(scoring=("whole", "chunk-max"), chunk_tokens=128)
    inputs = load_inputs(config)
    groups = len(inputs.needle_set.groups)
    whole = block_weights(_config(), inputs, 254)
    chunked = block_weights(config, inputs, 254)
    assert chunked[groups:] == [w * (254 + 2048) / 254 for w in whole[groups:]]
    assert chunked[:groups] == [2 * w for w in whole[:groups]]


class Recording:
    """A Progress that keeps what the engine tells it."""

    def __init__(self) -> None:
        self.weights: dict[str, list[float]] = {}

    def start(self, phase: str, total: int | None, unit: str, *, weights: Sequence[float] = ()):
        self.weights[phase] = list(weights)

    def advance(self, done: int, tokens: int = 0) -> None:
        pass

    def finish(self, note: str = "") -> None:
        pass


def test_a_windowed_model_run_weighs_its_long_blocks_by_its_window(tmp_path: Path):
    """Found: the packaged MiniLM's full grid said "about 25 min left" a minute into a run that
    took 79 s: an 8,192-token block weighed 32 times a 256-token one, but the model reads 254
    tokens of both. Here the MiniLM cut to 64 tokens (62 read) weighs 128- and 256-token
    blocks alike."""
    config = _config(
        model="packaged-minilm", lengths=(128, 256), positions=1, orders=("default",)
    ).replace(max_seq_length=64)
    recording = Recording()
    run_experiment(config, cache_dir=tmp_path, progress=recording)  # type: ignore[arg-type]
    (weights,) = recording.weights.values()
    groups = len(weights) // 2
    assert weights[:groups] == weights[groups:] and sum(weights) > 0  # not 1:2
    assert weights[0] == 62 * (config.controls + 1)  # dietary-01: a control and a needle
