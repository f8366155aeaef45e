"""The scores a results file may hold: cosines within -1..1, AUCs and positions within 0..1.

A file edited by hand or damaged can hold values no measurement gives; :func:`check_scores`
refuses them while the file is read (:func:`~pytest_niah.results.results_validation.validate`),
before they reach a verdict.
"""

from __future__ import annotations

import math

from pytest_niah.errors import ResultsError
from pytest_niah.results.results_schema import ResultsDocument

COSINE_SLACK = 1e-3
"""How far past -1..1 a stored cosine may be: float32 rounding, never more."""
_CASE_COSINES = ("cos_qh", "cos_qn", "control_score")
_ROW_COSINES = ("cos_qh", "cos_qn")
_ROW_UNITS = ("auc", "auc_study")


def check_scores(document: ResultsDocument, source: str, what: str, root: str = "$") -> None:
    """Refuse scores no measurement can give, before they reach a verdict.

    A cosine is within -1..1 (:data:`COSINE_SLACK` allowed for rounding); an AUC and a
    needle's relative position are within 0..1; a case's cosines are null only where the
    case names its problem (an invalid embedding), so a valid case with no score is refused.

    Raises:
        ResultsError: naming the file, the JSON path and the value.
    """
    low, high = -1.0 - COSINE_SLACK, 1.0 + COSINE_SLACK
    for index, case in enumerate(document.cases):
        where = f"{root}.cases[{index}]"
        for name in _CASE_COSINES:
            value = getattr(case, name)
            if math.isnan(value):
                if case.problem is None:
                    _bad_score(source, what, f"{where}.{name}", "null in a case without a problem")
            elif not low <= value <= high:
                _bad_score(source, what, f"{where}.{name}", f"{value!r}, not a cosine (-1..1)")
        if not 0.0 <= case.relative_position <= 1.0:
            shown = f"{case.relative_position!r}, not within 0..1"
            _bad_score(source, what, f"{where}.relative_position", shown)
    for index, negative in enumerate(document.negatives):
        for position, value in enumerate(negative.scores):
            if not math.isnan(value) and not low <= value <= high:
                path = f"{root}.negatives[{index}].scores[{position}]"
                _bad_score(source, what, path, f"{value!r}, not a cosine (-1..1)")
    for index, row in enumerate(document.tables):
        for name in _ROW_COSINES:
            value = getattr(row, name)
            if not math.isnan(value) and not low <= value <= high:
                path = f"{root}.tables[{index}].{name}"
                _bad_score(source, what, path, f"{value!r}, not a cosine (-1..1)")
        for name in _ROW_UNITS:
            value = getattr(row, name)
            if not math.isnan(value) and not 0.0 <= value <= 1.0:
                path = f"{root}.tables[{index}].{name}"
                _bad_score(source, what, path, f"{value!r}, not within 0..1")


def _bad_score(source: str, what: str, path: str, problem: str) -> None:
    raise ResultsError(
        f"{source}: not a valid pytest-niah {what}: at {path}, {problem}",
        "the file was edited or damaged; write it again with --niah-json, --niah-save or "
        "NiahResults.save",
    )
