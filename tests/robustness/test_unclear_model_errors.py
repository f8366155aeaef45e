"""Model problems that used to blame the wrong thing (issue 23, U and V): each message names
the real cause and its fix. A device the machine lacks, a window too small for the special
tokens, model keyword arguments a model never reads, a non-positive ``truncate_dim``.
"""

from __future__ import annotations

import pytest

from pytest_niah.embed.device import resolve_placement
from pytest_niah.embed.model_options import check_model_options
from pytest_niah.errors import ConfigError, EmbedderError

MINILM = "packaged-minilm"


def mps_usable() -> bool:
    import torch

    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def test_mps_without_an_apple_gpu_names_the_device_not_the_model_folder(niah_run):
    if mps_usable():
        pytest.skip("this machine has an Apple GPU")
    with pytest.raises(EmbedderError) as info:
        resolve_placement("mps", "auto")
    assert "'mps'" in info.value.problem
    assert "--niah-device=auto (or cpu)" in info.value.hint
    result = niah_run.run("--niah-device=mps", model=MINILM)
    message = output_of_stop(niah_run, result)
    assert "'mps'" in message and "--niah-device=auto" in message
    assert "folder" not in message and "config.json" not in message


def output_of_stop(niah_run, result) -> str:
    """The one message the run stopped with (a usage error at configure time, or a stop)."""
    err = result.stderr.str()
    if "ERROR: pytest-niah:" in err:
        return niah_run.assert_usage_error(result)
    return niah_run.assert_stopped(result, MINILM.replace(":", "-"))


@pytest.mark.parametrize("window", [1, 2])
def test_a_window_too_small_for_the_special_tokens_says_so(niah_run, window):
    """MiniLM adds 2 special tokens ([CLS], [SEP]): a window of 1 or 2 reads no text."""
    result = niah_run.run(f"--niah-max-seq-length={window}", model=MINILM)
    message = output_of_stop(niah_run, result)
    assert f"a window of {window} tokens" in message
    assert "2 special tokens" in message
    assert "--niah-max-seq-length=3 or more" in message
    assert "vocabulary" not in message


# -- model and encode keyword arguments -----------------------------------------------------------


def st_embedder(name: str, **kwargs):
    from pytest_niah.embed.st_backend import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(name, device="cpu", **kwargs)


def static_names() -> list[str]:
    from pytest_niah.embed.models import packaged_folder

    return ["packaged-static", str(packaged_folder("packaged-static"))]  # alias and folder


@pytest.mark.parametrize("kwargs", [{"torch_dtype": "float16"}, {"bogus": 1}])
@pytest.mark.parametrize("name", static_names())
def test_model_kwargs_a_static_model_ignores_are_refused_before_loading(name, kwargs):
    with pytest.raises(ConfigError) as info:
        st_embedder(name, model_kwargs=kwargs)
    assert repr(next(iter(kwargs))) in info.value.problem
    assert "static model" in info.value.problem
    assert "drop --niah-model-kwargs" in info.value.hint
    with pytest.raises(ConfigError):
        check_model_options(name, kwargs, {})  # the configure-time check tells static by name


def test_a_model_kwarg_the_model_does_not_take_is_named_not_the_folder():
    embedder = st_embedder(MINILM, model_kwargs={"bogus_option": 1})
    with pytest.raises(EmbedderError) as info:
        _ = embedder.model
    assert "--niah-model-kwargs" in info.value.problem
    assert "'bogus_option'" in info.value.problem
    assert "remove 'bogus_option'" in info.value.hint
    assert "does not hold a model" not in info.value.hint


@pytest.mark.parametrize("dims", [-1, 0, True, 2.5, "64"])
def test_a_truncate_dim_that_is_not_a_positive_count_is_refused(dims):
    with pytest.raises(ConfigError) as info:
        st_embedder(MINILM, encode_kwargs={"truncate_dim": dims})
    assert f"got {dims!r}" in info.value.problem
    assert "truncate_dim" in info.value.hint
    with pytest.raises(ConfigError):
        check_model_options(MINILM, {}, {"truncate_dim": dims})  # the configure-time check


def test_a_truncate_dim_past_the_models_dimensions_is_refused():
    embedder = st_embedder(MINILM, encode_kwargs={"truncate_dim": 1000})
    with pytest.raises(ConfigError) as info:
        _ = embedder.model
    assert "384 dimensions" in info.value.problem
    assert "give at most 384" in info.value.hint


@pytest.mark.parametrize("dims", ["-1", "0"])
def test_a_non_positive_truncate_dim_stops_the_run_before_any_case(niah_run, dims):
    result = niah_run.run(f'--niah-encode-kwargs={{"truncate_dim": {dims}}}', model=MINILM)
    message = output_of_stop(niah_run, result)
    assert f"truncate_dim must be a whole number of dimensions, 1 or more (got {dims})" in message
