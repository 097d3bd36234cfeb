"""Progress of long work on stderr: a bar on a terminal, a line every few seconds with
``-v`` elsewhere, nothing with ``-q``. Never on stdout, so JSON output stays clean.

The work reports how far it got with ``update``; the loops that call it do so
every ``EVERY`` commands, not every command, so that a long run is not slowed.
"""

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal, TextIO

from memtape.core.visible import visible

EVERY = 512
"""How many commands a loop runs between two ``update`` calls."""

LINE_SECONDS = 5.0
"""How often a line is written when stderr is not a terminal (``-v``)."""

DRAW_SECONDS = 0.5
"""How often the bar is drawn at most: drawing costs milliseconds, an update nothing."""

Mode = Literal["bar", "lines", "off"]


def progress_mode(err: TextIO, *, verbose: bool, quiet: bool) -> Mode:
    """How progress is shown: ``off`` with ``quiet``, a bar on a terminal, lines with
    ``verbose`` elsewhere, else nothing."""
    if quiet:
        return "off"
    if err.isatty():
        return "bar"
    return "lines" if verbose else "off"


class Progress:
    """One piece of work of ``total`` units (commands, cells) called ``what``.

    A context manager: the bar is drawn while it is open and removed after.
    ``clock`` is injectable, so the every-few-seconds lines are tested without
    waiting; ``started`` is when the work began, by that clock (default: now).
    """

    def __init__(
        self,
        what: str,
        total: int,
        *,
        mode: Mode,
        err: TextIO,
        unit: str = "commands",
        clock: Callable[[], float] = time.monotonic,
        force_terminal: bool | None = None,
        started: float | None = None,
    ) -> None:
        what = visible(what)  # a scenario's name or a file's: text from outside
        self.what, self.total, self.mode, self.err, self.unit = what, total, mode, err, unit
        self._clock = clock
        self._started = clock() if started is None else started
        self._last_line = self._started
        self._last_draw = self._started
        self._bar: Any = None
        self._task: Any = None
        if mode == "bar":
            self._bar, self._task = _bar(what, total, unit, err, force_terminal)

    def __enter__(self) -> "Progress":
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, done: int) -> None:
        """``done`` units of the total are finished."""
        if self.mode == "bar":
            self._draw(done, final=done == self.total)
        elif self.mode == "lines":
            now = self._clock()
            if now - self._last_line >= LINE_SECONDS or done == self.total:
                self._last_line = now
                print(self.line(done, now - self._started), file=self.err, flush=True)

    def update_fraction(self, done: float) -> None:
        """Part of a unit is finished too (a cell's commands): the bar moves, and a line
        is written as the clock allows."""
        if self.mode == "bar":
            self._draw(done, final=False)
        elif self.mode == "lines":
            now = self._clock()
            if now - self._last_line >= LINE_SECONDS:
                self._last_line = now
                print(self.line(done, now - self._started), file=self.err, flush=True)

    def _draw(self, done: float, *, final: bool) -> None:
        """Move the bar; draw it when ``DRAW_SECONDS`` have passed, or at the end."""
        now = self._clock()
        draw = final or now - self._last_draw >= DRAW_SECONDS
        if draw:
            self._last_draw = now
        self._bar.update(self._task, completed=done, refresh=draw)

    def line(self, done: float, elapsed: float) -> str:
        """The line written for ``done`` units after ``elapsed`` seconds."""
        rate = done / elapsed if elapsed > 0 else 0.0
        left = ""
        if 0 < done < self.total and rate > 0:
            left = f", about {(self.total - done) / rate:.0f} s left"
        count = f"{done:,}" if float(done).is_integer() else f"{done:,.1f}"
        return f"{self.what}: {count}/{self.total:,} {self.unit} ({rate:,.1f}/s{left})"


def _bar(what: str, total: int, unit: str, err: TextIO, force_terminal: bool | None) -> Any:
    """A rich progress bar on ``err`` and its one task: rate and time left shown."""
    from rich.console import Console  # noqa: PLC0415 (rich only when a bar is drawn)
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as RichProgress  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    class Rate(ProgressColumn):
        """Units per second, as rich measures them."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f} {unit}/s")

    console = Console(file=err, force_terminal=force_terminal)
    bar = RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        auto_refresh=False,
    )
    task = bar.add_task(what, total=total)
    return bar, task


class Stages:
    """Work done in stages one after another (``check``'s reading, invariants and
    re-decision), each with its own total: one ``Progress`` per stage, named
    ``what: stage`` (``what`` for a stage named ""), opened by the stage's first
    ``update`` and closed when the next stage begins, at ``close`` or when the work ends.
    A context manager, like ``Progress``; one stage is work whose total is known only
    once it has begun (``import``'s messages)."""

    def __init__(
        self,
        what: str,
        *,
        mode: Mode,
        err: TextIO,
        unit: str = "commands",
        clock: Callable[[], float] = time.monotonic,
        force_terminal: bool | None = None,
    ) -> None:
        self.what, self.mode, self.err, self.unit = what, mode, err, unit
        self._clock, self._force_terminal = clock, force_terminal
        self._stage: str | None = None
        self._current: Progress | None = None
        self._began = clock()

    def __enter__(self) -> "Stages":
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def update(self, stage: str, done: int, total: int) -> None:
        """``done`` of the ``total`` units of ``stage`` are finished."""
        if self.mode == "off":
            return
        if stage != self._stage or self._current is None:
            self.close()
            self._stage = stage
            # A stage began when the one before it last reported (or the work began).
            began, self._began = self._began, self._clock()
            self._current = Progress(
                f"{self.what}: {stage}" if stage else self.what,
                total,
                mode=self.mode,
                err=self.err,
                unit=self.unit,
                clock=self._clock,
                force_terminal=self._force_terminal,
                started=began,
            ).__enter__()
        else:
            self._began = self._clock()
        self._current.update(done)

    def close(self) -> None:
        """Close the stage under way (its bar gone, its last line written), if any."""
        if self._current is not None:
            self._current.__exit__(None, None, None)
            self._current = None
