"""--niah-positions: how many evenly spaced needle positions per haystack."""

from __future__ import annotations

from collections import defaultdict


def test_positions_become_ids(niah):
    result = niah.run("--collect-only", "-q", "--niah-positions=5")
    ids = niah.ids(result)
    suffixes = {i.rsplit("-", 1)[1] for i in ids if not i.startswith("gate-")}
    assert suffixes == {"d0", "d25", "d50", "d75", "d100"}
    assert sum(not i.startswith("gate-") for i in ids) == 2 * 2 * 2 * 2 * 5


def test_one_position(niah):
    result = niah.run("--collect-only", "-q", "--niah-positions=1")
    cases = [i for i in niah.ids(result) if not i.startswith("gate-")]
    assert len(cases) == niah.n_cases // 3
    assert all(i.endswith("-d0") for i in cases)


def test_positions_run_from_start_to_end(niah):
    result = niah.run(
        "--niah-positions=4", "--niah-arms=literal", "--niah-lengths=256", "--niah-json=r.json"
    )
    result.assert_outcomes(passed=2 * 2 * 4 + 1)
    cases = niah.load("r.json").cases
    by_haystack = defaultdict(list)
    for case in cases:
        by_haystack[case.group_id, case.order].append(case)
    assert len(by_haystack) == 4
    for series in by_haystack.values():
        series.sort(key=lambda c: c.position)
        assert [c.position for c in series] == [0, 1, 2, 3]
        offsets = [c.needle_offset for c in series]
        assert offsets == sorted(set(offsets)), offsets  # strictly increasing
        assert offsets[0] == 0
        last = series[-1]
        assert last.needle_offset + last.needle_tokens == last.length
        assert series[0].relative_position == 0.0
        assert last.relative_position == 1.0
