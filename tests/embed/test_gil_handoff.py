"""While a model on a GPU encodes beside the haystack builder, the GIL changes hands quickly."""

from __future__ import annotations

import sys

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.embed.device import Placement
from pytest_niah.embed.gil_handoff import QUICK_SWITCH_S, on_accelerator, quick_handoffs


def near(seconds: float) -> object:
    return pytest.approx(seconds, rel=0.02)  # CPython keeps whole microseconds


class Placed:
    def __init__(self, device: str | None) -> None:
        if device is not None:
            self.placement = Placement((device,), "bfloat16")


@pytest.fixture
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield 0.005
    sys.setswitchinterval(before)


@pytest.mark.parametrize(
    ("device", "inside"),
    [("cuda", QUICK_SWITCH_S), ("cuda:1", QUICK_SWITCH_S), ("mps", QUICK_SWITCH_S),
     ("cpu", 0.005), (None, 0.005)],
)  # fmt: skip
def test_the_interval_is_short_inside_on_an_accelerator_only(default_interval, device, inside):
    with quick_handoffs(Placed(device)):  # type: ignore[arg-type]
        assert sys.getswitchinterval() == near(inside)
    assert sys.getswitchinterval() == near(default_interval)
    assert on_accelerator(Placed(device)) is (inside != default_interval)  # type: ignore[arg-type]


def test_a_shorter_interval_of_the_caller_is_kept(default_interval):
    sys.setswitchinterval(QUICK_SWITCH_S / 2)
    with quick_handoffs(Placed("cuda")):  # type: ignore[arg-type]
        assert sys.getswitchinterval() == near(QUICK_SWITCH_S / 2)
    assert sys.getswitchinterval() == near(QUICK_SWITCH_S / 2)


def test_an_error_inside_gives_the_interval_back(default_interval):
    with pytest.raises(RuntimeError), quick_handoffs(Placed("cuda")):  # type: ignore[arg-type]
        raise RuntimeError("out of memory")
    assert sys.getswitchinterval() == near(default_interval)


@pytest.fixture
def recording_embedder(hashing_embedder):
    class RecordingEmbedder(hashing_embedder):
        """The hashing model, placed on ``device``, noting the switch interval of each batch."""

        def __init__(self, device: str) -> None:
            super().__init__()
            self.placement = Placement((device,), "float32")
            self.intervals: list[float] = []

        def encode(self, inputs):
            self.intervals.append(sys.getswitchinterval())
            return super().encode(inputs)

    return RecordingEmbedder


@pytest.mark.parametrize(("device", "inside"), [("cuda", QUICK_SWITCH_S), ("cpu", 0.005)])
def test_a_run_encodes_with_quick_handoffs_on_a_gpu_only(
    shared_corpus_dir, tmp_path, default_interval, recording_embedder, device, inside
):
    from pytest_niah.experiment import run_experiment

    config = NiahConfig(
        model="hashing", corpus=str(shared_corpus_dir), lengths=(64, 256), positions=2,
        groups=("dietary-01",), arms=("onehop",),
    )  # fmt: skip
    embedder = recording_embedder(device)
    run_experiment(config, embedder=embedder, cache_dir=tmp_path, progress=False)
    probe, *grid = embedder.intervals  # the window probe runs before any haystack is built
    assert probe == near(default_interval)
    assert grid and all(interval == near(inside) for interval in grid)
    assert sys.getswitchinterval() == near(default_interval)


def test_overlapping_runs_share_the_short_interval_and_the_last_puts_it_back(default_interval):
    # Runs in two threads need not end in the order they began.
    first, second = quick_handoffs(Placed("cuda")), quick_handoffs(Placed("cuda"))  # type: ignore[arg-type]
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert sys.getswitchinterval() == near(QUICK_SWITCH_S)  # the second run is still on
    second.__exit__(None, None, None)
    assert sys.getswitchinterval() == near(default_interval)  # not left at 0.2 ms
