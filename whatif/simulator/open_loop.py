"""An open-loop load on the clock: each record handed to the cluster at its request's arrival time.

One call on the clock per wait (no process resumed per arrival): deliver the records due now, then wait for the
next one, the steps a process waiting out each arrival's delay would take. It reports progress and runs the
certain-miss watch (certain_miss.watch) as it goes. An object, not closures over simulate's locals, so that nothing
but the clock's queue and the cluster's `on_finish` reach it, and `release` cuts it from the records: a closure that
calls itself, or a compiled build's closure environment (which holds every nested function of the scope), would
keep a finished run's records in a reference cycle, freed only by the collector (tests/test_sim_collections.py)."""
from __future__ import annotations

from collections.abc import Callable
from heapq import heappush

from .clock import NORMAL


class OpenLoop:
    def __init__(self, env, cluster, records: list, progress: Callable[[int, int], None] | None,
                 check: Callable | None, every: int):
        self.env, self.cluster, self.records = env, cluster, records
        self.progress, self.step = progress, max(1, len(records) // 100)
        self.check, self.every = check, every   # certain_miss.watch's check, every `every` arrivals and finishes
        self.arrived = 0        # records delivered so far (the first `arrived`)
        self.finished = 0       # requests finished (counted only under a watch)

    def deliver(self, due=None) -> None:
        """Deliver the records due now, then wait on the clock for the next one. `due`: the index of the record whose
        wait ran out (None at the start): delivered without asking the clock again, and no flag kept for it (the
        index, not the record, waits in the clock's queue: a run cut at a horizon keeps no record there)."""
        env, records, progress, check = self.env, self.records, self.progress, self.check
        count, i = len(records), self.arrived
        while i < count:   # (none left, or released: a call queued at a horizon delivers nothing)
            rec = records[i]
            if due is None:
                delay = rec.request.arrival_s - env.now
                if delay > 0:   # (Clock.at, inlined: once per request; now + delay as SimPy adds it)
                    heappush(env.queue, (env.now + delay, NORMAL, next(env.eids), self.deliver, i))
                    return
            self.cluster.arrive(rec)
            self.arrived = i = i + 1
            if progress and (i - 1) % self.step == 0:
                progress(i - 1, count)
            if check is not None and i % self.every == 0:
                check(records, i, env.now)
            due = None

    def answered(self, _rec) -> None:
        """A request finished (cluster.on_finish under a watch): the watch looks again every `every` of them."""
        self.finished += 1
        if self.finished % self.every == 0:
            self.check(self.records, self.arrived, self.env.now)

    def release(self) -> None:
        """The run is over: hold no record (a call still queued at a horizon keeps this object)."""
        self.records = []
