"""The case/gate grid and its test ids (pytest_niah.haystacks.grid): pure, cheap, torch-free."""

from __future__ import annotations

import itertools
import subprocess
import sys
import textwrap

import pytest

from pytest_niah.config.niah import NiahConfig
from pytest_niah.config.vocabulary import ORDERS
from pytest_niah.haystacks.grid import (
    CaseParam,
    GateParam,
    case_id,
    case_params,
    control_id,
    depth_label,
    gate_id,
    gate_params,
    param_ids,
)
from pytest_niah.inputs.needles import builtin_needle_set


@pytest.fixture(scope="module")
def needle_set():
    return builtin_needle_set()


@pytest.fixture(scope="module")
def full_config():
    """The default grid with every arm."""
    return NiahConfig(model="packaged-minilm", arms=("onehop", "literal"))


def test_id_formats():
    assert case_id("dietary-03", "onehop", "inverted", 4096, 7) == (
        "dietary-03-onehop-inverted-L4096-p07"
    )
    assert case_id("location-01", "literal", "default", 128, 0) == (
        "location-01-literal-default-L128-p00"
    )
    assert case_id("location-01", "literal", "default", 128, 123) == (
        "location-01-literal-default-L128-p123"
    )
    assert control_id("dietary-03", 4096, 0) == "dietary-03-control-L4096-c0"
    assert gate_id("onehop", 4096) == "gate-onehop-L4096"


def test_case_param_case_id_uses_case_id():
    p = CaseParam("minilm", "onehop", "dietary-03", "inverted", 4096, 7)
    assert p.case_id == "dietary-03-onehop-inverted-L4096-p07"


def test_case_params_count_and_order(needle_set):
    config = NiahConfig(
        model="m", arms=("literal", "onehop"), lengths=(256, 128), positions=3, orders=ORDERS
    )
    params = case_params("m", config, needle_set)
    n_groups = len(needle_set.groups)
    assert len(params) == 2 * n_groups * 2 * 2 * 3
    expected = [
        CaseParam("m", arm, group.id, order, length, position, positions=3)
        for arm, group, length, order, position in itertools.product(
            ("literal", "onehop"), needle_set.groups, (128, 256), ORDERS, range(3)
        )
    ]
    assert params == expected
    assert params[0] == CaseParam(
        "m", "literal", needle_set.groups[0].id, "default", 128, 0, positions=3
    )
    assert params[1].position == 1
    assert params[3].order == "inverted"
    assert params[6].length == 256


def test_case_params_full_default_grid_count(needle_set, full_config):
    params = case_params("m", full_config, needle_set)
    c = full_config
    assert len(params) == (
        len(c.arms) * len(needle_set.groups) * len(c.lengths) * len(c.orders) * c.positions
    )
    assert len(params) == 2 * 28 * 7 * 2 * 10


def test_case_params_follow_a_group_selection(needle_set):
    kept = needle_set.select(["dietary"])
    params = case_params("m", NiahConfig(model="m", positions=1, lengths=(128,)), kept)
    assert {p.group_id.split("-")[0] for p in params} == {"dietary"}
    assert len(params) == len(kept.groups) * 2


def test_gate_params():
    config = NiahConfig(model="m", arms=("onehop", "literal"), lengths=(128, 1024))
    assert gate_params("m", config) == [
        GateParam("m", "onehop", 128),
        GateParam("m", "onehop", 1024),
        GateParam("m", "literal", 128),
        GateParam("m", "literal", 1024),
    ]


def test_param_ids_with_and_without_model():
    case = CaseParam("minilm", "onehop", "dietary-03", "inverted", 4096, 7, positions=10)
    gate = GateParam("minilm", "literal", 128)
    assert param_ids([case, gate], with_model=False) == [
        "dietary-03-onehop-inverted-L4096-d78",
        "gate-literal-L128",
    ]
    assert param_ids([case, gate], with_model=True) == [
        "minilm-dietary-03-onehop-inverted-L4096-d78",
        "minilm-gate-literal-L128",
    ]
    assert param_ids([], with_model=True) == []


@pytest.mark.parametrize("with_model", [False, True])
def test_ids_unique_across_full_default_grid(needle_set, full_config, with_model):
    models = ["minilm", "jina"] if with_model else ["minilm"]
    params: list[CaseParam | GateParam] = []
    for model in models:
        params += case_params(model, full_config, needle_set)
        params += gate_params(model, full_config)
    ids = param_ids(params, with_model=with_model)
    assert len(ids) == len(set(ids)) == len(params)
    controls = [
        control_id(g.id, length, c)
        for g in needle_set.groups
        for length in full_config.lengths
        for c in range(3)
    ]
    assert len(set(controls)) == len(controls)
    assert not set(controls) & set(ids)


def test_building_the_full_grid(needle_set, full_config):
    params = case_params("minilm", full_config, needle_set) + gate_params("minilm", full_config)
    ids = param_ids(params, with_model=True)
    assert len(ids) == len(set(ids)) == 2 * 28 * 7 * 2 * 10 + 2 * 7


def test_building_ids_imports_neither_torch_nor_numpy():
    code = textwrap.dedent(
        """
        import sys
        import pytest_niah.haystacks.grid as grid
        from pytest_niah.config.niah import NiahConfig
        from pytest_niah.config.vocabulary import ARMS
        from pytest_niah.inputs.needles import builtin_needle_set

        config = NiahConfig(model="packaged-minilm", arms=("onehop", "literal"))
        params = grid.case_params("m", config, builtin_needle_set())
        params += grid.gate_params("m", config)
        ids = grid.param_ids(params, with_model=True)
        assert len(ids) == len(set(ids)) > 0
        heavy = sorted(m for m in ("torch", "numpy") if m in sys.modules)
        print("HEAVY:" + ",".join(heavy))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "HEAVY:\n" in result.stdout, result.stdout


def test_a_test_id_names_the_depth_so_it_means_one_case_in_any_grid():
    # Index 2 of 5 positions and index 4 of 9 are both halfway: one id. Index 2 of 10 is
    # another depth, so a 5-position id pasted into the default grid names no test there.
    assert depth_label(2, 5) == depth_label(4, 9) == "d50"
    ids_5 = {depth_label(i, 5) for i in range(5)}
    ids_10 = {depth_label(i, 10) for i in range(10)}
    assert ids_5 == {"d0", "d25", "d50", "d75", "d100"}
    assert ids_5 & ids_10 == {"d0", "d100"}  # the same depths, the same cases
    assert depth_label(0, 1) == "d0"
    chunk = CaseParam("m", "onehop", "dietary-01", "default", 512, 1, "chunk-max", 3, 5)
    assert chunk.test_id == "dietary-01-onehop-default-L512-d25-s3-chunk-max"
    assert chunk.case_id == "dietary-01-onehop-default-L512-p01-s3-chunk-max"  # results keep it


@pytest.mark.parametrize("positions", [2, 10, 101, 102, 1001])
def test_depths_are_distinct_in_every_grid(positions):
    labels = [depth_label(i, positions) for i in range(positions)]
    assert len(set(labels)) == positions
    assert labels[0] == "d0" and labels[-1] == "d100"
