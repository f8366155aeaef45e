"""--niah-model: the switch that turns pytest-niah on; repeatable, with LABEL=NAME."""

from __future__ import annotations

import pytest

import pytest_niah.embed.loader
import pytest_niah.experiment

TWO = ("--niah-model=a=lexical:tfidf", "--niah-model=b=lexical:tfidf")


def test_one_model_ids_carry_no_label(niah):
    ids = niah.ids(niah.run("--collect-only", "-q"))
    assert "dietary-01-literal-default-L128-d0" in ids
    assert not any(i.startswith("lexical") for i in ids)


def test_two_models_ids_carry_the_label(niah):
    ids = niah.ids(niah.run("--collect-only", "-q", *TWO))
    per_model = niah.n_cases + niah.n_gates
    assert len(ids) == 2 * per_model
    assert sum(i.startswith("a-") for i in ids) == sum(i.startswith("b-") for i in ids) == per_model
    assert "a-dietary-01-onehop-inverted-L128-d100" in ids
    assert "b-gate-literal-L256" in ids
    selected = niah.ids(niah.run("--collect-only", "-q", *TWO, "-k", "b-location-01-literal"))
    assert len(selected) == 2 * 2 * 3
    assert all(i.startswith("b-location-01-literal-") for i in selected)


def test_two_models_run_with_a_summary_each(niah):
    result = niah.run(*TWO, "--niah-arms=literal", "--niah-lengths=128")
    result.assert_outcomes(passed=2 * (2 * 2 * 3 + 1))
    assert niah.sections(result) == ["a", "b"]
    assert niah.tables(result, "a")["literal"]["title"].startswith("a (lexical:tfidf), arm literal")


def test_default_label_is_id_safe(niah):
    result = niah.run("--niah-arms=literal", "--niah-lengths=128")
    assert niah.sections(result) == ["lexical-tfidf"]


@pytest.mark.parametrize(
    ("models", "label"),
    [
        (("--niah-model=a=lexical:tfidf", "--niah-model=a=lexical:tfidf"), "a"),
        (("--niah-model=lexical:tfidf", "--niah-model=lexical:tfidf"), "lexical-tfidf"),
    ],
)
def test_duplicate_labels_are_a_usage_error(niah, models, label):
    result = niah.run("--collect-only", *models)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*--niah-model: two models share the label '{label}'. Fix: name them apart with LABEL=*"]
    )


def test_unknown_local_path_is_a_usage_error(niah):
    result = niah.run("--niah-model=./no-such-model", "--niah-arms=literal", "--niah-lengths=128")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # Found when the options are read, before collection: one usage error, no test.
    result.stderr.fnmatch_lines(
        [
            "ERROR: pytest-niah: model path './no-such-model' does not exist. Fix: give an "
            "existing folder that holds a sentence-transformers model, or a hub name such as "
            "'org/model'"
        ]
    )
    assert "collected" not in result.stdout.str()


def test_unknown_lexical_kind_is_a_usage_error(niah):
    result = niah.run("--niah-model=lexical:bm25", "--niah-arms=literal", "--niah-lengths=128")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: pytest-niah: lexical baseline 'bm25' is unknown. Fix: use one of lexical:tfidf"]
    )
    assert "collected" not in result.stdout.str()


def test_remote_code_model_without_the_flag_is_a_usage_error(niah):
    result = niah.run("--niah-model=jinaai/jina-embeddings-v3", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*if you trust it, add --niah-trust-remote-code*"])


@pytest.fixture
def experiments(monkeypatch):
    """Labels of the models whose experiment really ran (in-process runs only)."""
    calls = []
    real = pytest_niah.experiment.run_experiment

    def counted(config, **kwargs):
        calls.append(config.model)
        return real(config, **kwargs)

    monkeypatch.setattr(pytest_niah.experiment, "run_experiment", counted)
    return calls


@pytest.fixture
def loads(monkeypatch):
    """Models the run tried to load (in-process runs only)."""
    calls = []
    real = pytest_niah.embed.loader.load_embedder

    def counted(config, **kwargs):
        calls.append(config.model)
        return real(config, **kwargs)

    monkeypatch.setattr(pytest_niah.embed.loader, "load_embedder", counted)
    return calls


def test_the_experiment_runs_once_per_model(niah, experiments):
    result = niah.run(*TWO, "--niah-model=lexical:tfidf")
    result.assert_outcomes(passed=3 * (niah.n_cases // 2 + niah.n_gates), xfailed=3 * 24)
    assert experiments == ["lexical:tfidf"] * 3


def test_a_failing_model_stops_the_run_once(niah, experiments, loads, tmp_path):
    """A folder that looks like a model (config.json) but is broken fails only when loaded:
    the run stops before its first test, with the cause once, not once per test."""
    (tmp_path / "config.json").write_text('{"model_type": "no-such-type"}', encoding="utf-8")
    model = f"--niah-model=broken={tmp_path}"
    result = niah.run(model, "--niah-arms=literal", "--niah-lengths=128")
    cause = niah.stopped(result, "broken")
    assert cause.startswith(f"could not load model '{tmp_path}' (ValueError: "), cause
    assert "no-such-type" in cause
    # Tried once, not once per test.
    assert loads == [str(tmp_path)]
    assert experiments == [str(tmp_path)]


def test_a_stop_names_the_model_that_failed(niah, tmp_path):
    """With several models, the cause names the one that could not run."""
    (tmp_path / "config.json").write_text('{"model_type": "no-such-type"}', encoding="utf-8")
    result = niah.run(
        "--niah-model=fine=lexical:tfidf",
        f"--niah-model=broken={tmp_path}",
        "--niah-arms=literal",
        "--niah-lengths=128",
    )
    assert "could not load model" in niah.stopped(result, "broken")
    assert "could not run 'fine'" not in result.stdout.str()


def test_the_header_names_the_plugin_version_and_the_models(niah):
    from pytest_niah import __version__

    result = niah.run("--collect-only", "-q", "--niah-model=a=lexical:tfidf", "-v")
    result.stdout.fnmatch_lines([f"pytest-niah {__version__}: a=lexical:tfidf"])
    inactive = niah.pytester.runpytest("-p", "no:cacheprovider", "--collect-only")
    assert "pytest-niah" not in inactive.stdout.str()
