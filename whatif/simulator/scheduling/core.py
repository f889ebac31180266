"""One engine's scheduler core: the state every policy shares and the steps a policy forms an iteration from.

The core holds the running list, the waiting queue (shared by a replica's pp virtual engines), the KV block pool,
the swapped-out and awaiting-KV sequences, and the decoding set (decoding.py: the bookkeeping that makes an
iteration cost what changed). Each iteration it brings back what it can (arrived KV, swapped-out and awaiting-KV
sequences) and hands the batch to its policy (policy.py; one per file, named in registry.py), which fills it
through `decodes` and the admission steps (admission.py). After the iteration `complete` applies it: tokens are
emitted when a sequence's computed tokens reach its total, finished ones leave.

With a decoder (speculative or multi-token decoding) a decode row verifies its drafted tokens in the same pass:
it holds KV slots for them (lookahead), takes that many tokens of the budget, and gains the tokens its
acceptance draws (times.accepted_tokens), several at one time. A running decode that needs a new block when
none is free preempts the most recently admitted sequence: by recompute (its KV is dropped and it queues first
to prefill again, or last with preempted_queue_last, as SGLang's retract) or by swap (its KV is copied to host
memory and back when blocks free up; the copies stall the iteration)."""
from __future__ import annotations

import random
from collections import deque
from itertools import count
from typing import Any

from ..block_manager import BlockManager
from ..request import FINISHED, QUEUED
from .admission import Admission
from .token_ratio import TokenRatio, after_retract
from .decoding import DecodingSet
from .sequence import Batch, Seq, own_key


class Scheduler(Admission, DecodingSet):
    # Slotted: an instance dict past CPython's 30 shared keys is a plain dict, whose attribute reads and writes
    # (a few hundred a request) are ~1.3x slower than a slot's
    __slots__ = ("cfg", "policy", "bm", "waiting", "awaiting_kv", "times", "swap_blocks", "hooks", "running",
                 "swapped_out", "left", "kv_moving", "rng", "open_prefills", "chunking", "request_level", "reserving",
                 "token_ratio", "checks_admission", "rounds", "kv_arrived", "orders", "admit_before", "last_start",
                 "last_end",
                 # (the decoding set's, set up by DecodingSet._init_decoding)
                 "lookahead", "uniform", "step", "ends", "decoding", "context_base", "padding", "padding_context",
                 "needs", "phases", "visited", "ahead", "due_n", "dues",
                 "bound")   # (decode_run._bound's, for its replica: None until a decode run)

    def __init__(self, cfg, policy, bm: BlockManager, waiting: deque, awaiting_kv: deque, times,
                 swap_blocks: int, hooks, seed: str = ""):
        self.cfg = cfg                # SchedulerConfig: the limits (max_batch, token_budget), capacity, preemption
        self.policy = policy          # policy.Policy: forms each iteration (this engine's own: it may keep state)
        self.bm = bm
        self.waiting = waiting        # shared by the replica's engines (pipeline-parallel virtual engines)
        self.awaiting_kv = awaiting_kv  # disaggregated decode: prefilled sequences waiting for their KV to move
        self.times = times
        self.swap_blocks = swap_blocks
        self.hooks = hooks            # replica callbacks: first_token(seq, engine) -> moved on?, finished(seq),
        #                               receive(seq, engine) (disaggregated KV arriving)
        self.running: list[Seq] = []
        self.swapped_out: deque[Seq] = deque()
        self.left: list[Seq] = []     # sequences that finished or moved on in the last iteration
        self.kv_moving = 0            # disaggregated decode: sequences admitted whose KV is still moving
        self.rng = random.Random(f"accept-{seed}")
        self._init_decoding(bm.block_size, times.lookahead)
        self.open_prefills: list[tuple] = []   # chunking: (order, seq) with prompt tokens left, running order
        self.chunking = policy.chunks
        self.request_level = policy.request_level
        self.reserving = cfg.capacity == "reserve" and policy.reserves
        # capacity=ratio: SGLang's admission against its running requests' new_token_ratio reservation, in an
        # aggregated engine (PrefillAdder; a disaggregated pool admits by its own queues: not modelled so)
        self.token_ratio = TokenRatio() if cfg.capacity == "ratio" and getattr(hooks, "role", "mixed") == "mixed" \
            else None
        self.checks_admission = self.reserving or self.token_ratio is not None
        self.rounds = 0               # decode iterations with a decoder (self.step counts them without one)
        self.kv_arrived: list[Seq] = []   # disaggregated: KV arrived during an iteration; decode from the next
        self.orders = count(1)
        # An engine whose CPU runs a step ahead (spec cpu.overlapped: vLLM's async scheduling, SGLang's and
        # TensorRT-LLM's overlap schedulers) formed this step while the last one ran, so only requests that
        # arrived before the last step began can join it (Replica._run sets it; inf: no such bound).
        self.admit_before = float("inf")
        self.last_start = self.last_end = -1.0   # the latest iteration this engine ran (Replica, decode_run)
        self.bound: Any = None   # (decode_run._bound: what a decode run reads of this scheduler and its replica)

    # ------------------------------------------------------------ forming an iteration

    def schedule(self, now: float) -> Batch:
        batch = Batch()
        if self.kv_arrived:
            for s in self.kv_arrived:
                if s.in_running:
                    self._enter(s)
            self.kv_arrived.clear()
        if self.swapped_out:
            self._swap_in(batch)
        if self.awaiting_kv:
            self._admit_awaiting_kv()
        self.policy.form(self, batch, now)
        return batch

    def decodes(self, batch: Batch) -> int:
        """Schedule every decoding sequence: those due a KV block get it, in running order (preempting
        from the back when blocks run out); returns the token budget left."""
        if self.uniform:
            # this step's phase given its blocks, counted; when too few are free, each due sequence in running
            # order, preempting from the back
            if self.decoding and self.step > self.visited and self.take_due_blocks(self.step) < 0:
                self._shortage(self.phases[self.step % self.bm.block_size], batch)
        elif self.needs and self.needs[0][0] <= self.step:
            for s in self._due(self.needs):
                self._allocate(s, batch)
        rows = len(self.decoding)
        batch.decoding = rows
        batch.rows = rows + self.padding
        batch.context = self.context_base + rows * self.step + self.padding_context
        if not self.uniform:
            batch.decode = [s for s in self.running if s in self.decoding]
        left = self.cfg.token_budget - rows * (1 + self.lookahead)
        return left if left > 0 else 0

    def only_decodes(self) -> bool:
        """Whether the next iteration can do nothing but decode the decoding set: nothing arrives, and
        nothing swapped out, awaiting KV, part-prefilled or waiting can get blocks or budget now (the policy
        answers for what it would admit). It stays so while decodes take blocks (free blocks only shrink
        until a sequence finishes), which decode_run.py relies on."""
        if not self.uniform or self.kv_arrived or not self.decoding:
            return False
        swapped = self.swapped_out
        if swapped and len(self.running) < self.cfg.max_batch and self.bm.can_allocate(swapped[0].swapped):
            return False   # (_swap_in)
        if self.awaiting_kv and self._can_take_awaiting_kv():
            return False
        return not self.policy.admits(self)

    def _allocate(self, s: Seq, batch: Batch) -> None:
        """Give decoding `s` the blocks for its next token (and drafts), preempting from the back of the
        running list while there are too few (it may be the one preempted)."""
        if s not in self.decoding:   # preempted for an earlier one
            return
        self._sync(s)
        need = -(-(s.computed + 1 + self.lookahead) // self.bm.block_size) - s.held
        while not self.bm.can_allocate(need):
            victim = self.running.pop()
            self._preempt(victim, batch)
            if victim is s:
                return
        self.bm.allocate(need)
        s.blocks += need
        if self.uniform:
            self._unregister(s)
        self._push_need(s)

    def _preempt(self, s: Seq, batch: Batch) -> None:
        """Take `s` (already out of the running list) off the GPU."""
        s.in_running = False
        if s in self.decoding:
            self._leave(s)
        elif s.done:
            self.padding -= 1
            self.padding_context -= s.computed
        batch.preempted += 1
        s.rec.preemptions += 1
        if self.token_ratio is not None:
            self._retracted()
        held = s.held
        swap = self.cfg.preemption == "swap" and held <= self.swap_blocks
        keep = not swap and self.cfg.preempted_blocks_cached and self.bm.prefix_caching
        if keep:
            self._cache_own_blocks(s)
        self._release(s, tail_first=keep)
        if swap:
            batch.swap_s += self.times.swap_time(held, "d2h")
            self.swap_blocks -= held
            s.swapped = held
            self.swapped_out.append(s)
            return
        # recompute: prefill prompt + generated tokens again, first in line (SGLang: last)
        s.computed, s.published, s.looked_up = 0, 0, False
        s.rec.status = QUEUED
        if self.cfg.preempted_queue_last:
            self.waiting.append(s)
        else:
            self.waiting.appendleft(s)

    # ------------------------------------------------------------ after an iteration

    def complete(self, batch: Batch, end: float) -> None:
        offered: list[Seq] | tuple = ()
        uniform = self.uniform
        if batch.decoding and uniform:   # every decoding row gained a token at `end`
            if not batch.prefill:
                self.complete_decodes(end)
                return
            offered = self._advance(end)
        elif batch.decode:
            self.rounds += 1
            self._complete_rounds(batch, end)
            offered = batch.decode
        for s, n in batch.prefill:
            s.computed += n
            if s.computed == s.total:
                self._emit(s, end)
            elif not s.prefilling:   # a recomputed sequence one token short: that token is a decode's
                self._enter(s)
        open_prefills = self.open_prefills
        if batch.prefill and open_prefills:   # drop the prompts done (continue_prefills would), so that
            if len(open_prefills) == 1:   # asking it costs nothing (one open prompt, most often: no list made)
                order, s = open_prefills[0]
                if not (s.in_running and s.order == order and not s.done and (s.total - s.computed > 1
                                                                               or not s.generated)):
                    self.open_prefills = []
            else:
                self.open_prefills = [(order, s) for order, s in open_prefills
                                      if s.in_running and s.order == order and not s.done   # (s.prefilling, inlined)
                                      and (s.total - s.computed > 1 or not s.generated)]
        if self.bm.prefix_caching:
            for s in offered:
                if s.req.prefix_id is not None:   # (_publish's first test, before a call per sequence)
                    self._publish(s)
            for s, _ in batch.prefill:
                if s.req.prefix_id is not None:
                    self._publish(s)
        if uniform and offered:
            self._requeue(offered)
        if self.left:
            self._drop_left()

    def complete_decodes(self, end: float) -> None:
        """complete() of an iteration that only decoded the (uniform) decoding set: every row gained a token at
        `end` (decode_run's, without a Batch)."""
        offered = self._advance(end)
        if offered:
            if self.bm.prefix_caching:
                for s in offered:
                    if s.req.prefix_id is not None:   # (_publish's first test, before a call per sequence)
                        self._publish(s)
            decoding = self.decoding   # (_requeue, inlined: a sequence finishes or offers a block)
            for s in offered:
                if s in decoding:
                    self._push_due(s)
        if self.left:
            self._drop_left()

    def _requeue(self, offered) -> None:
        """The offered sequences still decoding go back on the due queue."""
        decoding = self.decoding
        for s in offered:
            if s in decoding:
                self._push_due(s)

    def _drop_left(self) -> None:
        """Take the sequences that finished or moved on off the running list (static batching: once all are done)."""
        left, self.left = self.left, []
        if self.request_level:
            self.running = [s for s in self.running if s.source is None]   # handed on to a decode pool
            if all(s.done for s in self.running):   # the padded batch has drained
                for s in self.running:
                    self._release(s)
                    s.in_running = False
                self.running = []
                self.padding, self.padding_context = 0, 0
        elif len(left) <= 4:   # (a few leave an iteration: removing each beats rebuilding the list)
            for s in left:
                if not s.in_running:
                    self.running.remove(s)
        else:
            self.running = [s for s in self.running if s.in_running]

    def _emit(self, s: Seq, end: float) -> None:
        """The prefill of `s` computed its last token: a token comes out."""
        rec = s.rec
        if not (self.hooks.hands_on and s.generated == 0 and s.req.output > 1):   # (a prefill pool's first token
            emitted = rec.emitted                       # reaches the client from the decode pool, with the KV)
            emitted.pieces.append((end, 1))             # (TokenTimes.add, inlined: once per request)
            emitted.count += 1
            if rec.first_token_s is None:
                rec.first_token_s = end
        s.generated += 1
        if s.generated >= s.req.output:
            self._finish(s, end)
            return
        s.total += 1
        if self.hooks.hands_on and s.generated == 1 and self.hooks.first_token(s, self):   # (only a prefill pool's)
            s.in_running = False
            self._unreserve(s)   # handed to the decode pool, which sets its own aside
            self.left.append(s)
            return
        self._enter(s)

    def _finish(self, s: Seq, end: float) -> None:
        rec = s.rec
        rec.finish_s = end
        rec.status = FINISHED
        if s in self.decoding:
            self._leave(s)
        if self.request_level:
            s.done = True
            self.padding += 1
            self.padding_context += s.computed
        elif s.shared or s.reserve:
            self._release(s)
            s.in_running = False
        else:   # (_release of private blocks alone, and bm.release, inlined: most requests finish so)
            bm = self.bm
            bm.free += s.blocks
            if bm.free > bm.num_blocks:
                raise RuntimeError("released more KV blocks than allocated")   # a scheduler bug
            s.blocks = 0   # (s.shared is empty already)
            s.in_running = False
        self.left.append(s)
        self.hooks.finished(s)

    # ------------------------------------------------------------ the running list and the blocks held

    def _append(self, s: Seq) -> None:
        """`s` joins the end of the running list (prefilling, or decoding from the next iteration)."""
        s.order = next(self.orders)
        s.in_running = True
        self.running.append(s)
        if self.chunking and not s.done and (s.total - s.computed > 1 or not s.generated):   # (s.prefilling)
            self.open_prefills.append((s.order, s))

    def arrive(self, s: Seq) -> None:
        """Disaggregated decode: the KV of `s` has arrived; it decodes from the next iteration."""
        self.kv_moving -= 1
        self._append(s)
        self.kv_arrived.append(s)

    def _retracted(self) -> None:
        """SGLang's retract_decode: the ratio set from the decoding requests left (token_ratio.after_retract)."""
        decoded = max_new = 0
        for r in self.decoding:
            decoded += r.generated + (self.step - r.anchor if self.uniform else 0)
            max_new += r.req.output
        self.token_ratio.set(after_retract(decoded, max_new, len(self.decoding)), self.step + self.rounds)

    def _cache_own_blocks(self, s: Seq) -> None:
        """Turn the full private blocks of `s` (preempted) into cached blocks under its own key, which its
        re-admission looks up (admission._lookup)."""
        key, first = own_key(s), len(s.shared)
        for i in range(first, min(s.computed // self.bm.block_size, first + s.blocks)):
            if self.bm.publish((key, i)):
                s.blocks -= 1
                s.shared.append((key, i))

    def _release(self, s: Seq, tail_first: bool = False) -> None:
        self.bm.release(s.blocks)
        if s.shared:   # tail_first: the last blocks join the eviction order first, as vLLM V1 frees them
            self.bm.unref(s.shared[::-1] if tail_first else s.shared)
        if s.reserve:
            self._unreserve(s)
        s.blocks, s.shared = 0, []

    def _unreserve(self, s: Seq) -> None:
        self.bm.reserved -= s.reserve
        s.reserve = 0

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
