"""The one error family of pytest-niah, and its warnings.

Every error raised on purpose is a :class:`NiahError`: a problem that names the input
(an option, a file, a model, a folder) and a ``hint`` that says how to fix it. The plugin
turns any of them into one usage error before the run, or one stop of the session during
it, and never catches anything broader. Subclasses say which stage of the pipeline failed::

    NiahError
    ├── ConfigError        an option or config value
    ├── InputError         needle sets, expansion sets, books
    │   ├── DataFileError  a JSON data file (file, group, field)
    │   │   ├── NeedleSetError
    │   │   └── ExpansionError
    │   └── CorpusError
    ├── BuildError         haystacks cannot be built (HaystackError)
    ├── ModelError         a model cannot be loaded or used (EmbedderError, EmbeddingError)
    ├── CacheError         the embedding or results cache
    ├── ResultsError       a results, saved-run or baseline file
    ├── CompareError       a comparison that cannot be made
    ├── ShardError         shard parts that do not make one run
    ├── OutputError        a file or folder the run writes
    ├── CliError           a ``pytest-niah`` command's usage error, with its exit code
    └── ExtraMissingError  an optional feature's package is not installed (also an
        │                  ImportError); the hint is the install line of its extra
        └── MatplotlibMissingError   figures: pip install 'pytest-niah[report]'

``SetupError`` (a ConfigError) gathers every problem found before a run into one message
(:func:`numbered_problems`, also the form of one problem per model).

This module imports nothing: every layer may use it.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = [
    "BuildError",
    "CacheError",
    "CliError",
    "CompareError",
    "ConfigError",
    "CorpusError",
    "DataFileError",
    "EmbedderError",
    "EmbeddingError",
    "ExpansionError",
    "ExtraMissingError",
    "HaystackError",
    "InputError",
    "MatplotlibMissingError",
    "ModelError",
    "NeedleSetError",
    "NiahCacheWarning",
    "NiahError",
    "NiahGateWarning",
    "NiahWarning",
    "OutputError",
    "ResultsError",
    "SetupError",
    "ShardError",
]


class NiahError(Exception):
    """A problem pytest-niah reports in one message: what is wrong, then how to fix it.

    Args:
        problem: What is wrong, naming the input (option, file, model, folder).
        hint: The fix, as an instruction; empty when ``problem`` already says it.

    Attributes:
        problem: As given.
        hint: As given.
    """

    def __init__(self, problem: str, hint: str = "") -> None:
        super().__init__(problem, hint)
        self.problem = problem
        self.hint = hint

    def __str__(self) -> str:
        if not self.hint:
            return self.problem
        end = "" if self.problem.endswith((".", "!", "?", ":")) else "."
        return f"{self.problem}{end} Fix: {self.hint}"


_D = TypeVar("_D", bound="DataFileError")


class ConfigError(NiahError):
    """An option or config value is invalid."""


class InputError(NiahError):
    """An input of the experiment (needle set, expansion set, books) cannot be used."""


class DataFileError(InputError):
    """A JSON data file (or mapping) is invalid.

    Attributes:
        source: The file path, ``"builtin"`` or ``"<dict>"``; None if not given.
        group_id: The id (or ``groups[i]`` position) of the offending group, if any.
        field: The JSON path inside the file, if any.
    """

    kind = "Data file"

    def __init__(
        self,
        problem: str,
        hint: str = "",
        *,
        source: str | None = None,
        group_id: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(problem, hint)
        self.source = source
        self.group_id = group_id
        self.field = field

    @classmethod
    def at(
        cls: type[_D],
        source: str,
        problem: str,
        fix: str,
        *,
        group: str | None = None,
        field: str | None = None,
    ) -> _D:
        """The standard message: where (file, group, field), the problem, then the fix."""
        where = [f"{cls.kind} '{source}'"]
        if group is not None:
            where.append(f"group '{group}'")
        if field is not None:
            where.append(f"field '{field}'")
        message = f"{', '.join(where)}: {problem}"
        return cls(message, fix, source=source, group_id=group, field=field)


class NeedleSetError(DataFileError):
    """A needle set (file or mapping) is invalid."""

    kind = "Needle set"


class ExpansionError(DataFileError):
    """An expansion set (file or mapping) is invalid."""

    kind = "Expansion set"


class CorpusError(InputError):
    """A corpus could not be found, read, downloaded or verified."""


class BuildError(NiahError):
    """The grid's haystacks cannot be built from these inputs."""


class HaystackError(BuildError):
    """A haystack cannot be built from this corpus, needle set and tokenizer."""


class ModelError(NiahError):
    """A model cannot be loaded, or what it returned cannot be used."""


class EmbedderError(ModelError):
    """A model could not be loaded or used; the message names the model."""


class EmbeddingError(ModelError):
    """The model returned embeddings that cannot be scored."""


class CacheError(NiahError):
    """The embedding or results cache cannot be used; the message names the file."""


class ResultsError(NiahError):
    """A results, saved-run or baseline file cannot be read."""


class CompareError(NiahError):
    """Two runs cannot be compared, or a comparison expression is invalid."""


class ShardError(NiahError):
    """Shard parts cannot make one run: missing, repeated, foreign or damaged; named."""


class OutputError(NiahError):
    """A file or folder the run writes cannot be written."""


class CliError(NiahError):
    """A ``pytest-niah`` command's problem to report in one line, with its exit code.

    Attributes:
        code: The exit code to return; 4 (a usage error, as pytest's) unless given.
    """

    def __init__(self, problem: str, hint: str = "", *, code: int = 4) -> None:
        super().__init__(problem, hint)
        self.code = code


class ExtraMissingError(NiahError, ImportError):
    """An optional feature needs a package that is not installed; the hint installs it.

    Also an :class:`ImportError`, so code that guards an optional import keeps working.
    """


class MatplotlibMissingError(ExtraMissingError):
    """matplotlib, from the ``report`` extra, is needed to draw figures."""

    def __init__(
        self,
        problem: str = "matplotlib is not installed",
        hint: str = "pip install 'pytest-niah[report]'",
    ) -> None:
        super().__init__(problem, hint)


class SetupError(ConfigError):
    """Several problems found before the run, reported together, each with its fix.

    Attributes:
        errors: The problems, in the order they were found.
    """

    def __init__(self, errors: list[NiahError]) -> None:
        super().__init__(numbered_problems([str(error) for error in errors]))
        self.errors = errors


def numbered_problems(problems: list[str]) -> str:
    """Several problems as one message: ``N problems, each with its fix:``, then one a line."""
    lines = [f"{len(problems)} problems, each with its fix:"]
    lines += [f"  {number}. {problem}" for number, problem in enumerate(problems, 1)]
    return "\n".join(lines)


class NiahWarning(UserWarning):
    """Something the run worked around; the message says what it lost."""


class NiahCacheWarning(NiahWarning):
    """A cache could not be used; the run goes on without it."""


class NiahGateWarning(NiahWarning):
    """A gate's verdict is inconclusive and the policy says to warn, not fail."""
