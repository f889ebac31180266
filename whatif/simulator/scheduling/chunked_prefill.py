"""Chunked prefill (Sarathi-Serve, vLLM V1): every running decode first, then prefill chunks fill the token
budget: the running sequences' unfinished prompts in running order, then new requests in arrival order."""
from __future__ import annotations

from .core import Scheduler
from .policy import Policy
from .sequence import Batch
from ...accel.marks import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)   # (compiled: users' policies subclass it)
class ChunkedPrefill(Policy):
    chunks = True

    def form(self, core: Scheduler, batch: Batch, now: float) -> None:
        budget = core.decodes(batch)
        if core.open_prefills:   # (continue_prefills' own first test, before a call per step)
            budget = core.continue_prefills(batch, budget)
        core.admit_chunks(batch, budget, now)

    def admits(self, core: Scheduler) -> bool:
        if not core.waiting and not core.open_prefills:   # (asked after most decode steps: nothing to look at)
            return False
        budget = core.cfg.token_budget - len(core.decoding)   # (core.decode_budget(), inlined: asked after every event)
        if budget < 0:
            budget = 0
        return (core.open_prefills and core.can_continue_prefills(budget)) or core.can_admit_chunk(budget)
