"""The run's :class:`NiahSession` kept on pytest's config, and the folder its processes share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_niah.plugin.session import NiahSession

SESSION_KEY: pytest.StashKey[NiahSession] = pytest.StashKey()
SHARED_DIR_INPUT = "niah_shared_dir"


def active_session(config: pytest.Config) -> NiahSession | None:
    """The run's :class:`NiahSession`, or ``None`` when pytest-niah is inactive."""
    return config.stash.get(SESSION_KEY, None)


class XdistHooks:
    """Hands the controller's shared folder to every worker."""

    def __init__(self, session: NiahSession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        """Give a new worker the controller's shared folder."""
        node.workerinput[SHARED_DIR_INPUT] = str(shared_dir(node.config))


def shared_dir(config: pytest.Config) -> Path:
    """The folder the run's processes share (the controller's, handed to xdist workers)."""
    session = config.stash[SESSION_KEY]
    if session.state.shared_dir is None:
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None and SHARED_DIR_INPUT in workerinput:
            session.state.shared_dir = Path(workerinput[SHARED_DIR_INPUT])
        else:
            # pytest's own tmp-path factory: per run, cleaned up by pytest's retention policy.
            base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
            session.state.shared_dir = base / "niah"
        session.state.shared_dir.mkdir(parents=True, exist_ok=True)
    return session.state.shared_dir
