"""One engine's scheduler: which sequences run in the next iteration, with how many tokens each.

State mirrors vLLM: a sequence has `total` tokens (prompt + generated) of which `computed` have KV
in the cache; an iteration computes some of the rest, and when a sequence's computed tokens reach
its total it emits a token. Decoding is computing the one token left.

Policies (EngineConfig):
- chunked prefill (Sarathi-Serve, vLLM V1): every running decode first, then prefill chunks fill
  the token budget: unfinished prefills, then new requests in arrival order.
- prefill-priority (vLLM V0): when a waiting prompt can be admitted, the iteration prefills whole
  prompts only; otherwise it decodes every running sequence.
- decode-priority: a batch is formed from the requests waiting when the engine runs dry, prefilled,
  then decoded until it drains; finished sequences leave it.
- static (request-level, FasterTransformer): as decode-priority, but KV for the whole output is
  reserved at admission and finished sequences stay in the batch as padding until all finish.
With a decoder (speculative or multi-token decoding) a decode row verifies its drafted tokens in
the same pass: it holds KV slots for them (lookahead), takes that many tokens of the budget, and
gains the tokens its acceptance draws (times.accepted_tokens), several at one time.
A running decode that needs a new block when none is free preempts the most recently admitted
sequence: by recompute (its KV is dropped and it queues first to prefill again) or by swap (its KV
is copied to host memory and back when blocks free up; the copies stall the iteration)."""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from .block_manager import BlockManager
from .config import EngineConfig
from .request import FINISHED, QUEUED, RUNNING, Record


class Seq:
    __slots__ = ("rec", "req", "total", "computed", "generated", "blocks", "shared", "published", "swapped",
                 "done", "looked_up", "source")

    def __init__(self, rec: Record):
        self.rec = rec
        self.req = rec.request
        self.total = self.req.prompt    # prompt + generated tokens
        self.computed = 0               # tokens with KV in the cache
        self.generated = 0
        self.blocks = 0                 # private KV blocks held
        self.shared: list[tuple] = []   # cached prefix blocks referenced
        self.published = 0              # leading blocks already offered to the prefix cache
        self.swapped = 0                # blocks in host memory (swap preemption)
        self.done = False               # finished but kept as padding (static batching)
        self.looked_up = False          # prefix cache consulted for this admission
        self.source = None              # disaggregated: (replica, blocks, shared keys) still holding its KV

    @property
    def held(self) -> int:
        return self.blocks + len(self.shared)

    @property
    def prefilling(self) -> bool:
        """Tokens to compute before its next token: all but decoding's one left (or a prompt's last)."""
        return not self.done and (self.total - self.computed > 1 or not self.generated)


@dataclass
class Batch:
    decode: list[Seq] = field(default_factory=list)
    prefill: list[tuple[Seq, int]] = field(default_factory=list)   # (sequence, tokens computed now)
    padding: list[Seq] = field(default_factory=list)               # static batching's finished rows
    swap_s: float = 0.0
    preempted: int = 0

    def __bool__(self) -> bool:
        return bool(self.decode or self.prefill or self.padding)

    @property
    def decode_context(self) -> int:
        """Mean cached tokens over the decode rows (padding included)."""
        rows = len(self.decode) + len(self.padding)
        if not rows:
            return 0
        return (sum(s.computed for s in self.decode) + sum(s.computed for s in self.padding)) // rows


class Scheduler:
    def __init__(self, cfg: EngineConfig, bm: BlockManager, waiting: deque, incoming: deque, times,
                 swap_blocks: int, hooks, seed: str = ""):
        self.cfg = cfg
        self.bm = bm
        self.waiting = waiting        # shared by the replica's engines (pipeline-parallel virtual engines)
        self.incoming = incoming      # disaggregated decode: prefilled sequences waiting for their KV to move
        self.times = times
        self.swap_blocks = swap_blocks
        self.hooks = hooks            # replica callbacks: first_token(seq, engine) -> moved on?, finished(seq),
        #                               receive(seq, engine) (disaggregated KV arriving)
        self.running: list[Seq] = []
        self.swapped_out: deque[Seq] = deque()
        self.filling = 0              # drain policies: requests still to admit into the forming batch
        self.left = False             # a sequence finished or moved on in the last iteration
        self.arriving = 0             # disaggregated decode: sequences admitted whose KV is still moving
        self.drain = cfg.batching == "static" or (cfg.priority == "decode" and not cfg.chunked_prefill)
        self.lookahead = times.lookahead   # drafted tokens a decode row verifies beside its next one
        self.rng = random.Random(f"accept-{seed}")

    # ------------------------------------------------------------ forming an iteration

    def schedule(self, now: float) -> Batch:
        batch = Batch()
        self._swap_in(batch)
        self._admit_incoming()
        if self.drain:
            if not self.running and not self.filling:
                self.filling = len(self.waiting)   # the batch is what waits now
            if self.filling:
                self._admit_whole(batch, now)
                if batch.prefill:
                    return batch
                self.filling = 0
            self._decodes(batch)
            return batch
        if self.cfg.chunked_prefill:
            budget = self._decodes(batch)
            budget = self._continue_prefills(batch, budget)
            self._admit_chunks(batch, budget, now)
            return batch
        self._admit_whole(batch, now)   # prefill-priority
        if not batch.prefill:
            self._decodes(batch)
        return batch

    def _decodes(self, batch: Batch) -> int:
        """Schedule every running decode (preempting from the back when blocks run out); returns
        the token budget left."""
        budget = self.cfg.token_budget
        size = self.bm.block_size
        ahead = self.lookahead
        i = 0
        while i < len(self.running):
            s = self.running[i]
            if s.done:
                batch.padding.append(s)
            elif s.total - s.computed == 1 and s.generated:
                held = s.blocks + len(s.shared)
                if held * size <= s.computed + ahead:   # no slot for its next token (and drafts): allocate
                    need = -(-(s.computed + 1 + ahead) // size) - held
                    while not self.bm.can_allocate(need):
                        victim = self.running.pop()
                        self._preempt(victim, batch)
                        if victim is s:
                            break
                    if s.rec.status != RUNNING or s not in self.running[i:i + 1]:
                        continue
                    self.bm.allocate(need)
                    s.blocks += need
                batch.decode.append(s)
                budget -= 1 + ahead
            i += 1
        return max(budget, 0)

    def _continue_prefills(self, batch: Batch, budget: int) -> int:
        for s in self.running:
            if budget <= 0:
                break
            if s.prefilling:
                n = self._chunk(s, budget, keep_watermark=False)
                # Prefills alone, stuck for blocks: make room by preemption (the last one alone always fits).
                while not n and not batch and self.running[-1] is not s:
                    self._preempt(self.running.pop(), batch)
                    n = self._chunk(s, budget, keep_watermark=False)
                if not n and not batch and self.bm.used > s.held:
                    # Alone here, but another virtual engine (pp) holds the blocks: step back so it can finish.
                    self.running.remove(s)
                    self._preempt(s, batch)
                    break
                if n:
                    batch.prefill.append((s, n))
                    budget -= n
        return budget

    def _admit_chunks(self, batch: Batch, budget: int, now: float) -> None:
        while budget > 0 and self.waiting and not self.swapped_out and len(self.running) < self.cfg.max_batch:
            s = self.waiting[0]
            self._lookup(s)
            n = self._chunk(s, budget, keep_watermark=True)
            if not n:
                self._undo_lookup(s)
                break
            self.waiting.popleft()
            self._start(s, now)
            batch.prefill.append((s, n))
            budget -= n

    def _admit_whole(self, batch: Batch, now: float) -> None:
        """Admit waiting prompts whole (at least one, even past the budget) while they fit."""
        budget = self.cfg.token_budget
        static = self.cfg.batching == "static"
        while self.waiting and not self.swapped_out and len(self.running) < self.cfg.max_batch:
            s = self.waiting[0]
            self._lookup(s)
            n = s.total - s.computed
            final = s.req.prompt + s.req.output - 1 if static else s.total   # static reserves the whole output
            need = self._blocks_for(final) - s.held
            if (batch.prefill and n > budget) or not self.bm.can_allocate(need, keep_watermark=True):
                self._undo_lookup(s)
                break
            self.waiting.popleft()
            self.bm.allocate(need)
            s.blocks += need
            self._start(s, now)
            batch.prefill.append((s, n))
            budget -= n
            if self.filling:
                self.filling -= 1
                if not self.filling:
                    break

    def _chunk(self, s: Seq, budget: int, keep_watermark: bool) -> int:
        """Tokens of `s` to prefill now (within the budget and the free blocks), blocks allocated."""
        size = self.bm.block_size
        n = min(s.total - s.computed, budget)
        room = self.bm.available - (self.bm.watermark_blocks if keep_watermark else 0)
        n = min(n, max(0, (s.held + room) * size - s.computed))
        if n <= 0:
            return 0
        need = self._blocks_for(s.computed + n) - s.held
        self.bm.allocate(need)
        s.blocks += need
        return n

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.bm.block_size)

    def _lookup(self, s: Seq) -> None:
        if s.looked_up or s.computed or not self.bm.prefix_caching or s.req.prefix_id is None:
            return
        limit = max(s.req.prefix_tokens, s.req.shared_tokens)
        s.shared = self.bm.lookup(s.req.prefix_id, min(limit, s.total - 1) // self.bm.block_size)
        s.computed = len(s.shared) * self.bm.block_size
        s.published = len(s.shared)
        s.looked_up = True

    def _undo_lookup(self, s: Seq) -> None:
        if s.looked_up and not s.blocks:
            self.bm.unref(s.shared)
            s.shared, s.computed, s.published, s.looked_up = [], 0, 0, False

    def _start(self, s: Seq, now: float) -> None:
        rec = s.rec
        if rec.first_scheduled_s is None:
            rec.first_scheduled_s = now
            rec.cached_tokens = s.computed
        rec.status = RUNNING
        self.running.append(s)

    def _swap_in(self, batch: Batch) -> None:
        while self.swapped_out and len(self.running) < self.cfg.max_batch:
            s = self.swapped_out[0]
            if not self.bm.can_allocate(s.swapped):
                break
            self.swapped_out.popleft()
            self.bm.allocate(s.swapped)
            batch.swap_s += self.times.swap_time(s.swapped, "h2d")
            self.swap_blocks += s.swapped
            s.blocks, s.swapped = s.swapped, 0
            self.running.append(s)

    def _admit_incoming(self) -> None:
        """Disaggregated decode: take prefilled sequences whose KV fits here; their KV starts moving."""
        while self.incoming and len(self.running) + self.arriving < self.cfg.max_batch:
            s = self.incoming[0]
            need = self._blocks_for(s.computed + 1)
            if not self.bm.can_allocate(need, keep_watermark=True):
                break
            self.incoming.popleft()
            self.bm.allocate(need)
            s.blocks = need
            self.arriving += 1
            self.hooks.receive(s, self)

    def _preempt(self, s: Seq, batch: Batch) -> None:
        batch.preempted += 1
        s.rec.preemptions += 1
        held = s.held
        self._release(s)
        if self.cfg.preemption == "swap" and held <= self.swap_blocks:
            batch.swap_s += self.times.swap_time(held, "d2h")
            self.swap_blocks -= held
            s.swapped = held
            self.swapped_out.append(s)
            return
        # recompute: prefill prompt + generated tokens again, first in line
        s.computed, s.published, s.looked_up = 0, 0, False
        s.rec.status = QUEUED
        self.waiting.appendleft(s)

    # ------------------------------------------------------------ after an iteration

    def complete(self, batch: Batch, end: float) -> None:
        if self.lookahead:
            if batch.decode:
                self._complete_rounds(batch, end)
        else:
            for s in batch.decode:   # the hot loop: _emit's common case in line
                s.computed += 1
                s.rec.token_times.append(end)
                s.generated += 1
                if s.generated < s.req.output:
                    s.total += 1
                else:
                    self._finish(s, end)
        for s, n in batch.prefill:
            s.computed += n
            if s.computed == s.total:
                self._emit(s, end)
        if self.bm.prefix_caching:
            for s in batch.decode:
                self._publish(s)
            for s, _ in batch.prefill:
                self._publish(s)
        if self.left:
            self.left = False
            if self.cfg.batching == "static":
                self.running = [s for s in self.running if s.source is None]   # handed on to a decode pool
                if all(s.done for s in self.running):   # the padded batch has drained
                    for s in self.running:
                        self._release(s)
                    self.running = []
            else:
                self.running = [s for s in self.running if s.rec.status == RUNNING and s.source is None]

    def _complete_rounds(self, batch: Batch, end: float) -> None:
        """Each decode row computed its next token and the drafts it accepted: it keeps those and
        gains one more token from the verify pass, all emitted at the round's end."""
        rows = len(batch.decode) + len(batch.padding)
        gained = self.times.accepted_tokens(rows, batch.decode_context, self.rng)
        for s, n in zip(batch.decode, gained):
            for _ in range(n):
                s.computed += 1
                s.rec.token_times.append(end)
                s.generated += 1
                if s.generated >= s.req.output:
                    self._finish(s, end)
                    break
                s.total += 1

    def _emit(self, s: Seq, end: float) -> None:
        rec = s.rec
        rec.token_times.append(end)
        if rec.first_token_s is None:
            rec.first_token_s = end
        s.generated += 1
        if s.generated >= s.req.output:
            self._finish(s, end)
            return
        s.total += 1
        if s.generated == 1 and self.hooks.first_token(s, self):
            self.left = True

    def _finish(self, s: Seq, end: float) -> None:
        s.rec.finish_s = end
        s.rec.status = FINISHED
        if self.cfg.batching == "static":
            s.done = True
        else:
            self._release(s)
        self.left = True
        self.hooks.finished(s)

    def _release(self, s: Seq) -> None:
        self.bm.release(s.blocks)
        self.bm.unref(s.shared)
        s.blocks, s.shared = 0, []

    def _publish(self, s: Seq) -> None:
        """Offer the sequence's full blocks that later requests of its prefix id reuse to the cache."""
        pid = s.req.prefix_id
        if pid is None:
            return
        full = min(s.computed, s.req.shared_tokens) // self.bm.block_size
        while s.published < full:
            if s.blocks and self.bm.publish((pid, s.published)):
                s.blocks -= 1
                s.shared.append((pid, s.published))
            s.published += 1
