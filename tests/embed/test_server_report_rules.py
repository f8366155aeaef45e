"""What a server says about itself: which fields are kept, redacted, and read as a window
(a scripted client: the bodies are plain to see)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_niah.embed.server_report import ServerReport, info_url

KEY = "sk-secret"


class _Client:
    """Answers ``GET models`` and ``GET .../info`` with the bodies given (``None``: 404)."""

    def __init__(self, models=None, info=None):
        self.bodies = {"models": models, "info": info}
        self.calls: list[str] = []
        self.served: list[str] = []
        self.remote = SimpleNamespace(base="http://host:8000/v1?api-version=2")

    def call(self, method, path, body, *, optional):
        assert method == "GET" and body is None and optional
        self.calls.append(path)
        return self.bodies["models" if path == "models" else "info"]

    def redact(self, text):
        return text.replace(KEY, "***")


def test_info_is_asked_at_the_servers_root_with_its_query():
    assert info_url("http://host:8000/v1?api-version=2") == "http://host:8000/info?api-version=2"
    assert info_url("https://h/a/b/") == "https://h/info"


def test_the_models_entry_is_the_models_own_its_stable_fields_redacted():
    models = {
        "data": [
            "not an entry",
            {"id": "other", "max_model_len": 99},
            {"id": f"echo-{KEY}"},  # a server that echoes the key in what it lists
            {"id": "m", "max_model_len": 512, "owned_by": "x", "root": f"/srv/{KEY}/m"},
        ]
    }
    client = _Client(models=models)
    report = ServerReport(client, "m")
    assert report.listed() == {"id": "m", "max_model_len": 512, "root": "/srv/***/m"}
    assert client.served == ["other", "echo-***", "m"]
    assert report.listed() is not None and client.calls == ["models"]  # asked once


@pytest.mark.parametrize("models", [None, [], {"data": "x"}, {"data": [{"id": "other"}]}])
def test_a_server_that_does_not_list_the_model_lists_nothing(models):
    report = ServerReport(_Client(models=models), "m")
    assert report.listing is None and report.listed() is None


def test_info_keeps_the_models_fields_redacted_and_nothing_else():
    info = {"model_id": f"org/{KEY}", "model_dtype": "float16", "max_batch_tokens": 16384}
    report = ServerReport(_Client(info=info), "m")
    assert report.info == {"model_id": "org/***", "model_dtype": "float16"}
    assert ServerReport(_Client(info={"queue": 3}), "m").info is None
    assert ServerReport(_Client(info=["model_id"]), "m").info is None


@pytest.mark.parametrize(
    ("listed", "info", "window"),
    [
        (512, 8192, (512, "max_model_len")),  # the model's own entry first
        (None, 8192, (8192, "max_input_length")),
        (True, 8192, (8192, "max_input_length")),  # a bool is no length
        (0, 1, (1, "max_input_length")),
        (-5, None, None),
        ("512", "8192", None),
        (None, None, None),
    ],
)
def test_the_window_is_the_first_positive_whole_number_the_server_gives(listed, info, window):
    entry = {"id": "m"} | ({} if listed is None else {"max_model_len": listed})
    body = None if info is None else {"max_input_length": info}
    report = ServerReport(_Client(models={"data": [entry]}, info=body), "m")
    assert report.window() == window
