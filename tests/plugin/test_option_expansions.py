"""--niah-arms=expandN and --niah-expansions: questions widened with related terms."""

from __future__ import annotations

import json

import pytest

EXPAND = "--niah-arms=expand100,expand150,expand250"
# Terms no book and no needle holds: an expansion that cannot help the TF-IDF baseline.
NOISE = [f"qzxnoise{i:03d}" for i in range(100)]
# The terms that link each question to its one-hop needle ("kosher kitchen", "Machu Picchu").
HELPFUL = {
    "dietary-01": ["kosher", "kitchen", *NOISE[:98]],
    "location-01": ["Machu Picchu", "trail", *NOISE[:98]],
}


def expansions_file(niah, name: str, terms: dict[str, list[str]]):
    path = niah.pytester.path / name
    data = {"schema_version": 1, "name": name.removesuffix(".json"), "expansions": terms}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_ids_and_gates_name_the_arm(niah):
    ids = niah.ids(niah.run("--collect-only", "-q", EXPAND))
    per_arm = niah.n_cases // 2
    for arm in ("expand100", "expand150", "expand250"):
        cases = [i for i in ids if f"-{arm}-" in i and not i.startswith("gate-")]
        assert len(cases) == per_arm
        assert f"dietary-01-{arm}-inverted-L256-d100" in cases
        assert [i for i in ids if i.startswith(f"gate-{arm}-")] == [
            f"gate-{arm}-L128",
            f"gate-{arm}-L256",
        ]
    assert len(ids) == 3 * (per_arm + 2)
    assert not any("-onehop-" in i or "-literal-" in i for i in ids)


def test_summary_has_a_table_per_arm(niah):
    result = niah.run(EXPAND, "--niah-json=r.json")
    assert result.ret == pytest.ExitCode.OK
    tables = niah.tables(result)
    assert list(tables) == ["expand100", "expand150", "expand250"]
    results = niah.load("r.json")
    for arm, table in tables.items():
        assert table["title"].startswith(f"lexical-tfidf (lexical:tfidf), arm {arm}")
        assert sorted(table["rows"]) == [128, 256]
        for length, cells in table["rows"].items():
            row = results.row(arm, length)
            assert (cells["found"], cells["missed"]) == (str(row.found), str(row.missed))
    # The built-in terms carry the one-hop link, so the lexical baseline finds needles.
    assert int(tables["expand100"]["rows"][128]["found"]) > 0


def test_expanded_arm_beside_the_plain_ones(niah):
    result = niah.run("--niah-arms=onehop,expand100")
    assert result.ret == pytest.ExitCode.OK
    tables = niah.tables(result)
    assert sorted(tables) == ["expand100", "onehop"]
    # The same needles: the plain question misses them, the expanded one finds some.
    assert {tables["onehop"]["rows"][n]["found"] for n in (128, 256)} == {"0"}
    assert sum(int(tables["expand100"]["rows"][n]["found"]) for n in (128, 256)) > 0


def test_custom_file_steers_the_expanded_questions(niah):
    helpful = expansions_file(niah, "helpful.json", HELPFUL)
    noise = expansions_file(niah, "noise.json", {g: list(NOISE) for g in HELPFUL})
    found = niah.run("--niah-arms=expand100", f"--niah-expansions={helpful}", "--niah-json=h.json")
    found.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates // 2)
    missed = niah.run("--niah-arms=expand100", f"--niah-expansions={noise}", "--niah-json=n.json")
    missed.assert_outcomes(passed=niah.n_gates // 2, xfailed=niah.n_cases // 2)
    assert niah.load("h.json").config.expansions == str(helpful)
    assert niah.load("n.json").config.expansions == str(noise)


def test_relative_custom_file(niah):
    expansions_file(niah, "helpful.json", HELPFUL)
    result = niah.run(
        "--niah-arms=expand100", "--niah-expansions=helpful.json", "--niah-json=r.json"
    )
    result.assert_outcomes(passed=niah.n_cases // 2 + niah.n_gates // 2)
    assert niah.load("r.json").config.expansions == str(niah.pytester.path / "helpful.json")


def test_a_file_with_enough_terms_for_one_arm_only(niah):
    """100 terms serve expand100; expand150 needs more, and says so."""
    helpful = expansions_file(niah, "helpful.json", HELPFUL)
    result = niah.run("--niah-arms=expand100,expand150", f"--niah-expansions={helpful}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fewer than the 150 asked for*"])


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("good_small.json", "*good_small.json*'dietary-01'*fewer than the 100 asked for*"),
        ("bad_not_json.json", "*bad_not_json.json*"),
        ("missing.json", "*missing.json*"),
    ],
)
def test_an_unusable_file_is_a_usage_error(niah, source, says):
    path = niah.pytester.path / "fixtures" / source
    fixture = niah.needle_fixtures.parent / "expansions" / source
    if fixture.is_file():
        path = fixture
    result = niah.run("--niah-arms=expand100", f"--niah-expansions={path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([says])
