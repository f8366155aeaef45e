"""Bad input, secrets and limits of ``pytest-niah audit``: exit 4 before any request, no secret."""

from __future__ import annotations

import pytest
from audit_server import KEY_ENV, SECRET

from pytest_niah.cli import main


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(["audit", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["", "--tokenizer", "packaged-minilm"], "the address is empty"),
        (["ftp://x/v1#m", "--tokenizer", "packaged-minilm"], "not a served model's"),
        (["openai+http://127.0.0.1:9/v1", "--tokenizer", "packaged-minilm"], "names no model"),
        (["openai+http://127.0.0.1:9/v1#m"], "--tokenizer is required"),
        (["openai+http://127.0.0.1:9/v1#m", "--tokenizer", "x", "--timeout", "0"], "positive"),
        (["openai+http://127.0.0.1:9/v1#m", "--tokenizer", "x", "--max-batch", "-1"], "1 or more"),
    ],
)
def test_usage_errors_exit_4_with_the_fix(capsys, argv, says):
    code, text = run(capsys, *argv)
    assert code == 4  # pytest's usage error, as every command and the plugin (docs/errors.md)
    assert says in text


def test_bad_outputs_and_expect_files_exit_4_before_any_request(capsys, server, tmp_path):
    model = server.model_name()
    base = [model, "--tokenizer", "packaged-minilm"]
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "other.json").write_text('{"kind": "something else"}')
    cases = [
        (["--json", str(tmp_path / "missing" / "a.json")], "does not exist"),
        (["--markdown", ""], "the file name is empty"),
        (["--save", str(tmp_path)], "is a folder"),
        (["--expect", str(tmp_path / "nothing.json")], "is not a file"),
        (["--expect", str(tmp_path / "bad.json")], "is not JSON"),
        (["--expect", str(tmp_path / "other.json")], "is not a saved audit"),
    ]
    for extra, says in cases:
        code, text = run(capsys, *base, *extra)
        assert (code, says in text) == (4, True), text
    assert server.stats.requests == 0


def test_a_secret_in_the_address_is_refused_and_never_printed(capsys, server):
    address = server.model_name().replace("/v1#", f"/v1?api_key={SECRET}#")
    code, text = run(capsys, address, "--tokenizer", "packaged-minilm", "--api-key-env", KEY_ENV)
    assert code == 4  # pytest's usage error, as every command and the plugin (docs/errors.md)
    assert "holds the API key itself" in text
    assert SECRET not in text
    assert server.stats.requests == 0


def test_a_server_echoing_the_key_never_gets_it_into_output_or_files(audit, server):
    server.extra.refuse_over, server.extra.refuse_echo = 62, True
    found = audit()
    assert found.code == 0, found.err
    assert found.data["window"]["status"] == 413
    assert "request from Bearer ***" in found.data["window"]["message"]
    assert all(SECRET not in text for text in [found.out, found.err, *found.files.values()])
    assert server.stats.authorizations[-1] == f"Bearer {SECRET}"  # it was sent, as a header


def test_a_server_slower_than_the_timeout_is_retried_then_refused(audit, server):
    server.faults.hold = 1.0
    found = audit("--timeout", "0.2", "--retries", "1")
    assert found.code == 4
    assert "failed 2 tries" in found.err
    assert "no response within 0.2 s (--timeout)" in found.err
    assert "raise --timeout (now 0.2 s)" in found.err  # the audit's own options, named
    assert found.data is None  # nothing half-written


def test_a_rate_limited_server_is_retried_as_runs_retry(audit, server):
    server.faults.rate_limit, server.faults.retry_after = 2, "0"
    found = audit()
    assert found.code == 0, found.err
    assert server.stats.requests > found.data["requests"]  # the 429s were sent again


def test_the_help_documents_the_exit_codes(capsys):
    with pytest.raises(SystemExit):
        from pytest_niah.cli import build_parser

        build_parser().parse_args(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "1 the deployment changed" in text and "2 a usage error" in text
