"""One error family: every exception the package defines is a NiahError that can carry a fix.

The plugin and the command line turn any :class:`NiahError` into one message and catch
nothing broader, so an exception class outside the family would escape them as a traceback.
The only exceptions allowed outside it are the warnings documented in :mod:`pytest_niah.errors`.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import sys

import pytest

import pytest_niah
from pytest_niah import errors
from pytest_niah.errors import (
    ConfigError,
    ExtraMissingError,
    MatplotlibMissingError,
    NiahError,
    NiahWarning,
    SetupError,
)

# Importing ``pytest_niah.__main__`` would run the command line.
SKIPPED_MODULES = {"pytest_niah.__main__"}
DOCUMENTED_WARNINGS = {errors.NiahWarning, errors.NiahCacheWarning, errors.NiahGateWarning}


def package_modules() -> list[str]:
    names = [
        info.name
        for info in pkgutil.walk_packages(pytest_niah.__path__, prefix="pytest_niah.")
        if info.name not in SKIPPED_MODULES
    ]
    return ["pytest_niah", *sorted(names)]


def defined_exceptions() -> list[type[BaseException]]:
    """Every exception class defined at module level anywhere in the package."""
    found: dict[str, type[BaseException]] = {}
    for name in package_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{value.__qualname__}"] = value
    return [found[key] for key in sorted(found)]


EXCEPTIONS = defined_exceptions()
ERRORS = [cls for cls in EXCEPTIONS if cls not in DOCUMENTED_WARNINGS]


def test_the_walk_finds_the_family_and_the_classes_defined_elsewhere() -> None:
    names = {f"{cls.__module__}.{cls.__qualname__}" for cls in EXCEPTIONS}
    assert {f"pytest_niah.errors.{name}" for name in errors.__all__} <= names
    assert "pytest_niah.inputs.expansions.UnknownExpansionGroup" in names
    assert "pytest_niah" in sys.modules


def test_only_the_documented_warnings_are_warnings() -> None:
    warnings = {cls for cls in EXCEPTIONS if issubclass(cls, Warning)}
    assert warnings == DOCUMENTED_WARNINGS
    assert all(issubclass(cls, NiahWarning) for cls in warnings)
    documented = inspect.getdoc(errors) or ""
    assert all(cls.__doc__ for cls in warnings)
    assert "warnings" in documented


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_exception_is_a_niah_error_that_carries_a_fix(cls: type[BaseException]) -> None:
    assert issubclass(cls, NiahError), f"{cls.__module__}.{cls.__qualname__} is no NiahError"
    if cls is SetupError:  # gathers errors: each brings its own fix
        error: NiahError = SetupError([ConfigError("--niah-x: bad", "give a good one")])
        assert "Fix: give a good one" in str(error)
        return
    error = cls("something is wrong", "do this instead")
    assert error.problem == "something is wrong"
    assert error.hint == "do this instead"
    assert str(error) == "something is wrong. Fix: do this instead"
    assert cls.__doc__, "say in the docstring when the error is raised"


def test_every_public_error_is_listed_in_the_module() -> None:
    defined = {cls.__name__ for cls in EXCEPTIONS if cls.__module__ == "pytest_niah.errors"}
    assert defined == set(errors.__all__)


def test_a_missing_extra_names_its_install_line_and_is_still_an_import_error() -> None:
    error = MatplotlibMissingError("the history plot needs matplotlib, which is not installed")
    assert isinstance(error, ExtraMissingError)
    assert isinstance(error, ImportError)  # `except ImportError` guards keep working
    assert error.hint == "pip install 'pytest-niah[report]'"
    assert str(error) == (
        "the history plot needs matplotlib, which is not installed. "
        "Fix: pip install 'pytest-niah[report]'"
    )
    with pytest.raises(ImportError):
        raise MatplotlibMissingError()
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again)) == (MatplotlibMissingError, str(error))


def test_figures_re_export_the_one_class() -> None:
    from pytest_niah.report import figures

    assert figures.MatplotlibMissingError is MatplotlibMissingError
