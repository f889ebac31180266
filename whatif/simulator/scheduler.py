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
Capacity (EngineConfig.capacity): on-demand takes a sequence's KV blocks as its tokens need them (vLLM);
reserve admits a request only when blocks for its whole prompt and output can be set aside beside what the
admitted ones hold or still need (TensorRT-LLM's GUARANTEED_NO_EVICT), so no running sequence is preempted.
With a decoder (speculative or multi-token decoding) a decode row verifies its drafted tokens in
the same pass: it holds KV slots for them (lookahead), takes that many tokens of the budget, and
gains the tokens its acceptance draws (times.accepted_tokens), several at one time.
A running decode that needs a new block when none is free preempts the most recently admitted
sequence: by recompute (its KV is dropped and it queues first to prefill again) or by swap (its KV
is copied to host memory and back when blocks free up; the copies stall the iteration).

An iteration costs what changed, not what is running: the decoding sequences are kept as a set with
aggregate counts (rows, cached tokens), and each one's next event (it needs a KV block, it finishes,
it has a block to offer the prefix cache) sits in a heap keyed by the engine's decode step. Without
a decoder every decoding sequence gains one token a step, so a member's counters are stored as of
the step it was last brought up to date (`anchor`) and its tokens are the engine's iteration end
times from the step it started decoding (token_times.py); its KV blocks likewise: each step's
phase of sequences is given its blocks as a count (those whose first due step is still ahead
counted apart), and a sequence's own block count catches up when it is read (_catch_up). With a
decoder, rows gain different counts, so each round visits its rows.

Long because the policies, preemption and the decoding set share one engine's state (running list,
waiting queue, block pool, event heaps) and are read in order: one scheduler, one file."""
from __future__ import annotations

import random
from array import array
from collections import deque
from heapq import heappop, heappush
from itertools import count
from operator import itemgetter

from .block_manager import BlockManager
from .config import EngineConfig
from .request import FINISHED, QUEUED, RUNNING, Record


class Seq:
    __slots__ = ("rec", "req", "total", "computed", "generated", "blocks", "shared", "published", "swapped",
                 "done", "looked_up", "source", "order", "epoch", "anchor", "run_from", "in_running", "next_need",
                 "reserve")

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
        self.decode: list[Seq] | tuple = ()   # the decoding rows (with a decoder only; a list set by _decodes)
        self.prefill: list[tuple[Seq, int]] = []   # (sequence, tokens computed now)
        self.swap_s = 0.0
        self.preempted = 0

    def __bool__(self) -> bool:
        return bool(self.rows or self.prefill)

    @property
    def decode_context(self) -> int:
        """Mean cached tokens over the decode rows (padding included)."""
        return self.context // self.rows if self.rows else 0


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
        self.left: list[Seq] = []     # sequences that finished or moved on in the last iteration
        self.arriving = 0             # disaggregated decode: sequences admitted whose KV is still moving
        self.drain = cfg.batching == "static" or (cfg.priority == "decode" and not cfg.chunked_prefill)
        self.lookahead = times.lookahead   # drafted tokens a decode row verifies beside its next one
        self.rng = random.Random(f"accept-{seed}")
        self.uniform = not self.lookahead   # every decoding row gains one token a step
        self.step = 0                 # decode iterations completed (uniform)
        self.ends = array("d")        # each decode iteration's end time (uniform): the decoding rows' tokens
        self.decoding: dict[Seq, None] = {}   # sequences decoding, in the order they started
        self.context_base = 0         # sum over decoding of computed - anchor (cached tokens = it + rows*step)
        self.padding, self.padding_context = 0, 0   # static batching's finished rows and their cached tokens
        self.needs: list[tuple] = []  # with a decoder: heap of (step, order, epoch, seq) due a KV block then
        self.phases: list[dict[Seq, None]] = [{} for _ in range(bm.block_size)] if self.uniform else []
        self.visited = -1             # uniform: the last step whose phase's sequences were given their blocks
        self.ahead: list[dict[int, int]] = [{} for _ in range(bm.block_size)] if self.uniform else []
        self.ahead_n = [0] * bm.block_size   # per phase: sequences in `ahead` (their first due step not reached)
        self.dues: list[tuple] = []   # heap of (step, order, epoch, seq): it finishes or offers a block then
        self.prefilling: list[tuple] = []     # chunked prefill: (order, seq) with prompt tokens left, in running order
        self.chunking = cfg.chunked_prefill and not self.drain
        self.mixed = cfg.whole_prompts_beside_decodes
        self.reserving = cfg.capacity == "reserve" and not self.drain   # (drain policies reserve their own way)
        self.arrivals: list[Seq] = []         # disaggregated: KV arrived during an iteration; decode from the next
        self.orders = count(1)

    # ------------------------------------------------------------ forming an iteration

    def schedule(self, now: float) -> Batch:
        batch = Batch()
        if self.arrivals:
            for s in self.arrivals:
                if s.in_running:
                    self._enter(s)
            self.arrivals.clear()
        if self.swapped_out:
            self._swap_in(batch)
        if self.incoming:
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
            if self.prefilling:
                budget = self._continue_prefills(batch, budget)
            self._admit_chunks(batch, budget, now)
            return batch
        if self.mixed:   # whole prompts beside the decodes, within the budget the decodes leave
            self._admit_whole(batch, now, self._decodes(batch))
            return batch
        self._admit_whole(batch, now)   # prefill-priority
        if not batch.prefill:
            self._decodes(batch)
        return batch

    def _decodes(self, batch: Batch) -> int:
        """Schedule every decoding sequence: those due a KV block get it, in running order (preempting
        from the back when blocks run out); returns the token budget left."""
        if self.uniform:
            if self.decoding and self.step > self.visited:
                self._visit(batch)
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

    def _visit(self, batch: Batch) -> None:
        """Give this step's phase its blocks (uniform): one each to the sequences due now, counted, not visited
        (the sequences' own counts catch up lazily, see _catch_up); when too few are free, each due sequence
        in running order, preempting from the back."""
        step, bm = self.step, self.bm
        p = step % bm.block_size
        phase, ahead = self.phases[p], self.ahead[p]
        now = ahead.get(step, 0)   # sequences whose first due step this is
        n = len(phase) - self.ahead_n[p] + now
        if n and not bm.can_allocate(n):
            self._shortage(phase, batch)
            return
        if n:
            if bm.free >= n:   # (bm.allocate, when it evicts nothing)
                bm.free -= n
            else:
                bm.allocate(n)
        if now:
            del ahead[step]
            self.ahead_n[p] -= now
        self.visited = step

    def _shortage(self, phase: dict, batch: Batch) -> None:
        """_visit with too few free blocks: the due sequences brought up to date and given their blocks one by
        one in running order (each registered as due a cycle on, as if this step's block were still to come)."""
        step, size = self.step, self.bm.block_size
        due = []
        for s in phase:
            if s.next_need <= self.visited:   # (up to date with the visits before this one: due now)
                self._catch_up(s)
                self._unregister(s)
            if s.next_need == step:
                due.append(s)
        ahead = self.ahead[step % size]
        self.ahead_n[step % size] -= ahead.pop(step, 0)
        self.visited = step
        for s in due:
            s.next_need = step + size
            self._register(s)
        for s in sorted(due, key=lambda s: s.order):
            self._allocate(s, batch)

    def _due(self, heap: list) -> list[Seq]:
        """Pop the sequences whose event in `heap` is due at this step (stale entries dropped), in running order."""
        due, step = [], self.step
        while heap and heap[0][0] <= step:
            _, order, epoch, s = heappop(heap)
            if epoch == s.epoch:
                due.append((order, s))
        if len(due) == 1:   # (the common case: one sequence finishes)
            return [due[0][1]]
        due.sort(key=itemgetter(0))
        return [s for _, s in due]

    def _continue_prefills(self, batch: Batch, budget: int) -> int:
        # (entries of sequences that left the running list since, or joined it again later, are stale)
        self.prefilling = [(order, s) for order, s in self.prefilling
                           if s.in_running and s.order == order and s.prefilling]
        for _, s in self.prefilling:
            if budget <= 0:
                break
            if not s.in_running:   # preempted for an earlier one
                continue
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
        waiting, max_batch = self.waiting, self.cfg.max_batch
        while budget > 0 and waiting and not self.swapped_out and len(self.running) < max_batch:
            s = waiting[0]
            if self.bm.prefix_caching:
                self._lookup(s)
            n = self._chunk(s, budget, keep_watermark=True) if not self.reserving or self._reservable(s) else 0
            if not n:
                self._undo_lookup(s)
                break
            self.waiting.popleft()
            if self.reserving:
                self._set_aside(s)
            self._start(s, now)
            batch.prefill.append((s, n))
            budget -= n

    def _admit_whole(self, batch: Batch, now: float, budget: int | None = None) -> None:
        """Admit waiting prompts whole while they fit in `budget` (the token budget by default); the first
        one of an otherwise empty iteration even past it."""
        budget = self.cfg.token_budget if budget is None else budget
        while self.waiting and not self.swapped_out and len(self.running) < self.cfg.max_batch:
            s = self.waiting[0]
            self._lookup(s)
            n = s.total - s.computed
            need = self._whole_need(s)
            if ((n > budget and (batch.prefill or batch.decoding))
                    or not self.bm.can_allocate(need, keep_watermark=True) or not self._reservable(s)):
                self._undo_lookup(s)
                break
            self.waiting.popleft()
            if self.reserving:
                self._set_aside(s)
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
        n = self._chunk_size(s, budget, keep_watermark)
        if n <= 0:
            return 0
        need = -(-(s.computed + n) // self.bm.block_size) - (s.blocks + len(s.shared))   # (_blocks_for - held)
        self.bm.allocate(need)
        s.blocks += need
        return n

    def _chunk_size(self, s: Seq, budget: int, keep_watermark: bool) -> int:
        """Tokens of `s` that fit the budget and the free blocks (none allocated)."""
        bm = self.bm
        n = s.total - s.computed
        if n > budget:
            n = budget
        room = bm.free + len(bm.evictable) - (bm.watermark_blocks if keep_watermark else 0)   # (available)
        fit = (s.blocks + len(s.shared) + room) * bm.block_size - s.computed   # (held)
        if fit < 0:
            fit = 0
        return n if n <= fit else fit   # (min(n, max(0, fit)) without the calls)

    def _final_blocks(self, s: Seq) -> int:
        """Blocks `s` holds when it finishes: its prompt and whole output (drafted tokens' slots beside)."""
        return self._blocks_for(s.req.prompt + s.req.output + self.lookahead)

    def _reservable(self, s: Seq) -> bool:
        """Whether `s` may be admitted: always on demand; with reserve, when its final blocks fit beside
        those set aside for the sequences already admitted."""
        return not self.reserving or self.bm.reserved + self._final_blocks(s) <= self.bm.num_blocks

    def _set_aside(self, s: Seq) -> None:
        if self.reserving:   # (callers skip the call when not)
            s.reserve = self._final_blocks(s)
            self.bm.reserved += s.reserve

    def _whole_need(self, s: Seq) -> int:
        """Blocks `s` needs to be admitted whole (static batching reserves its whole output)."""
        final = s.req.prompt + s.req.output - 1 if self.cfg.batching == "static" else s.total
        return self._blocks_for(final) - s.held

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
        self._append(s)

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
            self._append(s)
            if not s.prefilling:
                self._enter(s)

    def _admit_incoming(self) -> None:
        """Disaggregated decode: take prefilled sequences whose KV fits here; their KV starts moving."""
        while self.incoming and len(self.running) + self.arriving < self.cfg.max_batch:
            s = self.incoming[0]
            need = self._blocks_for(s.computed + 1)
            if not self.bm.can_allocate(need, keep_watermark=True) or not self._reservable(s):
                break
            self.incoming.popleft()
            if self.reserving:
                self._set_aside(s)
            self.bm.allocate(need)
            s.blocks = need
            self.arriving += 1
            self.hooks.receive(s, self)

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

    def only_decodes(self) -> bool:
        """Whether the next iteration can do nothing but decode the decoding set: nothing arrives, and
        nothing swapped out, incoming, part-prefilled or waiting can get blocks or budget now (each check
        as the step it mirrors makes it, without its side effects). It stays so while decodes take blocks
        (free blocks only shrink until a sequence finishes), which decode_run.py relies on."""
        if not self.uniform or self.arrivals or not self.decoding:
            return False
        cfg, bm, waiting, swapped = self.cfg, self.bm, self.waiting, self.swapped_out
        full = len(self.running) >= cfg.max_batch
        if swapped and not full and bm.can_allocate(swapped[0].swapped):   # _swap_in
            return False
        if self.incoming and len(self.running) + self.arriving < self.cfg.max_batch and self.bm.can_allocate(
                self._blocks_for(self.incoming[0].computed + 1), keep_watermark=True) \
                and self._reservable(self.incoming[0]):   # _admit_incoming
            return False
        if self.drain:
            return not self.filling   # (a batch still filling admits)
        if waiting and bm.prefix_caching and waiting[0].req.prefix_id is not None:
            return False   # (a prefix-cache lookup and its undoing touch the cache's order)
        budget = max(cfg.token_budget - len(self.decoding), 0)
        waiting_fits = bool(waiting) and (not self.reserving or self._reservable(waiting[0]))
        if not self.chunking:   # prefill-priority or mixed: _admit_whole (mixed: within the budget decodes leave)
            return not (waiting_fits and not swapped and not full
                        and (not self.mixed or waiting[0].total - waiting[0].computed <= budget)
                        and bm.can_allocate(self._whole_need(waiting[0]), keep_watermark=True))
        for order, s in self.prefilling:   # _continue_prefills
            if s.in_running and s.order == order and s.prefilling and budget > 0 \
                    and self._chunk_size(s, budget, keep_watermark=False) > 0:
                return False
        return not (budget > 0 and waiting_fits and not swapped and not full
                    and self._chunk_size(waiting[0], budget, keep_watermark=True) > 0)   # _admit_chunks

    # ------------------------------------------------------------ after an iteration

    def complete(self, batch: Batch, end: float) -> None:
        offered: list[Seq] | tuple = ()
        uniform = self.uniform
        if batch.decoding and uniform:   # every decoding row gained a token at `end`
            self.step = step = self.step + 1
            self.ends.append(end)
            dues = self.dues
            if dues and dues[0][0] <= step:
                offered = self._due(dues)
                for s in offered:
                    self._sync(s)
                    if s.generated >= s.req.output:
                        s.total -= 1   # (a finishing token adds none to do)
                        self._finish(s, end)
        elif batch.decode:
            self._complete_rounds(batch, end)
            offered = batch.decode
        for s, n in batch.prefill:
            s.computed += n
            if s.computed == s.total:
                self._emit(s, end)
            elif not s.prefilling:   # a recomputed sequence one token short: that token is a decode's
                self._enter(s)
        if self.bm.prefix_caching:
            for s in offered:
                self._publish(s)
            for s, _ in batch.prefill:
                self._publish(s)
        if uniform and offered:
            decoding = self.decoding
            for s in offered:
                if s in decoding:
                    self._push_due(s)
        if self.left:
            left, self.left = self.left, []
            if self.cfg.batching == "static":
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

    def _complete_rounds(self, batch: Batch, end: float) -> None:
        """Each decode row computed its next token and the drafts it accepted: it keeps those and
        gains one more token from the verify pass, all emitted at the round's end."""
        gained = self.times.accepted_tokens(batch.rows, batch.decode_context, self.rng)
        for s, n in zip(batch.decode, gained):
            got = 0
            for _ in range(n):
                s.computed += 1
                got += 1
                s.generated += 1
                if s.generated >= s.req.output:
                    break
                s.total += 1
            self.context_base += got
            s.rec.emitted.add(end, got)
            if s.generated >= s.req.output:
                self._finish(s, end)
            else:
                self._push_need(s)

    def _emit(self, s: Seq, end: float) -> None:
        """The prefill of `s` computed its last token: a token comes out."""
        rec = s.rec
        rec.emitted.add(end)
        if rec.first_token_s is None:
            rec.first_token_s = end
        s.generated += 1
        if s.generated >= s.req.output:
            self._finish(s, end)
            return
        s.total += 1
        if s.generated == 1 and self.hooks.first_token(s, self):
            s.in_running = False
            self._unreserve(s)   # handed to the decode pool, which sets its own aside
            self.left.append(s)
            return
        self._enter(s)

    def _finish(self, s: Seq, end: float) -> None:
        s.rec.finish_s = end
        s.rec.status = FINISHED
        if s in self.decoding:
            self._leave(s)
        if self.cfg.batching == "static":
            s.done = True
            self.padding += 1
            self.padding_context += s.computed
        else:
            self._release(s)
            s.in_running = False
        self.left.append(s)
        self.hooks.finished(s)

    # ------------------------------------------------------------ the decoding set

    def _append(self, s: Seq) -> None:
        """`s` joins the end of the running list (prefilling, or decoding from the next iteration)."""
        s.order = next(self.orders)
        s.in_running = True
        self.running.append(s)
        if self.chunking and s.prefilling:
            self.prefilling.append((s.order, s))

    def arrive(self, s: Seq) -> None:
        """Disaggregated decode: the KV of `s` has arrived; it decodes from the next iteration."""
        self.arriving -= 1
        self._append(s)
        self.arrivals.append(s)

    def _enter(self, s: Seq) -> None:
        """`s` starts decoding at this step."""
        s.anchor = s.run_from = self.step
        self.decoding[s] = None
        self.context_base += s.computed - self.step
        self._push_need(s)
        if self.uniform:
            self._push_due(s)

    def _leave(self, s: Seq) -> None:
        """`s` stops decoding (finished, preempted): its counters brought up to date, its run of tokens closed."""
        self._sync(s)
        del self.decoding[s]
        self.context_base -= s.computed - s.anchor
        s.epoch += 1
        if self.uniform:
            self._unregister(s)
            self.phases[s.next_need % self.bm.block_size].pop(s, None)
            s.rec.emitted.add_run(self.ends, s.run_from, self.step)

    def _sync(self, s: Seq) -> None:
        """Bring a decoding sequence's counters to this step (one token per step since its anchor)."""
        k = self.step - s.anchor
        if k:
            s.computed += k
            s.generated += k
            s.total += k
            s.anchor = self.step
        if s.next_need <= self.visited:   # (uniform only: visited stays -1 otherwise)
            self._catch_up(s)

    def _catch_up(self, s: Seq) -> None:
        """Bring a decoding sequence's blocks to the visits made (uniform). It holds next_need <= visited only
        while its phase's visits give it a block each without touching it: next_need was its first due step,
        and each visit of its phase since gave it one block."""
        size = self.bm.block_size
        r = (self.visited - s.next_need) // size + 1
        s.blocks += r
        s.next_need += r * size
        self._register(s)

    def _register(self, s: Seq) -> None:
        """Count `s` (next_need > visited) as not due until the visit of step next_need."""
        p = s.next_need % self.bm.block_size
        ahead = self.ahead[p]
        ahead[s.next_need] = ahead.get(s.next_need, 0) + 1
        self.ahead_n[p] += 1

    def _unregister(self, s: Seq) -> None:
        """Undo _register (a sequence whose first due step has come is counted by its phase, not here)."""
        if s.next_need > self.visited:
            p = s.next_need % self.bm.block_size
            ahead = self.ahead[p]
            c = ahead[s.next_need] - 1
            if c:
                ahead[s.next_need] = c
            else:
                del ahead[s.next_need]
            self.ahead_n[p] -= 1

    def _push_need(self, s: Seq) -> None:
        """Queue the step at which `s` (up to date) has no KV slot for its next token (and drafts).

        Without a decoder a sequence needs one block every block_size steps, always at the same step
        modulo block_size: it waits in that step's phase set (next_need: the first step it is due)."""
        size = self.bm.block_size
        due = self.step + (s.blocks + len(s.shared)) * size - self.lookahead - s.computed   # (s.held)
        if self.uniform:
            s.next_need = due
            p = due % size
            self.phases[p][s] = None
            ahead = self.ahead[p]   # (_register)
            ahead[due] = ahead.get(due, 0) + 1
            self.ahead_n[p] += 1
        elif due <= self.step:   # with a decoder, rows advance unevenly: checked each round
            heappush(self.needs, (due, s.order, s.epoch, s))

    def _push_due(self, s: Seq) -> None:
        """Queue the next step after this one at which `s` (up to date) finishes or has a full block to offer."""
        due = self.step + s.req.output - s.generated
        if self.bm.prefix_caching and s.req.prefix_id is not None:
            block = (s.published + 1) * self.bm.block_size
            if block <= s.req.shared_tokens:
                due = min(due, self.step + block - s.computed)
        heappush(self.dues, (max(due, self.step + 1), s.order, s.epoch, s))

    def flush(self) -> None:
        """Close the open runs of tokens (the run stopped with these sequences decoding)."""
        if self.uniform:
            for s in self.decoding:
                self._sync(s)
                s.rec.emitted.add_run(self.ends, s.run_from, self.step)
                s.run_from = self.step

    def _release(self, s: Seq) -> None:
        self.bm.release(s.blocks)
        if s.shared:
            self.bm.unref(s.shared)
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
