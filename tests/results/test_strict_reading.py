"""Results files, saved runs and baselines are read as strictly as needle sets (issue 23).

One strict JSON reader (:mod:`pytest_niah.config.strict_json`) reads every JSON the
project reads: a repeated key, ``NaN``/``Infinity`` and a number too large are refused, a
byte order mark is dropped alike; then scores no measurement can give are refused.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from niah_synthetic import results

from pytest_niah.errors import NeedleSetError, ResultsError
from pytest_niah.inputs.needles import load_needle_set
from pytest_niah.results.niah_results import NiahResults
from pytest_niah.results.run_reading import load_run
from pytest_niah.results.storage import RunStore

BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def run() -> NiahResults:
    return results()


@pytest.fixture
def results_text(run: NiahResults) -> str:
    return run.to_json()


def saved_run_text(run: NiahResults, tmp_path: Path) -> str:
    path = RunStore(tmp_path / "store").save(run, "baseline", label="model-a")
    return gzip.decompress(path.read_bytes()).decode("utf-8")


def write(tmp_path: Path, text: str | bytes, name: str = "file.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def repeat_first_key(text: str, key: str) -> str:
    """``text`` with ``"key": ...`` written twice in the first object that holds it."""
    start = text.index(f'"{key}":')
    return text[:start] + f'"{key}": 0, ' + text[start:]


# --- repeated keys ------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["seed", "cos_qh", "auc", "found"])
def test_a_results_file_with_a_repeated_key_is_refused(tmp_path, results_text, key):
    path = write(tmp_path, repeat_first_key(results_text, key))
    with pytest.raises(ResultsError) as info:
        NiahResults.load(path)
    message = str(info.value)
    assert str(path) in message
    assert f'the key "{key}" appears twice' in message
    assert "Fix:" in message


def test_a_saved_run_with_a_repeated_key_is_refused(tmp_path, run):
    text = saved_run_text(run, tmp_path)
    path = write(tmp_path, repeat_first_key(text, "saved_at"), "run.json")
    with pytest.raises(ResultsError, match='the key "saved_at" appears twice'):
        load_run(path)


def test_a_bare_results_file_as_baseline_with_a_repeated_key_is_refused(tmp_path, results_text):
    path = write(tmp_path, repeat_first_key(results_text, "cos_qn"), "baseline.json")
    with pytest.raises(ResultsError, match='the key "cos_qn" appears twice'):
        load_run(path)


def test_from_json_text_is_read_strictly_too(results_text):
    with pytest.raises(ResultsError, match='the key "seed" appears twice'):
        NiahResults.from_json(repeat_first_key(results_text, "seed"))


# --- numbers JSON has not -----------------------------------------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
@pytest.mark.parametrize(("part", "path"), [("cases", "cases[0].cos_qh"), ("model", "identity")])
def test_non_finite_numbers_stay_refused_wherever_they_stand(
    tmp_path, results_text, literal, part, path
):
    data = json.loads(results_text)
    if part == "cases":
        data["cases"][0]["cos_qh"] = "@"
    else:
        data["model"]["identity"]["weight"] = "@"
    file = write(tmp_path, json.dumps(data).replace('"@"', literal), "x.json")
    with pytest.raises(ResultsError) as info:
        NiahResults.load(file)
    assert str(file) in str(info.value) and path in str(info.value)


# --- byte order mark ----------------------------------------------------------------------


def test_a_byte_order_mark_is_dropped_from_results_and_runs_as_from_needle_sets(
    tmp_path, run, results_text
):
    results_path = write(tmp_path, BOM + results_text.encode(), "results.json")
    assert NiahResults.load(results_path).cases == run.cases
    run_path = write(tmp_path, BOM + saved_run_text(run, tmp_path).encode(), "run.json")
    metadata, loaded = load_run(run_path)
    assert metadata["name"] == "baseline" and loaded.cases == run.cases
    needles = Path(__file__).resolve().parents[2] / "fixtures" / "needles" / "valid_custom.json"
    bom_needles = write(tmp_path, BOM + needles.read_bytes(), "needles.json")
    assert load_needle_set(bom_needles).name == "pets"


def test_needle_sets_and_results_refuse_a_repeated_key_alike(tmp_path, results_text):
    needles = Path(__file__).resolve().parents[2] / "fixtures" / "needles" / "valid_custom.json"
    doubled = repeat_first_key(needles.read_text(encoding="utf-8"), "name")
    with pytest.raises(NeedleSetError, match='the key "name" appears twice'):
        load_needle_set(write(tmp_path, doubled, "needles.json"))
    with pytest.raises(ResultsError, match='the key "seed" appears twice'):
        NiahResults.from_json(repeat_first_key(results_text, "seed"))


# --- scores no measurement gives ----------------------------------------------------------


def edited(results_text: str, part: str, index: int, field: str, value: object) -> str:
    data = json.loads(results_text)
    data[part][index][field] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("part", "field", "value", "shown"),
    [
        ("cases", "cos_qh", 1.5, "cases[3].cos_qh"),
        ("cases", "cos_qn", -2.0, "cases[3].cos_qn"),
        ("cases", "control_score", 7.0, "cases[3].control_score"),
        ("cases", "relative_position", 1.25, "cases[3].relative_position"),
        ("tables", "cos_qh", 3.0, "tables[3].cos_qh"),
        ("tables", "auc", 1.5, "tables[3].auc"),
        ("tables", "auc_study", -0.1, "tables[3].auc_study"),
    ],
)
def test_scores_outside_their_range_are_refused(results_text, part, field, value, shown):
    with pytest.raises(ResultsError) as info:
        NiahResults.from_json(edited(results_text, part, 3, field, value), source="edited.json")
    message = str(info.value)
    assert shown in message and "edited.json" in message and repr(value) in message


def test_a_negative_score_outside_minus_one_to_one_is_refused(results_text):
    data = json.loads(results_text)
    data["negatives"][2]["scores"][1] = 1.01
    with pytest.raises(ResultsError, match=r"negatives\[2\]\.scores\[1\]"):
        NiahResults.from_json(json.dumps(data))


def test_a_null_cosine_needs_the_case_to_name_its_problem(results_text):
    with pytest.raises(ResultsError, match=r"cases\[0\]\.cos_qh, null in a case without"):
        NiahResults.from_json(edited(results_text, "cases", 0, "cos_qh", None))
    data = json.loads(edited(results_text, "cases", 0, "cos_qh", None))
    data["cases"][0]["problem"] = "non-finite embedding"
    loaded = NiahResults.from_json(json.dumps(data))
    assert math.isnan(loaded.cases[0].cos_qh)


def test_float32_rounding_past_one_is_accepted(results_text):
    text = edited(results_text, "cases", 0, "cos_qn", 1.0000001)
    assert NiahResults.from_json(text).cases[0].cos_qn == 1.0000001


def test_a_saved_run_with_a_cosine_out_of_range_names_the_path_inside_results(tmp_path, run):
    data = json.loads(saved_run_text(run, tmp_path))
    data["results"]["cases"][5]["cos_qh"] = -1.5
    with pytest.raises(ResultsError, match=r"\$\.results\.cases\[5\]\.cos_qh"):
        load_run(write(tmp_path, json.dumps(data), "run.json"))


def test_the_history_reads_run_headers_strictly_too(tmp_path, run):
    from pytest_niah.results.run_file import run_header

    text = saved_run_text(run, tmp_path)
    assert run_header(write(tmp_path, BOM + text.encode(), "bom.json")).name == "baseline"
    doubled = write(tmp_path, repeat_first_key(text, "label"), "doubled.json")
    with pytest.raises(ResultsError, match='not a saved run: the key "label" appears twice'):
        run_header(doubled)
