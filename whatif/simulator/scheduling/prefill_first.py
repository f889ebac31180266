"""Prefill-first (vLLM V0; SGLang without --enable-mixed-chunk, the same steps): when a waiting prompt can be
admitted, the iteration prefills whole prompts only; otherwise it decodes every running sequence."""
from __future__ import annotations

from .core import Scheduler
from .policy import Policy
from .sequence import Batch
from ...accel.marks import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)   # (compiled: users' policies subclass it)
class PrefillFirst(Policy):
    def form(self, core: Scheduler, batch: Batch, now: float) -> None:
        core.admit_whole(batch, now)
        if not batch.prefill:
            core.decodes(batch)

    def admits(self, core: Scheduler) -> bool:
        return core.can_admit_whole()
