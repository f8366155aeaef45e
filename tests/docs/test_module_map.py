"""The contributing guide's module map names every module of the package.

A module added without a line in the map leaves the next maintainer guessing where a rule
lives; the map is the one place that says what each module owns.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pytest_niah"
GUIDE = REPO / "docs" / "contributing.md"


def unmapped(package: Path, guide_text: str) -> list[str]:
    """Modules of ``package`` (the plugin's own tests and data aside) the guide never names."""
    names = []
    for path in sorted(package.rglob("*.py")):
        inside = path.relative_to(package).parts
        if path.name == "__init__.py" or inside[0] in ("suite", "data"):
            continue
        if f"`{path.name}`" not in guide_text and f" {path.name} " not in guide_text:
            names.append(path.relative_to(package).as_posix())
    return names


def test_every_module_of_the_package_is_in_the_module_map() -> None:
    missing = unmapped(PACKAGE, GUIDE.read_text(encoding="utf-8"))
    assert missing == [], f"add these to the module map in docs/contributing.md: {missing}"


def test_a_module_the_guide_does_not_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "stage").mkdir()
    (tmp_path / "stage" / "named.py").write_text("")
    (tmp_path / "stage" / "forgotten.py").write_text("")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_x.py").write_text("")
    assert unmapped(tmp_path, "| stage | `named.py` (what it owns) |") == ["stage/forgotten.py"]
