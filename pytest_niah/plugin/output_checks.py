"""Every path a run will write, and the saved run it would replace, checked before it starts."""

from __future__ import annotations

import os

from pytest_niah.errors import OutputError
from pytest_niah.plugin.problems import Problems
from pytest_niah.plugin.session import NiahSession


def check_save(session: NiahSession, problems: Problems) -> None:
    """A saved run that --niah-save would overwrite, or cannot write.

    An empty name never gets here: the option table refuses it on the command line
    (:meth:`~pytest_niah.config.option.Option.parse_given`), its only source.
    """
    if not session.settings.save:
        return
    from pytest_niah.output_paths import output_problem
    from pytest_niah.results.storage import RunStore

    with problems:
        for label in session.labels:
            target = RunStore(session.settings.store_dir).target(session.settings.save, label)
            try:
                exists = target.exists()
            except OSError as exc:  # e.g. a name the file system cannot hold
                if output_problem(str(session.settings.store_dir), folder=True):
                    return  # the store folder itself is the cause: check_outputs names it
                raise OutputError(
                    f"--niah-save: run {session.settings.save[:40]!r} of model {label!r} cannot be "
                    f"saved at {target} ({exc.strerror or exc})",
                    "give the run a shorter, plain name, e.g. --niah-save=baseline, or another "
                    "--niah-storage folder",
                ) from None
            if exists and not session.settings.save_overwrite:
                raise OutputError(
                    f"--niah-save: run {session.settings.save!r} of model {label!r} exists "
                    f"already ({target})",
                    "add --niah-save-overwrite to replace it, or save under another name",
                )


def check_outputs(session: NiahSession, problems: Problems) -> None:
    """Every path the run will write, checked now rather than after minutes of embedding."""
    from pytest_niah.output_paths import output_problem
    from pytest_niah.plugin.outputs import json_target

    wanted: list[tuple[str, str, bool]] = []
    if session.settings.json:
        several = len(session.labels) > 1
        targets = {
            str(json_target(session.settings.json, label, several=several)): None
            for label in session.labels
        }
        wanted += [("--niah-json", target, False) for target in targets]
    if session.settings.report:
        wanted.append(("--niah-report", session.settings.report, True))
    if session.settings.export_haystacks:
        wanted.append(("--niah-export-haystacks", session.settings.export_haystacks, False))
    if session.settings.save:
        wanted.append(("--niah-storage (the run store)", str(session.settings.store_dir), True))
    if session.settings.shard is not None and session.settings.shard_dir:
        wanted.append(("--niah-shard-dir", session.settings.shard_dir, True))
    if (
        session.settings.snapshot
    ):  # the default folder too: a file in its place is found now, not after
        wanted.append(("--niah-snapshot-dir", str(session.settings.snapshot_dir), True))
    for what, path, folder in wanted:
        problem = output_problem(path, folder=folder)
        if problem:
            problems.add(OutputError(f"{what}: {path} {problem}", "choose a path you can write to"))
    # Every run but a shard job's appends to the step summary when one is set; the report
    # package (numpy) is imported only then, so that collection stays light.
    if session.settings.shard is None and os.environ.get("GITHUB_STEP_SUMMARY"):
        from pytest_niah.report import check_step_summary

        with problems:
            check_step_summary()
