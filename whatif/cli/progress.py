"""The progress bar of a simulation: one line on stderr, redrawn in place, only on a terminal."""
from __future__ import annotations

import shutil
import sys
import time
from contextlib import contextmanager

PROGRESS_DELAY_S = 2.0     # runs shorter than this print no bar (assumed: "a few seconds", issue 6)
BAR_CELLS = 30             # characters of the bar itself


class ProgressLine:
    """One line on `stream`, redrawn in place with '\\r', silent until the run has taken more than `delay_s`;
    a subclass says what the line reads (`text`)."""

    def __init__(self, stream, delay_s: float = PROGRESS_DELAY_S, clock=time.monotonic):
        self.stream, self.delay_s, self.clock = stream, delay_s, clock
        self.start = clock()
        self.label = ""          # e.g. which capacity run this is
        self.drawn = 0           # characters on the line now, to blank it

    def __call__(self, done: int, total: int) -> None:
        elapsed = self.clock() - self.start
        if elapsed <= self.delay_s or not total:
            return
        share = done / total
        cells = int(share * BAR_CELLS)
        line = f"{self.label}[{'#' * cells}{'.' * (BAR_CELLS - cells)}] {self.text(done, total, elapsed)}"
        line = line[:max(10, shutil.get_terminal_size().columns - 1)]   # a wrapped line cannot be redrawn
        self.stream.write("\r" + line.ljust(self.drawn))
        self.stream.flush()
        self.drawn = max(self.drawn, len(line))

    def text(self, done: int, total: int, elapsed: float) -> str:
        raise NotImplementedError

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
            self.drawn = 0


class ProgressBar(ProgressLine):
    """progress(arrived, total) for simulate(): share of requests arrived, elapsed wall seconds."""

    def text(self, done: int, total: int, elapsed: float) -> str:
        return f"{done / total:4.0%} of {total} requests arrived, {elapsed:.0f} s"


def add_progress_flag(group) -> None:
    group.add_argument("--no-progress", action="store_true",
                       help=f"no progress bar (one is drawn on stderr, when it is a terminal, for runs over "
                            f"{PROGRESS_DELAY_S:g} s)")


def progress_bar(args) -> ProgressBar | None:
    """The bar a command draws: none with --no-progress or when stderr is not a terminal."""
    if args.no_progress or not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr)


@contextmanager
def progress(args):
    """The progress bar of one command (None when off), cleared however the command ends."""
    bar = progress_bar(args)
    try:
        yield bar
    finally:
        if bar is not None:
            bar.clear()
