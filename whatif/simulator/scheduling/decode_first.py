"""Decode-first: a batch is formed from the requests waiting when the engine runs dry, prefilled whole, then
decoded until it drains; finished sequences leave it, and nothing joins it meanwhile."""
from __future__ import annotations

from .core import Scheduler
from .policy import Policy
from .sequence import Batch
from ...accel.marks import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)   # (compiled: users' policies subclass it)
class DecodeFirst(Policy):
    reserves = False   # (its batch is sized once, from what waits: capacity=reserve is not applied, as always)

    def __init__(self):
        self.filling = 0   # requests still to admit into the forming batch

    def form(self, core: Scheduler, batch: Batch, now: float) -> None:
        if not core.running and not self.filling:
            self.filling = len(core.waiting)   # the batch is what waits now
        if self.filling:
            self.filling -= core.admit_whole(batch, now, limit=self.filling)
            if batch.prefill:
                return
            self.filling = 0
        core.decodes(batch)

    def admits(self, core: Scheduler) -> bool:
        return bool(self.filling)   # (a batch still filling admits)
