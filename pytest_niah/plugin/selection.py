"""Node ids of the shipped suite pasted back on the command line, as pytest's own would run.

The suite lives inside the package, so ``test_niah.py::test_gate[gate-onehop-L128]`` is no
path of the user's folder. Rewriting it to the suite file would make pytest report the file
itself as the root of its node ids (``::test_gate[...]``): ids that cannot be pasted back,
and that the next ``--lf`` does not recognise. Instead the suite folder is collected as in
a full run (ids ``test_niah.py::...``) and the items are narrowed to the pasted ids here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

PASTED_KEY: pytest.StashKey[tuple[str, ...]] = pytest.StashKey()
DEPTH = re.compile(r"-L\d+-d(\d+(?:\.\d)?)\b")


def is_pasted_id(arg: str, suite_names: Sequence[str], suite_folder: Path) -> bool:
    """Whether a command-line argument is a node id of the shipped suite, pasted back.

    A path that exists in the user's folder is the user's own file, not a pasted id.
    """
    path = Path(arg.partition("::")[0])
    return (
        path.name in suite_names and not path.exists() and path.parent in (Path("."), suite_folder)
    )


def only_the_suite(args: Sequence[str], suite_names: Sequence[str], suite_folder: Path) -> bool:
    """Whether a run names no path of the project: none at all, or only pasted suite ids.

    Such a run loads none of the project's conftests, as the bare command does.
    """
    return all(is_pasted_id(arg, suite_names, suite_folder) for arg in args)


def take_pasted_ids(
    config: pytest.Config, suite_names: Sequence[str], suite_folder: Path
) -> tuple[str, ...]:
    """Remove pasted suite node ids from ``config.args``; return them (``test_niah.py::...``)."""
    pasted: list[str] = []
    kept: list[str] = []
    for arg in config.args:
        if is_pasted_id(arg, suite_names, suite_folder):
            path, sep, rest = arg.partition("::")
            pasted.append(Path(path).name + sep + rest)
        else:
            kept.append(arg)
    if pasted:
        config.args[:] = kept
        config.stash[PASTED_KEY] = tuple(pasted)
    return tuple(pasted)


def suite_node_id(item: pytest.Item) -> str:
    """The item's id as a full run reports it: ``test_niah.py::test_gate[...]``."""
    return item.path.name + "::" + item.nodeid.split("::", 1)[1]


def names(selection: str, node_id: str) -> bool:
    """Whether a pasted id selects a node id, as pytest matches its arguments.

    ``test_niah.py`` selects the file, ``test_niah.py::test_gate`` every parameter of the
    function, ``test_niah.py::test_gate[gate-onehop-L128]`` that one test.
    """
    return node_id == selection or node_id.startswith((selection + "::", selection + "["))


def narrow_to_pasted(
    config: pytest.Config, items: list[pytest.Item], suite: Sequence[Path]
) -> None:
    """Keep only the suite's items the pasted ids name (the user's own tests stay).

    Raises:
        pytest.UsageError: a pasted id names no test of this run's grid (outside xdist
            workers, which only collect what the controller asked for).
    """
    pasted = config.stash.get(PASTED_KEY, ())
    if not pasted:
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    used: set[str] = set()
    for item in items:
        if item.path not in suite:
            kept.append(item)
            continue
        node_id = suite_node_id(item)
        chosen = [selection for selection in pasted if names(selection, node_id)]
        used.update(chosen)
        (kept if chosen else dropped).append(item)
    missing = [selection for selection in pasted if selection not in used]
    if missing and not hasattr(config, "workerinput"):
        depths = sorted({m[1] for i in items for m in DEPTH.finditer(i.nodeid)}, key=float)
        raise pytest.UsageError(
            f"pytest-niah: not found: {', '.join(missing)} names no test of this run's grid "
            f"(its needle depths: {', '.join('d' + d for d in depths) or 'none'}; an id "
            "names its length and depth, so an id of another grid's lengths or positions "
            "is no test here). Fix: run it with the --niah-* options of the run it came "
            "from, or list this grid's node ids with --collect-only -q"
        )
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
