"""How a replica's engine loop steps: the functions that take the run's exact shortcuts, and an observer of each step.

Each shortcut leaves the run the same, iteration for iteration and float for float: moving the clock without a
queued wait (clock.advance; tests/test_sim_clock.py), decode-only iterations in one loop (decode_run.decode_run)
and their stretches as array updates (decode_run._span; tests/test_sim_decode_run.py). simulate(stepping=...)
hands a Stepping to every replica, so a test passes its own functions (counting the shortcuts taken, or never
taking them) and checks (`observe`) as a parameter: swapping module names would not reach code that binds them
at import, as a mypyc build of the simulator does (docs/accuracy.md, Session 64 A)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .clock import advance
from .decode_run import _span, decode_run


@dataclass(frozen=True)
class Stepping:
    """The shortcut functions a replica's loop calls, and its step observer (None: none)."""

    advance: Callable = advance          # (clock, delay) -> moved on? (False: the loop waits on the clock)
    decode_run: Callable = decode_run    # (replica, scheduler) -> decode_run.Waiting | None
    span: Callable = _span               # decode_run's stretch: its arguments -> (steps, blocks, price, last step)
    observe: Callable | None = None      # (scheduler, batch) after the replica loop completes each batch


EXACT = Stepping()   # what a run takes unless told otherwise


def observed(scheduler, observe: Callable) -> Callable:
    """`scheduler.complete`, then `observe(scheduler, batch)`: the replica loop's completion with a caller's check."""
    complete = scheduler.complete

    def completed(batch, end: float) -> None:
        complete(batch, end)
        observe(scheduler, batch)
    return completed


def never_advance(clock, delay: float) -> bool:
    """Stepping.advance that always waits on the clock (the run without that shortcut)."""
    return False


def no_decode_run(replica, scheduler) -> None:
    """Stepping.decode_run that runs nothing (every iteration through the replica's full loop)."""
    return None


def no_span(*args) -> tuple[int, int, float, int]:
    """Stepping.span that takes no stretch (decode_run steps one iteration at a time)."""
    return 0, 0, 0.0, 0


WITHOUT_SHORTCUTS = Stepping(never_advance, no_decode_run, no_span)   # the slow, plain run the shortcuts must equal
