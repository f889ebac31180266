"""A sequence as one engine holds it (Seq) and one iteration's work (Batch).

A sequence has `total` tokens (prompt + generated) of which `computed` have KV in the cache; an iteration
computes some of the rest, and when its computed tokens reach its total it emits a token. Decoding is
computing the one token left."""
from __future__ import annotations

from typing import Any

from ..request import Record


class Seq:
    __slots__ = ("rec", "req", "total", "computed", "generated", "blocks", "shared", "published", "swapped",
                 "done", "looked_up", "source", "order", "epoch", "anchor", "run_from", "in_running", "next_need",
                 "reserve")

    def __init__(self, rec: Record):
        self.rec = rec
        self.req = req = rec.request
        self.total = req.prompt         # prompt + generated tokens
        self.computed = 0               # tokens with KV in the cache
        self.generated = 0
        self.blocks = 0                 # private KV blocks held
        self.shared: list[tuple] = []   # cached prefix blocks referenced
        self.published = 0              # leading blocks already offered to the prefix cache
        self.swapped = 0                # blocks in host memory (swap preemption)
        self.done = False               # finished but kept as padding (static batching)
        self.looked_up = False          # prefix cache consulted for this admission
        self.source: Any = None         # disaggregated: (replica, blocks, shared keys) still holding its KV
        self.order = 0                  # rank in its engine's running list (later joins rank higher)
        self.epoch = 0                  # bumped when it stops decoding: its heap entries are stale
        self.anchor = 0                 # decoding: the engine step its counters are as of
        self.run_from = 0               # decoding: the engine step its current run of tokens starts at
        self.in_running = False
        self.next_need = 0              # decoding (no decoder): the next step it needs a KV block
        self.reserve = 0                # blocks set aside for its whole output (reserve capacity)

    @property
    def held(self) -> int:
        return self.blocks + len(self.shared)

    @property
    def prefilling(self) -> bool:
        """Tokens to compute before its next token: all but decoding's one left (or a prompt's last)."""
        return not self.done and (self.total - self.computed > 1 or not self.generated)


class Batch:
    """One iteration's work, as the scheduler forms it (a plain slotted class: one is made per iteration)."""

    __slots__ = ("rows", "context", "decoding", "decode", "prefill", "swap_s", "preempted")

    def __init__(self, rows: int = 0, context: int = 0, decoding: int = 0):
        self.rows = rows                # decode rows: decoding sequences and static batching's finished padding
        self.context = context          # cached tokens over the decode rows
        self.decoding = decoding        # decode rows that gain tokens (padding excluded)
        self.decode: list[Seq] | tuple = ()   # the decoding rows (with a decoder only; a list set by Scheduler.decodes)
        self.prefill: list[tuple[Seq, int]] = []   # (sequence, tokens computed now)
        self.swap_s = 0.0
        self.preempted = 0

    def __bool__(self) -> bool:
        return bool(self.rows or self.prefill)

    @property
    def decode_context(self) -> int:
        """Mean cached tokens over the decode rows (padding included)."""
        return self.context // self.rows if self.rows else 0


def own_key(s: Seq) -> tuple:
    """The prefix-cache key of the blocks a preempted sequence left cached (SchedulerConfig.preempted_blocks_cached)."""
    return ("own", s.req.id)
