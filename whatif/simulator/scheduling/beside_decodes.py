"""Whole prompts beside the decodes (TensorRT-LLM's inflight batching without chunked context): every running
decode, then waiting prompts whole while they fit the token budget the decodes leave (a prompt longer than
the budget runs only in an iteration of its own)."""
from __future__ import annotations

from .core import Scheduler
from .policy import Policy
from .sequence import Batch
from ...accel.marks import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)   # (compiled: users' policies subclass it)
class WholePromptsBesideDecodes(Policy):
    def form(self, core: Scheduler, batch: Batch, now: float) -> None:
        core.admit_whole(batch, now, core.decodes(batch))

    def admits(self, core: Scheduler) -> bool:
        return core.can_admit_whole(core.decode_budget())
