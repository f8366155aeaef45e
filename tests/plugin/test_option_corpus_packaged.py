"""--niah-corpus=packaged: the default, the pinned books shipped inside the package."""

from __future__ import annotations

import shutil

from pytest_niah.inputs.packaged_corpus import packaged_corpus

SMALL = (
    "--niah-lengths=128",
    "--niah-positions=1",
    "--niah-groups=dietary-01",
    "--niah-arms=literal",
    "--niah-json=r.json",
)


def test_without_the_option_the_packaged_books_are_read(niah):
    result = niah.run(*SMALL, omit=["corpus"])
    result.assert_outcomes(passed=3)
    results = niah.load("r.json")
    assert results.config.corpus == "packaged"
    assert results.corpus["name"] == "packaged"
    assert results.corpus["fingerprint"] == packaged_corpus().fingerprint()


def test_the_word_packaged_is_not_a_path_on_the_command_line_or_in_an_ini_file(niah):
    niah.pytester.makeini("[pytest]\nniah_corpus = packaged\n")
    result = niah.run(*SMALL, omit=["corpus"])
    result.assert_outcomes(passed=3)
    assert niah.load("r.json").config.corpus == "packaged"
    result = niah.run(*SMALL, "--niah-corpus=packaged")
    result.assert_outcomes(passed=3)
    assert niah.load("r.json").config.corpus == "packaged"


def test_a_folder_named_packaged_is_read_as_a_folder_when_given_as_a_path(niah):
    folder = niah.pytester.mkdir("packaged")
    shutil.copy(niah.corpus / "walden.txt", folder / "walden.txt")
    result = niah.run(*SMALL, "--niah-corpus=./packaged")
    result.assert_outcomes(passed=3)
    assert niah.load("r.json").corpus["books"] == ["walden"]
    assert niah.load("r.json").config.corpus == str(folder)
