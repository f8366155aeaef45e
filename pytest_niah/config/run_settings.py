"""What a pytest run asks for besides the experiment: one frozen record of its options.

Each field is an option of the table (:data:`~pytest_niah.config.options.OPTIONS`, those
not part of the experiment) under its own name and default, or one of three values derived
from them: the cache policy, the run store and the snapshot folder. The plugin builds it,
every value checked, in :func:`~pytest_niah.plugin.settings.build_session`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pytest_niah.config import paths
from pytest_niah.config.cache_policy import CachePolicy
from pytest_niah.config.gate_expressions import Allowance, Thresholds
from pytest_niah.config.options import default
from pytest_niah.naming import label_file_name


def default_cache() -> CachePolicy:
    """The cache policy of the options' defaults."""
    return CachePolicy.from_options(default("cache_dir"), default("no_cache"))


@dataclass(frozen=True)
class RunSettings:
    """The options of one pytest run (see OPTIONS for what each does), read-only.

    Attributes:
        cache: Which caches every run uses, and where (``--niah-cache-dir``,
            ``--niah-no-cache``).
        store_dir: Folder of saved runs (``--niah-storage``, else under the rootdir).
        snapshot_dir: Folder of the snapshots, one sub-folder per model.
    """

    min_auc: Thresholds = field(default_factory=lambda: default("min_auc"))
    min_ratio: Thresholds = field(default_factory=lambda: default("min_ratio"))
    inconclusive: str = default("inconclusive")
    strict: bool = default("strict")
    json: str = default("json")
    save: str = default("save")
    save_overwrite: bool = default("save_overwrite")
    compare: str = default("compare")
    compare_fail: tuple[Allowance, ...] = default("compare_fail")
    compare_allow: tuple[str, ...] = default("compare_allow")
    report: str = default("report")
    export_haystacks: str = default("export_haystacks")
    snapshot: bool = default("snapshot")
    snapshot_digits: int = default("snapshot_digits")
    speed: bool = default("speed")
    speed_fail: float | None = default("speed_fail")
    shard: tuple[int, int] | None = default("shard")
    shard_dir: str = default("shard_dir")
    from_shards: str = default("from_shards")
    # -- derived from the options --
    cache: CachePolicy = field(default_factory=default_cache)
    store_dir: Path = field(default_factory=lambda: paths.store_dir("."))
    snapshot_dir: Path = field(default_factory=lambda: paths.snapshot_dir("."))

    def parts_dir(self, label: str, *, several: bool) -> Path:
        """The folder of one model's part files, which a gate job reads or a shard job writes.

        The shard folder itself, or its LABEL sub-folder when the run has ``several`` models.
        """
        root = Path(self.from_shards or self.shard_dir)
        return root / label_file_name(label) if several else root
