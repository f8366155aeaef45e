"""The ini twins of the options (pytest.ini, pyproject.toml); the command line overrides them."""

from __future__ import annotations

import re

INI = {
    "niah_lengths": "128",
    "niah_positions": "2",
    "niah_groups": "dietary-01",
    "niah_arms": "literal",
    "niah_orders": "inverted",
}
EXPECTED = [
    "dietary-01-literal-inverted-L128-d0",
    "dietary-01-literal-inverted-L128-d100",
    "gate-literal-L128",
]
OPTIONS = [k.removeprefix("niah_") for k in INI]


def test_pytest_ini_is_honored(niah):
    niah.pytester.makeini("[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in INI.items()))
    result = niah.run("--collect-only", "-q", omit=OPTIONS)
    assert niah.ids(result) == EXPECTED


def test_pyproject_toml_is_honored(niah):
    body = "".join(f'{k} = "{v}"\n' for k, v in INI.items() if k != "niah_positions")
    niah.pytester.makepyprojecttoml(
        "[tool.pytest.ini_options]\n" + body + "niah_positions = 2\n"  # a TOML integer too
    )
    result = niah.run("--collect-only", "-q", omit=OPTIONS)
    assert niah.ids(result) == EXPECTED


def test_command_line_overrides_ini(niah):
    niah.pytester.makeini("[pytest]\n" + "".join(f"{k} = {v}\n" for k, v in INI.items()))
    result = niah.run(
        "--collect-only", "-q", "--niah-lengths=256", "--niah-orders=default", omit=OPTIONS
    )
    assert niah.ids(result) == [
        "dietary-01-literal-default-L256-d0",
        "dietary-01-literal-default-L256-d100",
        "gate-literal-L256",
    ]


def test_ini_gates_and_strict_apply_to_the_run(niah):
    niah.pytester.makeini("[pytest]\nniah_min_auc = 128=0.9\nniah_strict = true\n")
    result = niah.run("--niah-groups=dietary-01", "--niah-positions=1")
    # strict: the 4 one-hop misses fail; the gate at 128 fails on its AUC near 0.5 < 0.9.
    result.assert_outcomes(passed=4 + 3, failed=4 + 1)
    assert niah.gates(result, "onehop") == {128: "FAIL", 256: "-"}
    # One group gives no interval: the verdict is inconclusive, so (policy auto) the gate
    # fails where the point misses the threshold and warns where it meets it.
    assert niah.gates(result, "literal") == {128: "warn", 256: "-"}
    no_interval = (
        ": inconclusive (no interval: 1 needle group; use two or more needle groups "
        "(--niah-groups): an interval resamples them)"
    )
    assert niah.details(result, "literal") == {
        128: [("WARN", "--niah-min-auc: AUC 1.000, threshold 0.9" + no_interval)]
    }
    [(outcome, message)] = niah.details(result, "onehop")[128]
    assert outcome == "FAIL"
    assert re.fullmatch(
        r"--niah-min-auc: AUC 0\.[0-4]\d\d, threshold 0\.9" + re.escape(no_interval), message
    )
    failed = {line.split()[1] for line in result.outlines if line.startswith("FAILED")}
    assert failed == {
        f"test_niah.py::test_needle[dietary-01-onehop-{order}-L128-d0]"
        for order in ("default", "inverted")
    } | {
        f"test_niah.py::test_needle[dietary-01-onehop-{order}-L256-d0]"
        for order in ("default", "inverted")
    } | {"test_niah.py::test_gate[gate-onehop-L128]"}


def test_help_lists_options_and_ini_keys(niah):
    result = niah.pytester.runpytest("--help")
    out = result.stdout.str()
    for text in ("--niah-model=NAME|PATH|LABEL=NAME", "--niah-lengths=N,N,...", "--niah-strict"):
        assert text in out
    for key in ("niah_lengths (linelist)", "niah_corpus (string)", "niah_strict (bool)"):
        assert key in out
    flat = " ".join(out.split())  # --help wraps lines
    assert "env NIAH_CORPUS" in flat
    assert "Default: 128,256,512,1024,2048,4096,8192." in flat
