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
    result = niah.run("--junitxml=report.xml", "--niah-json=r.json", "-o", "junit_family=xunit1")
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
    assert float(gate["auc"]) == row.auc > 0.9
    assert float(gate["comparative_ratio"]) == row.comparative_ratio
    assert int(gate["found"]) == row.found == 12

    case_props = props["test_needle[dietary-01-literal-inverted-L256-d50]"]
    assert set(case_props) >= {"cos_qh", "cos_qn", "normalized", "control_score", "needle_offset"}
    case = results.case("dietary-01-literal-inverted-L256-p01")
    assert float(case_props["cos_qh"]) == case.cos_qh > 0
    assert int(case_props["needle_offset"]) == case.needle_offset

    missed = props["test_needle[location-01-onehop-default-L128-d0]"]
    assert math.isnan(float(missed["normalized"]))  # the needle alone shares no word either
    assert len([n for n in props if n.startswith("test_needle[")]) == niah.n_cases


def test_gate_verdicts_are_properties(niah):
    result = niah.run(
        "--junitxml=report.xml",
        "--niah-min-auc=0.9",
        "--niah-min-ratio=0.6",
        "-o",
        "junit_family=xunit1",
    )
    assert result.ret == 1  # the one-hop gates fail
    props = _properties(niah.pytester.path / "report.xml")
    for length in (128, 256):
        literal = props[f"test_gate[gate-literal-L{length}]"]
        assert literal["--niah-min-auc auc"] == "meets threshold"
        assert literal["--niah-min-ratio comparative_ratio"] == "meets threshold"
        onehop = props[f"test_gate[gate-onehop-L{length}]"]
        assert onehop["--niah-min-auc auc"] == "below threshold"
        assert onehop["--niah-min-ratio comparative_ratio"] == "below threshold"
    # Without gates, a gate test records no verdict.
    plain = niah.run("--junitxml=plain.xml", "--niah-arms=literal", "-o", "junit_family=xunit1")
    assert plain.ret == 0
    assert not any(
        name.startswith("--niah-")
        for name in _properties(niah.pytester.path / "plain.xml")["test_gate[gate-literal-L128]"]
    )


def test_xunit2_is_clean_gates_become_suite_properties(niah):
    """pytest's default family: no warning per test, no property inside a testcase."""
    result = niah.run(
        "--junitxml=report.xml", "--niah-min-auc=0.9", "-W", "error::pytest.PytestWarning"
    )
    assert result.ret == 1  # the one-hop gates fail; no warning became an error
    assert "record_property is incompatible" not in result.stdout.str()
    tree = ET.parse(niah.pytester.path / "report.xml")
    assert not [p for case in tree.iter("testcase") for p in case.iter("property")]
    suite = {p.get("name"): p.get("value") for p in tree.getroot().iter("property")}
    assert suite["gate-literal-L128 --niah-min-auc auc"] == "meets threshold"
    assert suite["gate-onehop-L256 --niah-min-auc auc"] == "below threshold"
    assert float(suite["gate-literal-L128 auc"]) > 0.9
    assert not [name for name in suite if name.startswith("dietary-")]  # cases stay out
