"""Admission: the steps by which sequences join an engine's running list, and how many KV blocks they need (a part
of the scheduler core; policies call the public steps).

Prompts are admitted whole (admit_whole) or in chunks (admit_chunks, continue_prefills) within a token budget
and the free blocks, keeping the watermark free; swapped-out sequences come back first (_swap_in) and, in a
disaggregated decode pool, prefilled ones whose KV fits start moving here (_admit_awaiting_kv). With capacity
`reserve` a request is admitted only when blocks for its whole prompt and output fit beside those set aside
for the admitted ones (TensorRT-LLM's GUARANTEED_NO_EVICT). The can_* questions answer, without side effects,
whether a step would admit or prefill anything now (a policy's `admits`)."""
from __future__ import annotations

from .sequence import Batch, Seq, own_key
from .padded_prompts import padded_fits
from .ignore_eos import fits_to_the_end
from .token_ratio import INIT_RATIO, admits, output_estimate
from ..request import RUNNING
from .decoding import DecodingSet
from ...accel.marks import trait


@trait   # (compiled: see DecodingSet; its declarations are the core's attributes read here)
class Admission(DecodingSet):
    """The core's admission steps (core.Scheduler inherits them); they read its queues, block pool and limits."""

    # ------------------------------------------------------------ the steps a policy takes

    def continue_prefills(self, batch: Batch, budget: int) -> int:
        """Prefill the next chunks of the running sequences with prompt tokens left, in running order, within
        `budget`; returns the budget left."""
        if not self.open_prefills:
            return budget
        # (entries of sequences that left the running list since, or joined it again later, are stale)
        self.open_prefills = [(order, s) for order, s in self.open_prefills
                           if s.in_running and s.order == order and s.prefilling]
        for _, s in self.open_prefills:
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

    def admit_chunks(self, batch: Batch, budget: int, now: float) -> None:
        """Admit waiting requests in arrival order, each with the chunk of its prompt that fits `budget`."""
        waiting, max_batch = self.waiting, self.cfg.max_batch
        if batch.preempted and not self.cfg.admits_after_preempting:
            return
        bm = self.bm
        size = bm.block_size
        partial = self.cfg.admits_partial_chunk
        while budget > 0 and waiting and not self.swapped_out and len(self.running) < max_batch:
            s = waiting[0]
            if s.req.arrival_s > self.admit_before:   # arrived after this step was formed
                break
            if bm.prefix_caching and (s.req.prefix_id is not None or s.rec.preemptions):   # (else _lookup returns)
                self._lookup(s)
            if self.checks_admission and not self._reservable(s):
                n = 0
            else:   # (_chunk and _chunk_size, inlined: once per admission)
                n = s.total - s.computed
                if n > budget:
                    n = budget
                held = s.blocks + len(s.shared)
                fit = (held + bm.free + len(bm.evictable) - bm.watermark_blocks) * size - s.computed
                if n > fit:   # (vLLM V1: the budget's chunk fits whole or the queue waits)
                    n = fit if fit > 0 and partial else 0
                if n > 0:
                    need = -(-(s.computed + n) // size) - held
                    if need <= bm.free:   # (bm.allocate, when it evicts nothing)
                        bm.free -= need
                    else:
                        bm.allocate(need)
                    s.blocks += need
            if n <= 0:
                self._undo_lookup(s)
                break
            waiting.popleft()
            if self.reserving:
                self._set_aside(s)
            rec = s.rec   # (_start, inlined: once per admission)
            if rec.first_scheduled_s is None:
                rec.first_scheduled_s = now
                rec.cached_tokens = s.computed
            rec.status = RUNNING
            # (_append, inlined: a prompt this chunk ends is not put among the open prefills, which the step's
            # complete() would drop it from at once, as continue_prefills would: one is admitted whole most often)
            s.order = order = next(self.orders)
            s.in_running = True
            self.running.append(s)
            left = s.total - s.computed - n   # (its prompt tokens after this chunk)
            if left and self.chunking and not s.done and (left > 1 or not s.generated):   # (prefilling after it)
                self.open_prefills.append((order, s))
            batch.prefill.append((s, n))
            budget -= n

    def admit_whole(self, batch: Batch, now: float, budget: int | None = None, limit: int | None = None) -> int:
        """Admit waiting prompts whole while they fit in `budget` (the token budget by default), at most `limit`
        of them; the first one of an otherwise empty iteration even past the budget. Returns how many."""
        budget = self.cfg.token_budget if budget is None else budget
        whole, pad = budget, self.cfg.max_paddings   # (vLLM 0.2.x: the step's prompts padded to the longest)
        admitted = lens_sum = longest = 0
        while self.waiting and not self.swapped_out and len(self.running) < self.cfg.max_batch:
            s = self.waiting[0]
            if s.req.arrival_s > self.admit_before:   # arrived after this step was formed
                break
            self._lookup(s)
            n = s.total - s.computed
            need = self._whole_need(s)
            if ((n > budget and (batch.prefill or batch.decoding))
                    or (pad is not None and admitted and not padded_fits(lens_sum, longest, admitted, n, whole, pad))
                    or not self.bm.can_allocate(need, keep_watermark=True) or not self._reservable(s)):
                self._undo_lookup(s)
                break
            lens_sum += n
            if n > longest:
                longest = n
            self.waiting.popleft()
            if self.reserving:
                self._set_aside(s)
            self.bm.allocate(need)
            s.blocks += need
            self._start(s, now)
            batch.prefill.append((s, n))
            budget -= n
            admitted += 1
            if admitted == limit:
                break
        return admitted

    # ------------------------------------------------------------ whether a step would do anything now

    def decode_budget(self) -> int:
        """The token budget the decoding rows leave (uniform: a token each)."""
        return max(self.cfg.token_budget - len(self.decoding), 0)

    def can_continue_prefills(self, budget: int) -> bool:
        """Whether continue_prefills would prefill a chunk within `budget` now."""
        for order, s in self.open_prefills:
            if s.in_running and s.order == order and s.prefilling and budget > 0 \
                    and self._chunk_size(s, budget, keep_watermark=False) > 0:
                return True
        return False

    def can_admit_chunk(self, budget: int) -> bool:
        """Whether admit_chunks would touch the waiting queue's head now: admit a chunk of it within `budget`,
        or look its prefix up. (_lookup_pending and _admissible_head, inlined: asked after every event.)"""
        waiting = self.waiting
        if not waiting:
            return False
        s = waiting[0]
        if s.req.arrival_s > self.admit_before:   # arrived after this step was formed: neither looked up nor taken
            return False
        if self.bm.prefix_caching and (s.req.prefix_id is not None or s.rec.preemptions > 0):
            return True
        if self.swapped_out or len(self.running) >= self.cfg.max_batch or not self._reservable(s):
            return False
        if budget <= 0:
            return False
        n = self._chunk_size(s, budget, keep_watermark=True)
        return n > 0 and (self.cfg.admits_partial_chunk or n == min(s.total - s.computed, budget))

    def can_admit_whole(self, budget: int | None = None) -> bool:
        """Whether admit_whole would touch the waiting queue's head now: admit it whole (within `budget`, when
        decodes run beside it), or look its prefix up."""
        if self._lookup_pending():
            return True
        s = self._admissible_head()
        return s is not None and (budget is None or s.total - s.computed <= budget) \
            and self.bm.can_allocate(self._whole_need(s), keep_watermark=True)

    def _lookup_pending(self) -> bool:
        """Whether an admission step would look the waiting queue's head up in the prefix cache (a lookup and its
        undoing change the cache's order, so that step is not a no-op)."""
        waiting = self.waiting
        return bool(waiting) and self.bm.prefix_caching \
            and (waiting[0].req.prefix_id is not None or waiting[0].rec.preemptions > 0) \
            and waiting[0].req.arrival_s <= self.admit_before   # (the admission steps stop before a later one)

    def _admissible_head(self) -> Seq | None:
        """The waiting queue's head, when nothing but its size stops an admission step taking it now."""
        waiting = self.waiting
        if not waiting or self.swapped_out or len(self.running) >= self.cfg.max_batch \
                or waiting[0].req.arrival_s > self.admit_before or not self._reservable(waiting[0]):
            return None   # (admit_chunks and admit_whole stop at a head that arrived after the step was formed)
        return waiting[0]

    # ------------------------------------------------------------ coming back, coming in

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

    def _admit_awaiting_kv(self) -> None:
        """Disaggregated decode: take prefilled sequences whose KV fits here; their KV starts moving."""
        while self._can_take_awaiting_kv():
            s = self.awaiting_kv.popleft()
            if self.reserving:
                self._set_aside(s)
            need = self._blocks_for(s.computed + 1)
            self.bm.allocate(need)
            s.blocks = need
            self.kv_moving += 1
            self.hooks.receive(s, self)

    def _can_take_awaiting_kv(self) -> bool:
        if not self.awaiting_kv or len(self.running) + self.kv_moving >= self.cfg.max_batch:
            return False
        s = self.awaiting_kv[0]
        return self.bm.can_allocate(self._blocks_for(s.computed + 1), keep_watermark=True) and self._reservable(s)

    # ------------------------------------------------------------ KV blocks

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
        those set aside for the sequences already admitted; with ratio, by SGLang's new_token_ratio."""
        if self.token_ratio is not None:
            return self._ratio_admits(s)
        return not self.reserving or self.bm.reserved + self._final_blocks(s) <= self.bm.num_blocks

    def _ratio_admits(self, s: Seq) -> bool:
        """SGLang's PrefillAdder test (token_ratio.py): the prompt left and output estimate of `s` against the
        free and evictable KV less each running request's reservation: a decoding one's remaining output x
        the ratio, one still prefilling (admitted in an earlier step) its prompt left and whole estimate."""
        if not self.running:   # an idle scheduler resets the ratio (and takes any request)
            self.token_ratio.set(INIT_RATIO, self.step + self.rounds)
            return True
        if self.cfg.ignore_eos_admission:
            return self._ignore_eos_admits(s)
        ratio = self.token_ratio.at(self.step + self.rounds)
        step, uniform, decoding = self.step, self.uniform, self.decoding
        reserved = 0.0
        for r in self.running:
            if r in decoding:
                gen = r.generated + (step - r.anchor if uniform else 0)
                reserved += output_estimate(r.req.output - gen) * ratio
            else:
                reserved += r.total - r.computed + output_estimate(r.req.output - r.generated)
        bm = self.bm
        free = (bm.free + len(bm.evictable)) * bm.block_size
        return admits(s.total - s.computed + output_estimate(s.req.output - s.generated), free, reserved)

    def _ignore_eos_admits(self, s: Seq) -> bool:
        """SGLang's test for an ignore_eos request with the radix cache off (ignore_eos.py): every running request
        and `s` held to its end, at ratio 1.0, unclipped."""
        step, uniform, decoding = self.step, self.uniform, self.decoding
        requests = [(s.req.output - s.generated, s.req.prompt + s.generated)]
        for r in self.running:
            gen = r.generated + (step - r.anchor if uniform and r in decoding else 0)
            requests.append((r.req.output - gen, r.req.prompt + gen))
        bm = self.bm
        return fits_to_the_end((bm.free + len(bm.evictable)) * bm.block_size, s.total - s.computed, requests)

    def _set_aside(self, s: Seq) -> None:
        if self.reserving:   # (callers skip the call when not)
            s.reserve = self._final_blocks(s)
            self.bm.reserved += s.reserve

    def _whole_need(self, s: Seq) -> int:
        """Blocks `s` needs to be admitted whole (static batching reserves its whole output)."""
        final = s.req.prompt + s.req.output - 1 if self.request_level else s.total
        return self._blocks_for(final) - s.held

    def _blocks_for(self, tokens: int) -> int:
        return -(-tokens // self.bm.block_size)

    def _lookup(self, s: Seq) -> None:
        if s.looked_up or s.computed or not self.bm.prefix_caching:
            return
        own = s.rec.preemptions > 0 and self.cfg.preempted_blocks_cached
        if s.req.prefix_id is None and not own:
            return
        limit = max(s.req.prefix_tokens, s.req.shared_tokens)
        s.shared = self.bm.lookup(s.req.prefix_id, min(limit, s.total - 1) // self.bm.block_size)
        if own:   # then the blocks it left cached when preempted, from where the shared prefix stops
            s.shared += self.bm.lookup(own_key(s), (s.total - 1) // self.bm.block_size, len(s.shared))
        s.computed = len(s.shared) * self.bm.block_size
        s.published = len(s.shared)
        s.looked_up = True

    def _undo_lookup(self, s: Seq) -> None:
        if s.looked_up and not s.blocks:
            self.bm.unref(s.shared)
            s.shared, s.computed, s.published, s.looked_up = [], 0, 0, False
