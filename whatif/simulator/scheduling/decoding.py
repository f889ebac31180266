"""The decoding set: one engine's decoding sequences and the bookkeeping that makes an iteration cost what
changed, not what is running (a part of the scheduler core; no policy sees it).

The decoding sequences are kept as a set with aggregate counts (rows, cached tokens), and each one's next event
(it needs a KV block, it finishes, it has a block to offer the prefix cache) sits in a heap keyed by the
engine's decode step. Without a decoder every decoding sequence gains one token a step (uniform), so a
member's counters are stored as of the step it was last brought up to date (`anchor`) and its tokens are the
engine's iteration end times from the step it started decoding (token_times.py); its KV blocks likewise: each
step's phase of sequences is given its blocks as a count (those whose first due step is still ahead counted
apart), and a sequence's own block count catches up when it is read (_catch_up). With a decoder, rows gain
different counts, so each round visits its rows."""
from __future__ import annotations

from array import array
from heapq import heappop, heappush
from operator import itemgetter
from typing import Any

from ..block_manager import BlockManager
from .sequence import Batch, Seq
from ...accel.marks import trait


INF = float("inf")


@trait   # (compiled: a native class's second base must be a trait; the annotations declare core.Scheduler's slots)
class DecodingSet:
    """The core's decoding set (core.Scheduler inherits it): its state, set up by _init_decoding, and its steps.
    It reads the core's block pool (bm) and calls its _allocate (a block for one sequence, preempting) and
    _finish."""

    # (no __slots__ here: core.Scheduler's hold these; declared for mypy/mypyc, which read the mixins alone)
    lookahead: int
    uniform: bool
    step: int
    ends: array
    decoding: dict[Seq, None]
    context_base: int
    padding: int
    padding_context: int
    needs: list[tuple]
    phases: list[dict[Seq, None]]
    visited: int
    ahead: list[dict[int, int]]
    due_n: list[int]
    dues: list[tuple]
    # the core's, read here and by Admission
    bm: BlockManager
    times: Any
    rng: Any
    cfg: Any
    hooks: Any
    running: list[Seq]
    waiting: Any
    awaiting_kv: Any
    swapped_out: Any
    swap_blocks: int
    kv_moving: int
    open_prefills: list[tuple]
    chunking: bool
    request_level: bool
    reserving: bool
    token_ratio: Any   # (a TokenRatio or None)
    checks_admission: bool
    rounds: int
    orders: Any
    admit_before: Any

    def _allocate(self, s: Seq, batch: Batch) -> None:   # (core.Scheduler's, as the stubs below)
        raise NotImplementedError

    def _preempt(self, s: Seq, batch: Batch) -> None:
        raise NotImplementedError

    def _finish(self, s: Seq, end: float) -> None:
        raise NotImplementedError

    def _append(self, s: Seq) -> None:
        raise NotImplementedError

    def _init_decoding(self, block_size: int, lookahead: int) -> None:
        self.lookahead = lookahead    # drafted tokens a decode row verifies beside its next one
        self.uniform = not lookahead  # every decoding row gains one token a step
        self.step = 0                 # decode iterations completed (uniform)
        self.ends = array("d")        # each decode iteration's end time (uniform): the decoding rows' tokens
        self.decoding: dict[Seq, None] = {}   # sequences decoding, in the order they started
        self.context_base = 0         # sum over decoding of computed - anchor (cached tokens = it + rows*step)
        self.padding, self.padding_context = 0, 0   # static batching's finished rows and their cached tokens
        self.needs: list[tuple] = []  # with a decoder: heap of (step, order, epoch, seq) due a KV block then
        self.phases: list[dict[Seq, None]] = [{} for _ in range(block_size)] if self.uniform else []
        self.visited = -1             # uniform: the last step whose phase's sequences were given their blocks
        self.ahead: list[dict[int, int]] = [{} for _ in range(block_size)] if self.uniform else []
        # per phase: its sequences due a block at each visit, len(phases[p]) less those in `ahead` (their first due
        # step not reached), kept as a count so that a decode step reads one number (decode_run.py)
        self.due_n = [0] * block_size
        self.dues: list[tuple] = []   # heap of (step, order, epoch, seq): it finishes or offers a block then

    # ------------------------------------------------------------ what decode_run.py reads and moves

    def decode_shape(self) -> tuple[int, int, int]:
        """(decoding rows, decode rows with static batching's padding, their cached tokens less rows * step)."""
        decoding = len(self.decoding)
        return decoding, decoding + self.padding, self.context_base + self.padding_context

    def next_event_step(self) -> float:
        """The step at which decoding sequences next finish or offer a block (inf: none decoding)."""
        return self.dues[0][0] if self.dues else INF

    def take_due_blocks(self, step: int) -> int:
        """Give `step`'s phase its blocks, counted, not visited (uniform): one to each sequence due one now
        (their own counts catch up lazily, _catch_up). -1, nothing taken, when too few are free."""
        bm = self.bm
        p = step % bm.block_size
        ahead = self.ahead[p]
        now = ahead.get(step, 0) if ahead else 0   # sequences whose first due step this is
        n = self.due_n[p] + now
        if n:
            if bm.free >= n:   # (bm.allocate, when it evicts nothing)
                bm.free -= n
            elif n <= bm.free + len(bm.evictable):   # (bm.can_allocate)
                bm.allocate(n)
            else:
                return -1
        if now:
            del ahead[step]
            self.due_n[p] += now
        self.visited = step
        return n

    def decoded(self, end: float) -> None:
        """Every decoding row gained a token at `end` (uniform): the step moves on."""
        self.step += 1
        self.ends.append(end)

    # ------------------------------------------------------------ blocks for the decoding rows

    def _shortage(self, phase: dict, batch: Batch) -> None:
        """A step's visit (Scheduler.decodes: its phase given its blocks, counted by take_due_blocks) with too few
        free blocks: the due sequences brought up to date and given their blocks one by
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
        self.due_n[step % size] += ahead.pop(step, 0)
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

    # ------------------------------------------------------------ after an iteration

    def _advance(self, end: float) -> list[Seq] | tuple:
        """A decode iteration ended at `end` (uniform): the step moves on; the sequences due an event now are
        brought up to date (those done finish) and returned: they may offer blocks, and queue their next."""
        self.step = step = self.step + 1   # (decoded, inlined)
        self.ends.append(end)
        dues = self.dues
        if not dues or dues[0][0] > step:
            return ()
        entry = heappop(dues)
        if dues and dues[0][0] <= step:   # several due: in running order
            heappush(dues, entry)
            offered = self._due(dues)
        else:   # (_due of one entry, inlined: most often one sequence finishes; a stale one is dropped)
            s = entry[3]
            if entry[2] != s.epoch:
                return ()
            offered = [s]
        visited = self.visited
        for s in offered:
            k = step - s.anchor   # (_sync, inlined)
            if k:
                s.computed += k
                s.generated += k
                s.total += k
                s.anchor = step
            if s.generated >= s.req.output:
                s.total -= 1   # (a finishing token adds none to do)
                self._finish(s, end)   # (its blocks caught up as it leaves the decoding set: _leave)
            elif s.next_need <= visited:
                self._catch_up(s)
        return offered

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

    def flush(self) -> None:
        """Close the open runs of tokens (the run stopped with these sequences decoding)."""
        if self.uniform:
            for s in self.decoding:
                self._sync(s)
                s.rec.emitted.add_run(self.ends, s.run_from, self.step)
                s.run_from = self.step

    # ------------------------------------------------------------ joining and leaving

    def _enter(self, s: Seq) -> None:
        """`s` starts decoding at this step."""
        s.anchor = s.run_from = step = self.step
        self.decoding[s] = None
        computed = s.computed
        self.context_base += computed - step
        if not self.uniform:
            self._push_need(s)
            return
        # (_push_need and _push_due, inlined: once per request, without a decoder lookahead is 0)
        bm = self.bm
        size = bm.block_size
        due = step + (s.blocks + len(s.shared)) * size - computed
        s.next_need = due
        p = due % size
        self.phases[p][s] = None   # (one more in the phase, counted ahead: its due count stays)
        ahead = self.ahead[p]
        ahead[due] = ahead.get(due, 0) + 1
        req = s.req
        if bm.prefix_caching and req.prefix_id is not None:
            self._push_due(s)
            return
        due = step + req.output - s.generated
        heappush(self.dues, (due if due > step else step + 1, s.order, s.epoch, s))

    def _leave(self, s: Seq) -> None:
        """`s` stops decoding (finished, preempted): its counters brought up to date, its run of tokens closed."""
        step = self.step
        k = step - s.anchor   # (_sync, inlined: once per request)
        if k:
            s.computed += k
            s.generated += k
            s.total += k
            s.anchor = step
        del self.decoding[s]
        self.context_base -= s.computed - s.anchor
        s.epoch += 1
        if self.uniform:
            need, size = s.next_need, self.bm.block_size
            p = need % size
            if need <= self.visited:   # (_catch_up without its _register, which _unregister would undo: it leaves)
                r = (self.visited - need) // size + 1
                s.blocks += r
                s.next_need = need + r * size
                self.due_n[p] -= 1   # (one fewer due in its phase)
            else:   # (_unregister, inlined; it leaves its phase too: the phase's due count stays)
                ahead = self.ahead[p]
                c = ahead[need] - 1
                if c:
                    ahead[need] = c
                else:
                    del ahead[need]
            del self.phases[p][s]
            if step > s.run_from:   # (TokenTimes.add_run, inlined)
                emitted = s.rec.emitted
                emitted.pieces.append((self.ends, s.run_from, step))
                emitted.count += step - s.run_from

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
        self.due_n[p] -= 1

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
            self.due_n[p] += 1

    def _push_need(self, s: Seq) -> None:
        """Queue the step at which `s` (up to date) has no KV slot for its next token (and drafts).

        Without a decoder a sequence needs one block every block_size steps, always at the same step
        modulo block_size: it waits in that step's phase set (next_need: the first step it is due)."""
        size = self.bm.block_size
        due = self.step + (s.blocks + len(s.shared)) * size - self.lookahead - s.computed   # (s.held)
        if self.uniform:
            s.next_need = due
            p = due % size
            phase = self.phases[p]
            if s not in phase:   # (one already in its phase, after a shortage's block: counted there)
                phase[s] = None
                self.due_n[p] += 1
            ahead = self.ahead[p]   # (_register)
            ahead[due] = ahead.get(due, 0) + 1
            self.due_n[p] -= 1
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
