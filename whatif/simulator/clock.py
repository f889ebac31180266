"""The simulator's discrete-event loop: a heap of calls keyed by (time, priority, sequence number).

It keeps SimPy's order of events (SimPy 4's Environment keys its queue the same way: an urgent
event before a normal one at the same time, then first scheduled first), with only what the
simulator uses: a call after a delay, a process (a generator that yields a delay in seconds, or a
`Signal` to wait on), a signal fired for every process waiting on it, and a run until the queue
empties or until a time. A SimPy event would add an Event object, its callbacks list and a process
resumption to each of these, a large share of the cost of a cheap iteration; the same calls in the
same order give the same run, iteration for iteration (tests/test_sim_clock.py)."""
from __future__ import annotations

from collections.abc import Callable, Generator
from heapq import heappop, heappush
from itertools import count
from typing import Any

from ..accel.marks import mypyc_attr

URGENT, NORMAL = 0, 1   # (simpy.events.URGENT and NORMAL)


@mypyc_attr(native_class=False)   # (compiled: a native class cannot extend list)
class Signal(list):
    """The processes waiting for one wake-up, in the order they began to wait (a list of generators)."""

    __slots__ = ()


class Clock:
    __slots__ = ("now", "queue", "eids", "resumer", "stop_at", "held")

    def __init__(self):
        self.now: Any = 0            # seconds (an int 0 at the start, as SimPy's clock)
        self.queue: list[tuple] = []   # (time, priority, sequence number, call, its argument)
        self.eids = count()
        self.resumer = self.resume   # (bound once: a resumption is queued per iteration)
        self.stop_at = float("inf")  # the time run(until) stops at
        self.held = False            # a process is making the calls due before its own resumption (run_until_mine)

    def at(self, delay: float, call: Callable | None, arg=None, priority: int = NORMAL) -> None:
        """Call `call(arg)` `delay` seconds from now (now + delay, as SimPy adds it)."""
        heappush(self.queue, (self.now + delay, priority, next(self.eids), call, arg))

    def peek(self) -> float:
        """The time of the next call (inf when none is queued)."""
        return self.queue[0][0] if self.queue else float("inf")

    def start(self, process: Generator) -> None:
        """Start a process now, before the normal calls due now (as env.process's urgent Initialize)."""
        self.at(0, self.resume, process, URGENT)

    def resume(self, process: Generator) -> None:
        """Run `process` to its next yield: a delay (seconds) resumes it then; a Signal when it fires."""
        try:
            wait = next(process)
        except StopIteration:
            self.at(0, _ended)   # (SimPy schedules a finished process's own event: the same queue)
            return
        if type(wait) is Signal:
            wait.append(process)
        else:
            heappush(self.queue, (self.now + wait, NORMAL, next(self.eids), self.resumer, process))

    def fire(self, signal: Signal) -> None:
        """Resume the processes waiting on `signal` in a normal call now (as an event's succeed)."""
        self.at(0, self._resume_all, signal)

    def _resume_all(self, signal: Signal) -> None:
        if len(signal) > 1:   # the later ones resume before any other call: none may make later calls meanwhile
            held, self.held = self.held, True
            try:
                for process in signal:
                    self.resume(process)
            finally:
                self.held = held
            return
        for process in signal:
            self.resume(process)

    def run(self, until: float | None = None) -> None:
        """Make the queued calls in order until none is left, or (`until`) up to that time: the clock then
        reads `until` and calls due at it are not made (SimPy's run(until) stops at an urgent event then)."""
        queue = self.queue
        if until is not None:
            at = until if isinstance(until, int) else float(until)
            if at <= self.now:
                raise ValueError(f"until ({at}) must be greater than the current simulation time")
            self.at(at - self.now, None, None, URGENT)
            self.stop_at = at
        while queue:
            self.now, _, _, call, arg = heappop(queue)
            if call is None:
                return
            call(arg)


def run_until_mine(clock: Clock, end: float) -> None:
    """What a running process's wait until `end` would do, without leaving the process: the calls queued before the
    resumption that wait would queue are made, in order, and the clock then reads `end` (the same calls in the same
    order and the same sequence numbers: a marker holds the resumption's place in the queue meanwhile). Callers
    check `end` < stop_at (a stop before it would leave the process suspended) and that no process is held."""
    queue = clock.queue
    mine: Any = (end, NORMAL, next(clock.eids), None, None)   # (Any: compiled, a typed tuple is unboxed: `is` fails)
    heappush(queue, mine)
    clock.held = True   # (a process resumed meanwhile waits as usual: the marker is its next event)
    try:
        while True:
            entry = heappop(queue)
            if entry is mine:
                break
            clock.now = entry[0]
            entry[3](entry[4])
    finally:
        clock.held = False
    clock.now = end


def _ended(_arg) -> None:
    """A finished process's event: nothing waits on it."""


def advance(env: Clock, delay: float) -> bool:
    """Move the clock `delay` on without queueing a resumption when no other call comes before then
    (strictly: at a tie the queue's order decides), which is what waiting would do: the same end time
    (now + delay), nothing else run in between. Most iterations end before the next arrival. False: wait."""
    end = env.now + delay
    queue = env.queue
    if not queue or end < queue[0][0]:
        env.now = end
        return True
    return False
