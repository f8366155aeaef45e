"""The --niah-* option table and its precedence rules (pytest_niah.config.options)."""

from __future__ import annotations

import argparse

import pytest

from pytest_niah.config.bounded_numbers import parse_lengths
from pytest_niah.config.gate_expressions import Thresholds
from pytest_niah.config.option import Option
from pytest_niah.config.option_docs import markdown_table
from pytest_niah.config.option_precedence import resolve
from pytest_niah.config.options import BY_NAME, OPTIONS
from pytest_niah.errors import ConfigError

LENGTHS_WITH_ENV = Option(
    "lengths", parse_lengths, (128, 256), "Haystack lengths.", env="NIAH_TEST_LENGTHS"
)


# -- precedence -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cli", "env", "ini", "expected", "source"),
    [
        ((4096,), "512", "256", (4096,), "cli"),  # command line wins over everything
        (None, "512", "256", (512,), "env"),  # then the environment
        (None, None, "256,128", (128, 256), "ini"),  # then ini
        (None, None, ["256", "1024"], (256, 1024), "ini"),  # linelist ini values
        (None, None, None, (128, 256), "default"),  # then the default
        (None, "", "256", (256,), "ini"),  # an empty environment variable counts as unset
        (None, None, "", (128, 256), "default"),  # so does an empty ini value
        (None, None, [], (128, 256), "default"),
    ],
)
def test_resolve_precedence_cli_env_ini_default(cli, env, ini, expected, source):
    environ = {} if env is None else {"NIAH_TEST_LENGTHS": env}
    assert resolve(LENGTHS_WITH_ENV, cli, ini, environ) == (expected, source)


def test_resolve_false_flag_from_ini_and_cli():
    flag = BY_NAME["strict"]
    assert resolve(flag, None, True, {}) == (True, "ini")
    assert resolve(flag, None, None, {}) == (False, "default")


def test_resolve_reads_the_real_corpus_environment_variable():
    corpus = BY_NAME["corpus"]
    assert resolve(corpus, None, "/ini/books", {corpus.env: "/env/books"})[0] == "/env/books"
    assert resolve(corpus, "/cli/books", "/ini/books", {corpus.env: "/env"})[0] == "/cli/books"


def test_resolve_ignores_environment_of_options_without_env(monkeypatch):
    monkeypatch.setenv("NIAH_LENGTHS", "512")
    assert resolve(BY_NAME["lengths"], None, None)[1] == "default"


def test_resolve_bad_env_value_names_the_variable():
    with pytest.raises(ConfigError) as info:
        resolve(LENGTHS_WITH_ENV, None, "128", {"NIAH_TEST_LENGTHS": "12x"})
    assert info.value.problem.startswith("environment variable NIAH_TEST_LENGTHS: '12x'")


@pytest.mark.parametrize(
    ("name", "raw", "what"),
    [
        ("lengths", "abc", "is not a whole number"),
        ("positions", "0", "too small"),
        ("arms", "twohop", "unknown value 'twohop'"),
        ("min-auc", "2", "out of range"),
        ("model-kwargs", "{", "not valid JSON"),
        ("batch-size", "-3", "too small"),
    ],
)
def test_resolve_bad_ini_value_names_the_ini_key(name, raw, what):
    with pytest.raises(ConfigError) as info:
        resolve(BY_NAME[name], None, raw, {})
    assert info.value.problem.startswith(f"ini option niah_{name.replace('-', '_')}: ")
    assert what in info.value.problem


def test_ini_values_parse_like_the_command_line():
    assert resolve(BY_NAME["min-auc"], None, "0.6,128=0.7", {})[0] == Thresholds(
        default=0.6, per_length=((128, 0.7),)
    )
    assert resolve(BY_NAME["max-seq-length"], None, "256", {})[0] == 256
    assert resolve(BY_NAME["groups"], None, ["dietary", "location-01"], {})[0] == (
        "dietary",
        "location-01",
    )


@pytest.mark.parametrize("name", ["json", "save", "model"])
def test_options_without_ini_ignore_ini_values(name):
    option = BY_NAME[name]
    assert option.ini is None
    assert resolve(option, None, "from-ini", {}) == (option.default, "default")


# -- the table ------------------------------------------------------------------------------------


def test_option_names_dests_and_fields_are_unique():
    for attribute in ("name", "dest", "field"):
        values = [getattr(o, attribute) for o in OPTIONS]
        assert len(values) == len(set(values)), attribute


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_the_shown_default_parses_back_to_the_default(option):
    # What --help and the README print is what the option really defaults to.
    if option.default_text is None:
        assert option.parse(option.shown_default().replace("none", "")) == option.default
    else:
        assert option.default in ((), None, "", False)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_help_text_shows_default_and_sources(option):
    text = option.help_text()
    assert f"Default: {option.shown_default()}." in text.replace("%%", "%")
    assert (f"ini {option.dest}" in text) is bool(option.ini)
    assert (f"env {option.env}" in text) is bool(option.env)


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_help_text_is_safe_for_argparse(option):
    # argparse %-formats help; an unescaped % would crash --help.
    parser = argparse.ArgumentParser()
    parser.add_argument(option.flag_name, help=option.help_text(), metavar=option.metavar)
    assert option.flag_name in parser.format_help()


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_value_options_have_a_metavar_and_flags_have_none(option):
    assert (option.metavar is None) is option.flag


def test_argparse_type_reports_a_usage_error_naming_the_fix(capsys):
    option = BY_NAME["positions"]
    parser = argparse.ArgumentParser(prog="pytest")
    parser.add_argument(option.flag_name, dest=option.dest, type=option.argparse_type)
    assert parser.parse_args(["--niah-positions", "5"]).niah_positions == 5
    with pytest.raises(SystemExit):
        parser.parse_args(["--niah-positions", "0"])
    err = capsys.readouterr().err
    assert "--niah-positions: 0 is too small. Fix: give a number of at least 1" in err


def test_markdown_table_has_a_row_per_option_with_its_default():
    rows = markdown_table().splitlines()[2:]
    assert len(rows) == len(OPTIONS)
    for option, row in zip(OPTIONS, rows, strict=True):
        assert row.startswith(f"| `{option.flag_name}`")
        cells = [cell.strip() for cell in row.replace("\\|", "/").split(" | ")]
        assert cells[1] == (f"`{option.dest}`" if option.ini else "")
        shown = option.shown_default().replace("|", "/")
        assert shown.replace("<", "&lt;").replace(">", "&gt;") in cells[3]
