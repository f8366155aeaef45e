"""The --niah-* option table and its precedence rules (pytest_niah.config.options)."""

from __future__ import annotations

import argparse

import pytest

from pytest_niah.config import niah as cfg
from pytest_niah.config.options import BY_NAME, OPTIONS, PREFIX, Option, resolve

LENGTHS_WITH_ENV = Option(
    "lengths",
    cfg.parse_lengths,
    cfg.DEFAULT_LENGTHS,
    "Haystack lengths.",
    env="NIAH_TEST_LENGTHS",
)


# -- precedence -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cli", "env", "ini", "expected"),
    [
        ((4096,), "512", "256", (4096,)),  # command line wins over everything
        (None, "512", "256", (512,)),  # then the environment
        (None, None, "256,128", (128, 256)),  # then ini
        (None, None, None, cfg.DEFAULT_LENGTHS),  # then the default
        (None, "", "256", (256,)),  # an empty environment variable counts as unset
        (None, None, "", cfg.DEFAULT_LENGTHS),  # so does an empty ini value
        (None, None, [], cfg.DEFAULT_LENGTHS),
    ],
)
def test_resolve_precedence_cli_env_ini_default(cli, env, ini, expected):
    environ = {} if env is None else {"NIAH_TEST_LENGTHS": env}
    assert resolve(LENGTHS_WITH_ENV, cli, ini, environ) == expected


def test_resolve_cli_value_is_returned_as_given():
    # argparse has already parsed (and validated) it through argparse_type.
    sentinel = object()
    assert resolve(LENGTHS_WITH_ENV, sentinel, "128", {"NIAH_TEST_LENGTHS": "512"}) is sentinel


def test_resolve_cli_false_flag_still_wins():
    flag = BY_NAME["strict"]
    assert resolve(flag, False, "true", {}) is False
    assert resolve(flag, None, "true", {}) is True
    assert resolve(flag, None, None, {}) is False


def test_resolve_real_corpus_option_reads_its_environment_variable():
    corpus = BY_NAME["corpus"]
    assert corpus.env == "NIAH_CORPUS"
    assert resolve(corpus, None, "/ini/books", {"NIAH_CORPUS": "/env/books"}) == "/env/books"
    assert resolve(corpus, None, "/ini/books", {}) == "/ini/books"
    assert resolve(corpus, "/cli/books", "/ini/books", {"NIAH_CORPUS": "/env"}) == "/cli/books"
    assert resolve(corpus, None, None, {}) == "gutenberg"


def test_resolve_ignores_environment_of_options_without_env(monkeypatch):
    monkeypatch.setenv("NIAH_LENGTHS", "512")
    assert resolve(BY_NAME["lengths"], None, None) == cfg.DEFAULT_LENGTHS


def test_resolve_defaults_to_os_environ(monkeypatch):
    monkeypatch.setenv("NIAH_TEST_LENGTHS", "1024")
    assert resolve(LENGTHS_WITH_ENV, None, None) == (1024,)


def test_resolve_bad_env_value_names_the_variable():
    with pytest.raises(cfg.ConfigError) as info:
        resolve(LENGTHS_WITH_ENV, None, "128", {"NIAH_TEST_LENGTHS": "12x"})
    message = str(info.value)
    assert message.startswith("environment variable NIAH_TEST_LENGTHS: ")
    assert "'12x' is not a whole number" in message


@pytest.mark.parametrize(
    ("name", "raw", "what"),
    [
        ("lengths", "abc", "is not a whole number"),
        ("positions", "0", "too small"),
        ("arms", "twohop", "unknown value 'twohop'"),
        ("min-auc", "2", "out of range"),
        ("strict", "maybe", "not a boolean"),
        ("model-kwargs", "{", "not valid JSON"),
        ("batch-size", "-3", "too small"),
    ],
)
def test_resolve_bad_ini_value_names_the_ini_key(name, raw, what):
    option = BY_NAME[name]
    with pytest.raises(cfg.ConfigError) as info:
        resolve(option, None, raw, {})
    message = str(info.value)
    assert message.startswith(f"ini option niah_{name.replace('-', '_')}: ")
    assert what in message


def test_resolve_ini_values_parse_like_the_command_line():
    assert resolve(BY_NAME["min-auc"], None, "0.6,128=0.7", {}) == cfg.Thresholds(
        default=0.6, per_length=((128, 0.7),)
    )
    assert resolve(BY_NAME["trust-remote-code"], None, "yes", {}) is True
    assert resolve(BY_NAME["max-seq-length"], None, "256", {}) == 256
    assert resolve(BY_NAME["groups"], None, "dietary, location-01", {}) == (
        "dietary",
        "location-01",
    )


def test_resolve_json_option_has_no_ini():
    option = BY_NAME["json"]
    assert option.ini is False
    assert resolve(option, None, "from-ini.json", {}) == ""


# -- the table ------------------------------------------------------------------------------


def test_option_names_are_unique():
    names = [o.name for o in OPTIONS]
    assert len(names) == len(set(names))
    dests = [o.dest for o in OPTIONS]
    assert len(dests) == len(set(dests))
    assert set(BY_NAME) == set(names)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_help_text_shows_default_and_sources(option):
    text = option.help_text()
    assert "Default:" in text
    assert text.startswith(option.help.replace("%", "%%"))
    if option.ini:
        assert f"ini: niah_{option.name.replace('-', '_')}" in text
    else:
        assert "ini:" not in text
    if option.env:
        assert f"env: {option.env}" in text


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_help_text_is_safe_for_argparse(option):
    # argparse %-formats help; an unescaped % would crash --help.
    parser = argparse.ArgumentParser()
    parser.add_argument(PREFIX + option.name, help=option.help_text())
    assert PREFIX + option.name in parser.format_help()


def test_help_text_renders_defaults_in_option_syntax():
    assert "Default: '128,256,512,1024,2048,4096,8192'." in BY_NAME["lengths"].help_text()
    assert "Default: 'none'." in BY_NAME["min-auc"].help_text()
    assert "Default: 'onehop'." in BY_NAME["arms"].help_text()


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_defaults_are_what_the_parser_would_produce(option):
    assert option.dest == "niah_" + option.name.replace("-", "_")
    if option.flag:
        assert option.default is False


def test_argparse_type_turns_config_error_into_argument_type_error():
    option = BY_NAME["lengths"]
    assert option.argparse_type("256,128") == (128, 256)
    with pytest.raises(argparse.ArgumentTypeError) as info:
        option.argparse_type("abc")
    assert not isinstance(info.value, cfg.ConfigError)
    assert "'abc' is not a whole number" in str(info.value)


def test_argparse_type_reports_a_usage_error(capsys):
    option = BY_NAME["positions"]
    parser = argparse.ArgumentParser(prog="pytest")
    parser.add_argument(PREFIX + option.name, dest=option.dest, type=option.argparse_type)
    assert parser.parse_args(["--niah-positions", "5"]).niah_positions == 5
    with pytest.raises(SystemExit):
        parser.parse_args(["--niah-positions", "0"])
    err = capsys.readouterr().err
    assert "--niah-positions: 0 is too small; it must be at least 1" in err
