"""NiahSession stays a memo: frozen settings, the configs, run state and memo dicts.

Sizes are read from the source, so a session that regrows its option fields, derived paths
or shard work, or a builder that regrows into one long function, fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

import pytest_niah
from pytest_niah.config.niah import ModelSpec, NiahConfig
from pytest_niah.config.run_settings import RunSettings
from pytest_niah.plugin import session as session_module
from pytest_niah.plugin.session import NiahSession

PACKAGE = Path(pytest_niah.__file__).parent
# Where options are read and checked, the model-name checks they call, and the hooks.
OPTION_CHECK_MODULES = (
    "plugin/settings.py",
    "plugin/setting_checks.py",
    "plugin/output_checks.py",
    "plugin/plugin_checks.py",
    "plugin/hooks.py",
    "plugin/collection.py",
    "plugin/run_end.py",
    "embed/models.py",
)


def test_the_session_has_at_most_ten_fields_and_its_module_two_hundred_lines():
    fields = [f.name for f in dataclasses.fields(NiahSession)]
    assert len(fields) <= 10, fields
    lines = len(Path(inspect.getfile(session_module)).read_text(encoding="utf-8").splitlines())
    assert lines <= 200, lines


def test_the_settings_are_one_frozen_object():
    session = NiahSession.create(
        [ModelSpec(label="m", name="lexical:tfidf")], NiahConfig(model="lexical:tfidf")
    )
    assert dataclasses.is_dataclass(session.settings)
    assert type(session.settings).__dataclass_params__.frozen  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        session.settings.strict = True  # type: ignore[misc]
    # No option lives beside the settings: every session field is one of these.
    assert {f.name for f in dataclasses.fields(NiahSession)} & {
        f.name for f in dataclasses.fields(RunSettings)
    } == set()


@pytest.mark.parametrize("module", OPTION_CHECK_MODULES)
def test_the_option_checks_are_short_functions_in_short_modules(module):
    source = (PACKAGE / module).read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 300, module
    long = {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > 60
    }
    assert long == {}, f"{module}: {long}"
