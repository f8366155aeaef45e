"""What the window probe found, in the words of the terminal summary and the reports.

The probe (:mod:`pytest_niah.embed.window_probe`) measured how many tokens a model reads
before the grid; the title line says whether its window was measured, and a note says so
in plain words where the model reads less than it declares.
"""

from __future__ import annotations

from pytest_niah.results.results_schema import ModelInfo


def measured_suffix(model: ModelInfo) -> str:
    """What follows ``reads N tokens`` in a title: how that window is known.

    Empty for results from before the probe, and for a model that declares no window and
    was not probed (the lexical baseline reads every word by construction).
    """
    probe = model.window_probe
    if probe is None:
        return ""
    if probe.probed == 0:
        if probe.declared is None:
            return ""
        # Why, where the probe said: "not measured: the server is not deterministic".
        why = probe.note.partition("not measured")[2].lstrip(": ")
        return f" (declared; not measured: {why})" if why else " (declared; not measured)"
    measured = model.measured_window
    if measured is None:
        if model.max_tokens is None:
            return f" (measured up to {probe.probed:,})"
        return f" (declared; no limit measured within {probe.probed:,})"
    if measured == model.max_tokens:
        return " (measured)"
    return f" (measured {measured:,})"


def window_note(model: ModelInfo) -> str | None:
    """A note where the model reads fewer tokens than it declares, or ``None``."""
    probe, measured = model.window_probe, model.measured_window
    if probe is None or measured is None or model.max_tokens != measured:
        return None
    if probe.declared == measured:
        return None
    declares = "no limit" if probe.declared is None else f"{probe.declared:,} tokens"
    return (
        f"{model.name} declares {declares} but reads only the first {measured:,} (measured "
        f"before the grid: a server or gateway may cut inputs without saying so); needles at "
        f"or past token {measured:,} are unread"
    )
