"""Progress of the long phases (building haystacks, embedding), for a person waiting.

On a terminal each phase gets a tqdm bar on stderr (texts, tokens per second, time left);
elsewhere (CI logs, captured output) each phase prints one line when it ends. The engine
reports through :class:`Progress` and never prints itself.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Protocol, TextIO


class Progress(Protocol):
    """Where the engine reports progress."""

    def start(self, phase: str, total: int | None, unit: str) -> None:
        """A phase begins; ``total`` units of work are expected (``None``: unknown)."""
        ...

    def advance(self, done: int, tokens: int = 0) -> None:
        """``done`` more units (and ``tokens`` more tokens) of the current phase are done."""
        ...

    def finish(self, note: str = "") -> None:
        """The current phase ended; ``note`` is added to its summary line."""
        ...


class NoProgress:
    """Reports nothing (``-q``, the Python API)."""

    def start(self, phase: str, total: int | None, unit: str) -> None:
        """Nothing."""

    def advance(self, done: int, tokens: int = 0) -> None:
        """Nothing."""

    def finish(self, note: str = "") -> None:
        """Nothing."""


class ConsoleProgress:
    """A tqdm bar per phase on a terminal; one summary line per phase elsewhere.

    Args:
        stream: Where to write (stderr by default).
        bars: Draw live bars; ``None`` draws them when ``stream`` is a terminal.
    """

    def __init__(self, stream: TextIO | None = None, *, bars: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bars = self.stream.isatty() if bars is None else bars
        self._bar: Any = None
        self._phase = ""
        self._unit = ""
        self._done = self._tokens = 0
        self._started = 0.0

    def start(self, phase: str, total: int | None, unit: str) -> None:
        """Open a bar (on a terminal)."""
        self.finish()
        self._phase, self._unit = phase, unit
        self._done = self._tokens = 0
        self._started = time.perf_counter()
        if self.bars:
            from tqdm import tqdm

            size = shutil.get_terminal_size((100, 24))
            self._bar = tqdm(
                total=total,
                desc=f"pytest-niah: {phase}",
                unit=f" {unit}",
                file=self.stream,
                leave=True,
                # A terminal that reports no size (a fresh pseudo-terminal, some CI
                # runners) makes tqdm hide the bar (0 rows): fall back to COLUMNS/LINES,
                # then 100 x 24.
                ncols=size.columns,
                nrows=size.lines,
            )

    def advance(self, done: int, tokens: int = 0) -> None:
        """Move the bar; tokens per second show beside it."""
        self._done += done
        self._tokens += tokens
        if self._bar is not None:
            self._bar.update(done)
            if self._tokens:
                rate = self._tokens / max(time.perf_counter() - self._started, 1e-9)
                self._bar.set_postfix_str(f"{rate:,.0f} tokens/s", refresh=False)

    def finish(self, note: str = "") -> None:
        """Close the bar, or print the phase's summary line."""
        if not self._phase:
            return
        seconds = time.perf_counter() - self._started
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        else:
            rate = f", {self._tokens / max(seconds, 1e-9):,.0f} tokens/s" if self._tokens else ""
            extra = f"; {note}" if note else ""
            print(
                f"pytest-niah: {self._phase}: {self._done:,} {self._unit} in {seconds:.1f} s"
                f"{rate}{extra}",
                file=self.stream,
                flush=True,
            )
        self._phase = ""
