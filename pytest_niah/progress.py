"""Progress of the long phases (building haystacks, embedding), for a person waiting.

On a terminal each phase gets a tqdm bar on stderr (texts, tokens per second, time left);
elsewhere (CI logs, captured output) each phase prints a line when it starts and one when
it ends. Between them a heartbeat speaks whenever nothing was said for a while (10 s on a
terminal, 30 s in a log): done/total, tokens per second and the time left, or what the run
is doing. The time left comes from the work each unit weighs (a 4,096-token block weighs
32 of the 128-token ones), not from the count of units. The engine reports through
:class:`Progress` and never prints itself.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

# Seconds of silence before the heartbeat speaks: on a terminal, in a log. The environment
# variable (seconds, a float) overrides both; tests set it to see a heartbeat quickly.
TERMINAL_PERIOD = 10.0
LOG_PERIOD = 30.0
PERIOD_ENV = "NIAH_HEARTBEAT_SECONDS"
# How often the heartbeat thread looks at the clock.
TICK = 0.25


class Progress(Protocol):
    """Where the engine reports progress."""

    def start(
        self, phase: str, total: int | None, unit: str, *, weights: Sequence[float] = ()
    ) -> None:
        """A phase begins; ``total`` units of work are expected (``None``: unknown).

        ``weights`` (optional) is the expected work of each unit, in the order they will be
        done (e.g. each block's length in tokens): the time left is estimated from them.
        """
        ...

    def advance(self, done: int, tokens: int = 0) -> None:
        """``done`` more units (and ``tokens`` more tokens) of the current phase are done."""
        ...

    def finish(self, note: str = "") -> None:
        """The current phase ended; ``note`` is added to its summary line."""
        ...


class NoProgress:
    """Reports nothing (the Python API)."""

    def start(
        self, phase: str, total: int | None, unit: str, *, weights: Sequence[float] = ()
    ) -> None:
        """Nothing."""

    def advance(self, done: int, tokens: int = 0) -> None:
        """Nothing."""

    def finish(self, note: str = "") -> None:
        """Nothing."""


def heartbeat_period(terminal: bool, environ: dict[str, str] | None = None) -> float:
    """Seconds of silence before the heartbeat speaks (:data:`PERIOD_ENV` overrides)."""
    text = (os.environ if environ is None else environ).get(PERIOD_ENV, "")
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value > 0:
        return value
    return TERMINAL_PERIOD if terminal else LOG_PERIOD


def seconds_text(seconds: float) -> str:
    """``45 s``, ``3 min 05 s``, ``1 h 02 min``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class ConsoleProgress:
    """A tqdm bar per phase on a terminal; a line per phase start and end elsewhere.

    Between :meth:`begin` and :meth:`stop` a heartbeat thread makes sure something is said
    at least every ``period`` seconds.

    Args:
        stream: Where to write (stderr by default).
        bars: Draw live bars; ``None`` draws them when ``stream`` is a terminal.
        period: Seconds of silence before the heartbeat speaks; ``None``:
            :func:`heartbeat_period`.
    """

    def __init__(
        self, stream: TextIO | None = None, *, bars: bool | None = None, period: float | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.bars = self.stream.isatty() if bars is None else bars
        self.period = heartbeat_period(self.bars) if period is None else period
        self._bar: Any = None
        self._phase = ""
        self._unit = ""
        self._total: int | None = None
        self._weights: tuple[float, ...] = ()
        self._done = self._tokens = 0
        self._started = 0.0
        self._activity = ""
        self._activity_started = 0.0
        self._said = time.perf_counter()
        self._lock = threading.RLock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the heartbeat --------------------------------------------------------------------

    def begin(self, activity: str) -> None:
        """Say what the run is doing now, and keep saying something until :meth:`stop`."""
        with self._lock:
            self._activity, self._activity_started = activity, time.perf_counter()
            self._say(f"pytest-niah: {activity}")
        if self._thread is None:
            self._stopped.clear()
            self._thread = threading.Thread(
                target=self._beat, name="pytest-niah-heartbeat", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Close any bar and end the heartbeat."""
        self.finish()
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _beat(self) -> None:
        while not self._stopped.wait(TICK):
            with self._lock:
                if time.perf_counter() - self._said >= self.period:
                    self._pulse()

    def _pulse(self) -> None:
        """Say where the run is: the phase's counts, rate and time left, or the activity."""
        if self._bar is not None:
            self._bar.set_postfix_str(self._postfix(), refresh=False)
            self._bar.refresh()
            self._said = time.perf_counter()
            return
        if self._phase and self._total is not None and self._done >= self._total:
            elapsed = seconds_text(time.perf_counter() - self._started)
            self._say(
                f"pytest-niah: {self._phase}: all {self._total:,} {self._unit} done, "
                f"finishing ({elapsed} so far)"
            )
            return
        if self._phase:
            total = f"/{self._total:,}" if self._total is not None else ""
            self._say(
                f"pytest-niah: {self._phase}: {self._done:,}{total} {self._unit}, {self._postfix()}"
            )
            return
        if self._activity:
            elapsed = seconds_text(time.perf_counter() - self._activity_started)
            self._say(f"pytest-niah: {self._activity} ({elapsed} so far)")

    def _say(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)
        self._said = time.perf_counter()

    # -- phases ---------------------------------------------------------------------------

    def start(
        self, phase: str, total: int | None, unit: str, *, weights: Sequence[float] = ()
    ) -> None:
        """Open a bar (on a terminal), or say that the phase starts."""
        self.finish()
        with self._lock:
            self._phase, self._unit, self._total = phase, unit, total
            self._weights = tuple(weights)
            self._done = self._tokens = 0
            self._started = time.perf_counter()
            if not self.bars:
                counted = f"{total:,} {unit}" if total is not None else unit
                self._say(f"pytest-niah: {phase}: {counted} to do")
                return
            from tqdm import tqdm

            size = shutil.get_terminal_size((100, 24))
            self._bar = tqdm(
                total=total,
                desc=f"pytest-niah: {phase}",
                unit=f" {unit}",
                file=self.stream,
                leave=True,
                # The time left is the postfix's, from weights and tokens, not tqdm's.
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt}{unit} [{elapsed}{postfix}]",
                # A terminal that reports no size (a fresh pseudo-terminal, some CI
                # runners) makes tqdm hide the bar (0 rows): fall back to COLUMNS/LINES,
                # then 100 x 24.
                ncols=size.columns,
                nrows=size.lines,
            )
            self._said = time.perf_counter()

    def advance(self, done: int, tokens: int = 0) -> None:
        """Move the bar; tokens per second and the time left show beside it."""
        with self._lock:
            self._done += done
            self._tokens += tokens
            if self._bar is not None:
                self._bar.set_postfix_str(self._postfix(), refresh=False)
                self._bar.update(done)
                self._said = time.perf_counter()

    def finish(self, note: str = "") -> None:
        """Close the bar, or print the phase's summary line."""
        with self._lock:
            if not self._phase:
                return
            seconds = time.perf_counter() - self._started
            if self._bar is not None:
                self._bar.close()
                self._bar = None
                self._said = time.perf_counter()
                if note:  # the bar showed the counts; what the phase did still gets its line
                    self._say(f"pytest-niah: {self._phase}: {note}")
            else:
                rate = (
                    f", {self._tokens / max(seconds, 1e-9):,.0f} tokens/s" if self._tokens else ""
                )
                extra = f"; {note}" if note else ""
                self._say(
                    f"pytest-niah: {self._phase}: {self._done:,} {self._unit} in {seconds:.1f} s"
                    f"{rate}{extra}"
                )
            if self._activity:
                self._activity = f"{self._phase} done; measuring"
                self._activity_started = time.perf_counter()
            self._phase = ""

    def seconds_left(self) -> float | None:
        """The phase's time left: elapsed time scaled by the work left over the work done.

        The work of a unit is its weight (:meth:`start`'s ``weights``), else 1. ``None``
        before the first unit is done, or without a total.
        """
        if self._total is None or self._done <= 0:
            return None
        weights = self._weights if len(self._weights) == self._total else (1.0,) * self._total
        done = sum(weights[: self._done])
        left = sum(weights[self._done :])
        if done <= 0:
            return None
        return (time.perf_counter() - self._started) * left / done

    def _postfix(self) -> str:
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        parts = [f"{self._tokens / elapsed:,.0f} tokens/s"] if self._tokens else []
        left = self.seconds_left()
        if left is not None:
            parts.append(f"about {seconds_text(left)} left")
        return ", ".join(parts) or f"{seconds_text(elapsed)} so far"
