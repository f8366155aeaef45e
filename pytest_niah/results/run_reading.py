"""Reading a saved run back, or a bare ``--niah-json`` results file: metadata and results.

Every reader of a whole run goes here (the history, ``--niah-compare``, ``pytest-niah
report``); :func:`~pytest_niah.results.run_file.run_header` reads only who saved a run and
when, without validating its results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_niah.errors import ResultsError
from pytest_niah.results.niah_results import NiahResults, read_text
from pytest_niah.results.results_schema import RUN_SCHEMA_VERSION, RunDocument
from pytest_niah.results.results_validation import validate


def load_run(path: Path) -> tuple[dict[str, Any], NiahResults]:
    """Read a saved run, or a bare results file written by ``--niah-json``.

    Returns:
        The run's metadata (every key but ``results``; ``{}`` for a bare results file) and
        its results.

    Raises:
        ResultsError: the file cannot be read or is not a valid run or results file; the
            message names the file, the JSON path and the fix.
    """
    source = str(path)
    text = read_text(path, "saved run")
    if '"run_schema_version"' not in text:
        return {}, NiahResults.from_json(text, source=source)
    run = validate(RunDocument, text, source)
    if run.run_schema_version != RUN_SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: saved-run schema version {run.run_schema_version!r} is not "
            f"{RUN_SCHEMA_VERSION}",
            "save the run again with this pytest-niah version",
        )
    metadata = run.model_dump(mode="json", exclude={"results"})
    return metadata, NiahResults.from_document(run.results, source=source)
