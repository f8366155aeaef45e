"""--niah-scoring and --niah-chunk-tokens: whole haystacks, their best chunk, their mean chunk."""

from __future__ import annotations

import pytest

CHUNKS = ("--niah-scoring=whole,chunk-max", "--niah-chunk-tokens=64")


def test_chunk_ids_end_with_the_scoring(niah):
    ids = niah.ids(niah.run("--collect-only", "-q", *CHUNKS))
    cases = [i for i in ids if not i.startswith("gate-")]
    assert len(cases) == 2 * niah.n_cases
    chunk = [i for i in cases if i.endswith("-chunk-max")]
    assert len(chunk) == niah.n_cases
    assert "dietary-01-onehop-inverted-L256-d100-chunk-max" in chunk
    # Whole scoring keeps the plain ids.
    assert "dietary-01-onehop-inverted-L256-d100" in cases
    assert not any("chunk-mean" in i for i in ids)
    gates = sorted(i for i in ids if i.startswith("gate-"))
    assert gates == sorted(
        f"gate-{arm}{suffix}-L{length}"
        for arm in ("literal", "onehop")
        for suffix in ("", "-chunk-max")
        for length in (128, 256)
    )
    assert "gate-onehop-chunk-max-L128" in gates


def test_chunk_scoring_alone_has_no_whole_tests(niah):
    ids = niah.ids(niah.run("--collect-only", "-q", "--niah-scoring=chunk-mean"))
    assert len(ids) == niah.n_cases + niah.n_gates
    assert all(i.endswith("-chunk-mean") or i.startswith("gate-") for i in ids)
    assert "gate-literal-chunk-mean-L256" in ids


def test_k_selects_one_scoring(niah):
    ids = niah.ids(niah.run("--collect-only", "-q", *CHUNKS, "-k", "chunk-max and onehop"))
    assert len(ids) == niah.n_cases // 2 + niah.n_gates // 2
    assert all("onehop" in i and "chunk-max" in i for i in ids)


def test_summary_shows_a_table_per_arm_and_scoring(niah):
    result = niah.run("--niah-scoring=whole,chunk-max,chunk-mean", "--niah-chunk-tokens=64")
    result.assert_outcomes(
        passed=3 * (niah.n_cases // 2 + niah.n_gates), xfailed=3 * (niah.n_cases // 2)
    )
    tables = niah.tables(result)
    assert list(tables) == [
        "literal",
        "literal/chunk-max",
        "literal/chunk-mean",
        "onehop",
        "onehop/chunk-max",
        "onehop/chunk-mean",
    ]
    assert tables["literal/chunk-max"]["title"].startswith(
        "lexical-tfidf (lexical:tfidf), arm literal, scoring chunk-max"
    )
    for key, table in tables.items():
        assert sorted(table["rows"]) == [128, 256], key
        found = {row["found"] for row in table["rows"].values()}
        assert found == ({"12"} if key.startswith("literal") else {"0"}), key


def test_results_file_holds_every_scoring(niah):
    niah.run(*CHUNKS, "--niah-json=r.json")
    results = niah.load("r.json")
    assert results.config.scoring == ("whole", "chunk-max")
    assert results.config.chunk_tokens == 64
    assert sorted(results.variants) == sorted(
        (arm, scoring) for arm in ("literal", "onehop") for scoring in ("whole", "chunk-max")
    )
    assert sum(c.scoring == "chunk-max" for c in results.cases) == niah.n_cases
    # Chunks of 64 tokens score another way than whole haystacks of 256.
    assert results.row("literal", 256, "chunk-max").normalized != pytest.approx(
        results.row("literal", 256, "whole").normalized
    )


def test_chunk_tokens_change_the_chunk_scores(niah):
    niah.run(
        "--niah-arms=literal",
        "--niah-scoring=chunk-max",
        "--niah-json=c64.json",
        "--niah-chunk-tokens=64",
    )
    niah.run(
        "--niah-arms=literal",
        "--niah-scoring=chunk-max",
        "--niah-json=c32.json",
        "--niah-chunk-tokens=32",
    )
    c64, c32 = niah.load("c64.json"), niah.load("c32.json")
    assert (c64.config.chunk_tokens, c32.config.chunk_tokens) == (64, 32)
    assert [c.cos_qh for c in c64.cases] != [c.cos_qh for c in c32.cases]


def test_gate_of_a_chunk_scoring_names_it(niah):
    result = niah.run(*CHUNKS, "--niah-min-ratio=0.9")
    failed = {
        line.split("[")[1].split("]")[0] for line in result.outlines if line.startswith("FAILED")
    }
    assert failed == {
        "gate-onehop-L128",
        "gate-onehop-L256",
        "gate-onehop-chunk-max-L128",
        "gate-onehop-chunk-max-L256",
    }
    message = (
        "--niah-min-ratio: comparative ratio 0.500 [0.500, 0.500], threshold 0.9; MDE 0.000 at "
        "2 groups: below threshold"
    )
    failures = niah.gate_failures(result)
    for length in (128, 256):
        assert failures[f"gate-onehop-chunk-max-L{length}"] == [
            f"model lexical-tfidf, arm onehop, scoring chunk-max, length {length}:",
            f"  {message}",
        ]
        assert failures[f"gate-onehop-L{length}"][0] == (
            f"model lexical-tfidf, arm onehop, scoring whole, length {length}:"
        )
    assert niah.gates(result, "literal/chunk-max") == {128: "pass", 256: "pass"}
    assert niah.gates(result, "onehop/chunk-max") == {128: "FAIL", 256: "FAIL"}
    assert niah.details(result, "onehop/chunk-max") == {
        128: [("FAIL", message)],
        256: [("FAIL", message)],
    }


@pytest.mark.parametrize(
    ("option", "says"),
    [
        ("--niah-scoring=best", "*--niah-scoring*best*"),
        ("--niah-scoring=", "*--niah-scoring*"),
        ("--niah-chunk-tokens=0", "*--niah-chunk-tokens*"),
        ("--niah-chunk-tokens=many", "*--niah-chunk-tokens*many*"),
    ],
)
def test_bad_values_are_usage_errors(niah, option, says):
    result = niah.run("--collect-only", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([says])
