"""--junitxml carries the numbers of every test as properties."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET


def _properties(path):
    tree = ET.parse(path)
    out = {}
    for case in tree.iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        out[case.get("name")] = props
    return out


def test_properties_of_gates_and_cases(niah):
    result = niah.run("--junitxml=report.xml", "--niah-json=r.json")
    assert result.ret == 0
    props = _properties(niah.pytester.path / "report.xml")
    results = niah.load("r.json")

    gate = props["test_gate[gate-literal-L128]"]
    assert set(gate) >= {
        "auc",
        "comparative_ratio",
        "normalized",
        "separation",
        "effect_size",
        "found",
    }
    row = results.row("literal", 128)
    assert float(gate["auc"]) == row.auc == 1.0
    assert float(gate["comparative_ratio"]) == row.comparative_ratio
    assert int(gate["found"]) == row.found == 12

    case_props = props["test_needle[dietary-01-literal-inverted-L256-p01]"]
    assert set(case_props) >= {"cos_qh", "cos_qn", "normalized", "control_score", "needle_offset"}
    case = results.case("dietary-01-literal-inverted-L256-p01")
    assert float(case_props["cos_qh"]) == case.cos_qh > 0
    assert int(case_props["needle_offset"]) == case.needle_offset

    missed = props["test_needle[location-01-onehop-default-L128-p00]"]
    assert math.isnan(float(missed["normalized"]))  # the needle alone shares no word either
    assert len([n for n in props if n.startswith("test_needle[")]) == niah.n_cases
