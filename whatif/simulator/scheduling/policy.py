"""A scheduling policy: how one engine forms an iteration from its core (core.py). One per file, named in
registry.py.

`form` fills the batch through the core's steps: `decodes` (every decoding row, blocks given and preemption
done; returns the token budget left), `continue_prefills`, `admit_chunks`, `admit_whole`. `admits` says,
without side effects, whether `form` would admit or prefill anything now (the core's can_* questions answer
for each step): while it says no, the engine's decode-only iterations run in one loop (decode_run.py), so an
answer that misses an admission changes the run. Each engine has its own policy object (it may keep state)."""
from __future__ import annotations

from .core import Scheduler
from .sequence import Batch
from ...accel.marks import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)   # (compiled: users' policies subclass it)
class Policy:
    chunks = False          # prompts prefilled in chunks: the core keeps the part-prefilled ones in running order
    reserves = True         # capacity=reserve sets a request's whole-output blocks aside at admission
    request_level = False   # static batching: whole output's KV taken at admission, finished rows kept as padding

    def form(self, core: Scheduler, batch: Batch, now: float) -> None:
        raise NotImplementedError

    def admits(self, core: Scheduler) -> bool:
        raise NotImplementedError
