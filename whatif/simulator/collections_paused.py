"""Python's cyclic garbage collector held back while a simulation runs.

A run allocates a few small objects per iteration (log rows, heap entries, token runs) and keeps
every request's record alive to the end, so with the default thresholds the collector runs every
700 allocations and its older generations keep rescanning the same live records: about a tenth of
a run's CPU, reclaiming next to nothing (what a run drops, reference counting frees). The objects
alive at the start are frozen (never scanned) and the collector is switched off until the run ends: a run
makes no garbage cycles per request (a 20,000-request simulate with the collector off left 50 cyclic
objects, the cluster's and clock's own, for a collection after it), so its young collections (every
YOUNG_THRESHOLD allocations before session 59: ~27 ms of a 50,000-request run, gc.callbacks) only walked live
objects. Thresholds, frozen objects and the collector's switch are restored after the run."""
from __future__ import annotations

import gc
from contextlib import contextmanager

YOUNG_THRESHOLD = 100_000  # allocations between young collections (CPython's default is 700), were the collector on:
#                            a caller that switches it back on inside the pause gets this threshold


class Paused:
    """What `collections_paused` yields: `freeze()` freezes the objects alive now too (the run's records,
    built inside the pause), where the pause froze the ones before it."""

    def __init__(self, freezing: bool):
        self.freezing = freezing

    def freeze(self) -> None:
        if self.freezing:
            gc.freeze()


@contextmanager
def collections_paused():
    thresholds = gc.get_threshold()
    freeze = gc.get_freeze_count() == 0   # (leave a caller's own frozen objects to the caller)
    if freeze:
        gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    enabled = gc.isenabled()
    gc.disable()   # (no cycles to find: see the module's docstring)
    try:
        yield Paused(freeze)
    finally:
        if enabled:
            gc.enable()
        gc.set_threshold(*thresholds)
        if freeze:
            gc.unfreeze()
