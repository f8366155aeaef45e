"""The release: one version source, the release workflow, and what the wheel holds (#44).

The build job of ``.github/workflows/release.yml`` is run as written, in a copy of this
checkout, offline: ``python -m build`` gets ``--no-isolation`` (its build requirement,
setuptools, comes from this interpreter instead of the package index), then ``twine
check`` reads what it made. The wheel must hold the books, ``py.typed``, the license and
the Project-URLs, and no test data.
"""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import pytest_niah

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
PINNED = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}")
BOOKS = 10

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(RELEASE.read_text(encoding="utf-8"))


def build_commands(workflow: dict) -> list[str]:
    """The build job's ``python -m build`` and ``twine check`` lines, as written."""
    runs = [str(s["run"]) for s in workflow["jobs"]["build"]["steps"] if "run" in s]
    return [r for r in runs if r.startswith(("python -m build", "python -m twine"))]


def copy_checkout(target: Path) -> Path:
    """The files git knows of (committed or not, not ignored), copied to ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def dist(workflow, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release's build step run in a copy of the checkout; its ``dist/`` folder."""
    checkout = copy_checkout(tmp_path_factory.mktemp("release"))
    bin_dir = str(Path(sys.executable).parent)  # this venv's python, activated or not
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for command in build_commands(workflow):
        if command == "python -m build":
            command += " --no-isolation"  # offline: setuptools from this interpreter
        done = subprocess.run(
            ["bash", "-ec", command], cwd=checkout, env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, command + "\n" + done.stdout + done.stderr
        if "twine" in command:
            assert "PASSED" in done.stdout and "FAILED" not in done.stdout, done.stdout
    return checkout / "dist"


def test_a_tag_builds_checks_and_publishes_with_trusted_publishing(workflow):
    assert workflow[True]["push"]["tags"] == ["v*"]  # yaml reads the key `on` as True
    assert build_commands(workflow) == ["python -m build", "python -m twine check --strict dist/*"]
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    (upload,) = [s for s in build["steps"] if "upload-artifact" in str(s.get("uses"))]
    (download,) = [s for s in publish["steps"] if "download-artifact" in str(s.get("uses"))]
    assert upload["with"]["name"] == download["with"]["name"]
    (pypi,) = [s for s in publish["steps"] if "gh-action-pypi-publish" in str(s.get("uses"))]
    assert "password" not in pypi.get("with", {})  # no token: trusted publishing
    for job in (build, publish):
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.fullmatch(step["uses"]), step["uses"]
    tag_check = [str(s["run"]) for s in build["steps"] if "GITHUB_REF_NAME" in str(s.get("run"))]
    assert tag_check and "pytest_niah.__version__" in tag_check[0]


def test_the_version_has_one_source():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^version\s*=\s*\"", pyproject, re.MULTILINE) is None
    assert 'version = { attr = "pytest_niah.__version__" }' in pyproject
    assert re.fullmatch(r"\d+\.\d+\.\d+", pytest_niah.__version__)


def test_the_changelog_has_an_unreleased_section_then_one_per_release():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[([^\]]+)\]", changelog, re.MULTILINE)
    assert releases[0] == "Unreleased"
    assert pytest_niah.__version__ in releases[1:]
    assert re.findall(r"^## (?!\[)", changelog, re.MULTILINE) == []  # every section a release


def _wheel(dist: Path) -> zipfile.ZipFile:
    (wheel,) = dist.glob("*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_holds_the_books_types_license_and_urls(dist):
    with _wheel(dist) as wheel:
        names = wheel.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = email.message_from_bytes(wheel.read(meta))
    books = [n for n in names if re.fullmatch(r"pytest_niah/data/corpus/\w+\.txt\.xz", n)]
    assert len(books) == BOOKS, books
    assert "pytest_niah/data/corpus/SOURCES.md" in names
    assert "pytest_niah/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert "pytest_niah/suite/test_niah.py" in names  # the shipped suite is the product
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL") or [])
    assert {"Repository", "Documentation", "Issues", "Changelog"} <= set(urls), urls
    assert all(u.startswith("https://") for u in urls.values())
    assert metadata["Version"] == pytest_niah.__version__
    assert metadata["License-Expression"] == "MIT"


def test_the_wheel_holds_no_test_data(dist):
    with _wheel(dist) as wheel:
        names = wheel.namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"pytest_niah", f"pytest_niah-{pytest_niah.__version__}.dist-info"}, tops
    assert not [n for n in names if re.search(r"(^|/)(tests|fixtures|benchmarks)/", n)]


def test_the_sdist_builds_the_same_version(dist):
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    root = f"pytest_niah-{pytest_niah.__version__}"
    assert f"{root}/PKG-INFO" in names and f"{root}/LICENSE" in names
    assert f"{root}/pytest_niah/data/corpus/SOURCES.md" in names


def test_the_docs_extra_holds_what_the_site_build_needs():
    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    with (ROOT / "pyproject.toml").open("rb") as file:
        extras = tomllib.load(file)["project"]["optional-dependencies"]
    docs = {Requirement(r).name for r in extras["docs"]}
    # mkdocs.yml: the material theme; pymdownx (snippets, superfences) comes with it.
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "name: material" in mkdocs and "pymdownx.snippets" in mkdocs
    assert docs == {"mkdocs", "mkdocs-material"}
    assert docs <= {Requirement(r).name for r in extras["test"]}  # the tests build the site
