"""One replica (a tensor/pipeline-parallel group serving the model) as processes on the clock (clock.py).

A replica runs one scheduler loop per pipeline stage count (pp virtual engines, as vLLM keeps pp
micro-batches in flight), sharing its KV block pool and waiting queue. Each loop asks its
scheduler for a batch, waits the iteration's roofline time, then applies the results. An
iteration's time is the whole pipeline's (every stage in sequence): with pp batches in flight and
balanced stages, each batch still takes that long while the replica completes pp of them per
round; a batch whose stage is still busy with another engine's waits for it (pipeline_stages.py)."""
from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Any

from .batch_wait import BatchWait, schedulable_prompt_tokens
from .block_manager import BlockManager
from .clock import Clock, Signal
from .config import SchedulerConfig
from .decode_migration import migrate
from .first_token_hold import FirstTokenHold, eager_launch_s
from .iteration_time import IterationTimes
from .kv_fanout import kv_copies
from .log import FLUSH_VALUES, IterationLog, ReplicaInfo
from .pipeline_stages import PipelineStages
from .prefill_recompile import TokenCountCompiles
from .prefill_rows import batch_limit, holds_rows
from .recv_interval import RecvSkipper
from .scheduling.core import Scheduler
from .scheduling.padded_prompts import padded_prefills
from .scheduling.registry import make_policy
from .scheduling.sequence import Seq
from .stepping import EXACT, observed


class Replica:
    def __init__(self, env: Clock, index: int, role: str, times: IterationTimes, cfg: SchedulerConfig,
                 log: IterationLog, cluster, blocks: int | None = None, group=None):
        self.env = env
        self.index = index
        self.role = role            # mixed | prefill | decode
        self.hands_on = role == "prefill"   # prefilled sequences move on to the decode pool
        self.times = times
        self.log = log
        self.cluster = cluster
        # the shortcuts and step observer the loop takes (stepping.py: a caller's own, passed to simulate)
        self.stepping = cluster.stepping if cluster is not None else EXACT
        pp = times.setup.parallel.pp
        blocks = times.kv_blocks if blocks is None else blocks
        self.group = group          # an attention-DP rank: the RankGroup that steps it (rank_group.py), else None
        spec = times.setup.engine_spec
        self.ahead = spec is not None and spec.cpu.overlapped   # the CPU forms each step while the last one runs
        self.bm = BlockManager(blocks, cfg.block_size, int(cfg.watermark * blocks), cfg.prefix_caching)
        self.waiting: deque[Seq] = deque()
        self.awaiting_kv: deque[Seq] = deque()
        # SGLang's --scheduler-recv-interval (recv_interval.py): arrivals wait here while a busy engine skips polls
        self.skipper = RecvSkipper(cfg.recv_interval) if cfg.recv_interval > 1 and group is None and pp == 1 else None
        self.inbox: deque[Seq] = deque()
        # TensorRT-LLM's batch waiting (batch_wait.py): prompts held beside running decodes; TP-only engines
        waits = (cfg.batch_wait_timeout_iters > 0 or cfg.batch_wait_max_tokens_ratio > 0) and group is None and pp == 1
        self.batch_wait: Any = BatchWait(cfg.batch_wait_timeout_iters, cfg.batch_wait_max_tokens_ratio,
                                         cfg.token_budget) if waits else None   # (Any: a BatchWait or None)
        swap = times.swap_blocks(cfg.swap_space_gb) // pp if cfg.preemption == "swap" else 0
        seed = getattr(cluster.cfg.workload, "seed", 0) if cluster is not None else 0
        self.schedulers = [Scheduler(cfg, make_policy(cfg), self.bm, self.waiting, self.awaiting_kv, times, swap, self,
                                  f"{seed}-{index}-{e}") for e in range(pp)]
        self.outstanding = 0        # requests routed here and not yet finished or handed on
        # SGLang's PD TP prefill server: each handed-on request keeps its batch row until its KV is sent (prefill_rows)
        self.holds_rows = holds_rows(times.setup, role, group)
        self.sending = 0            # handed-on requests whose KV is still here
        self.idle = 0
        self._wakeup = Signal()     # the engines waiting for work (idle counts them until they resume)
        self.step_end = 0.0         # when the step in flight ends (a decode pool's received KV waits for it)
        # pp > 1: the virtual engines' micro-batches take each stage in turn (pipeline_stages.py); every iteration
        # then goes through the full loop below (decode_run.py prices back-to-back steps of one engine alone)
        self.stages = PipelineStages(pp) if pp > 1 and group is None else None
        # vLLM V1's batch queue (spec scheduler.pp_batch_queue): a micro-batch forms only as a lane's result is taken
        # or at once after another formed; an arrival while any is in flight waits for the next to form (else every
        # idle slot takes arrivals at once, as SGLang's and TensorRT-LLM's turns do)
        queue_rule = spec is not None and spec.pp_batch_queue if cfg.pp_batch_queue is None else cfg.pp_batch_queue
        self.batch_queue = self.stages is not None and queue_rule   # (cfg's: an engine run beside another's spec)
        self.parked: list[Scheduler] = []   # (batch_queue) the engines waiting for work, in the order they idled
        self.in_flight: dict[Scheduler, float] = {}   # (batch_queue) each engine's batch in flight: when it ends
        if self.batch_queue:   # vLLM turns async scheduling off with pipeline_parallel_size > 1 (vllm/config/vllm.py):
            self.ahead = False  # each micro-batch is scheduled after the last result is taken, with what has arrived
        # vLLM V1 keeps one Scheduler whose `running` holds the requests of every batch in flight, and admits a waiting
        # request only while len(self.running) < max_num_running_reqs (= max_num_seqs; v1/core/sched/scheduler.py):
        # max_num_seqs bounds the whole engine, so each lane may hold only what the other lanes leave (engine_seq_cap)
        self.shared_seq_limit = self.batch_queue
        # first tokens sent once the next step is launched (spec cpu.tokens_after_next_launch; one engine per replica)
        late = spec is not None and spec.cpu.tokens_after_next_launch and role == "mixed" and group is None and pp == 1
        self.hold = FirstTokenHold(eager_launch_s(times.setup, times.token_budget)) if late else None
        # a prefill kernel compiled per new token count (prefill_recompile.py; off by default)
        self.compiles = TokenCountCompiles(cfg.prefill_recompile_s) if cfg.prefill_recompile_s > 0 else None
        # DistServe: the prefill pool streams the first token; the decode loop moves each KV itself (decode_migration)
        self.first_token_sent = spec is not None and spec.first_token_from_prefill and role == "prefill"
        gate = spec.decode_migration_gate if spec is not None and role == "decode" and group is None else 0.0
        self.migration_gate = gate
        self.unaccepted: deque[Seq] = deque()   # (gate > 0) prefilled sequences whose KV the loop has not taken
        self.migrating = False   # an engine of this replica is in its post_process (the others wait for it)
        self.migration_done = Signal()
        if group is None:   # (a rank's engines are stepped by its group, in lockstep with the other ranks)
            for scheduler in self.schedulers:
                env.start(self._run(scheduler))

    def info(self) -> ReplicaInfo:
        c = self.times
        return ReplicaInfo(self.index, self.role, c.setup.parallel.gpus, c.kv_blocks, c.block_size,
                           c.kv_bytes_per_token, engines=len(self.schedulers), kv_blocks_held_end=self.bm.used)

    def submit(self, seq: Seq) -> None:
        self.outstanding += 1
        if not self.hands_on:   # (role != "prefill")
            seq.rec.replica = self.index
        if self.skipper is not None and not self.idle:
            self.inbox.append(seq)   # a busy engine reads it at its next poll
            return
        self.waiting.append(seq)
        if self.batch_queue:   # (vLLM V1 reads it only once the batch it blocks on is done, unless none runs)
            if self.idle == len(self.schedulers):
                self.wake()
        elif self.idle or self.group is not None:   # (wake's own test first: a busy engine reads it as it steps)
            self.wake()

    def hand_in(self, seq: Seq) -> None:
        """Disaggregated decode: a prefilled sequence whose KV is still on a prefill replica."""
        self.outstanding += 1
        seq.rec.replica = self.index
        (self.unaccepted if self.migration_gate else self.awaiting_kv).append(seq)
        self.wake()

    def wake(self) -> None:
        if self.group is not None:
            self.group.wake()
        elif self.idle:
            signal, self._wakeup = self._wakeup, Signal()
            self.env.fire(signal)

    def _run(self, scheduler: Scheduler):
        env, times, bm, index, queued = self.env, self.times, self.bm, self.index, self.waiting
        schedule, complete, log = scheduler.schedule, scheduler.complete, self.log
        logged = log.pending   # (IterationLog.append, inlined below: the log keeps this list, cleared in place)
        stepping = self.stepping
        step_ahead, decodes = stepping.advance, stepping.decode_run
        if stepping.observe is not None:
            complete = observed(scheduler, stepping.observe)
        ahead, hold = self.ahead, self.hold
        inf = float("inf")
        skipper, inbox, waits = self.skipper, self.inbox, self.batch_wait
        padded = scheduler.cfg.max_paddings is not None
        compiles = self.compiles
        rows_held, base = self.holds_rows, scheduler.cfg
        shared = self.shared_seq_limit
        gate = self.migration_gate
        while True:
            if gate:   # (DistServe: the KV moves between steps, nothing steps meanwhile; decode_migration.py)
                while self.migrating:   # (pp > 1: another engine's post_process; one event loop awaits it)
                    yield self.migration_done
                if self.unaccepted:
                    self.migrating = True
                    yield from migrate(self, scheduler)
                    self.migrating = False
                    done, self.migration_done = self.migration_done, Signal()
                    env.fire(done)
            if skipper is not None and skipper.polls() and inbox:
                queued.extend(inbox)
                inbox.clear()
            if rows_held or shared:
                limit = base.max_batch
                if rows_held:   # (prefill_rows.py: the rows of requests whose KV is still being sent)
                    limit = batch_limit(base.max_batch, len(scheduler.running), self.sending)
                if shared:   # (vLLM V1: max_num_seqs counts the running requests of every lane)
                    limit = engine_seq_cap(limit, len(scheduler.running), self._running_elsewhere(scheduler))
                if limit <= 0:
                    self.idle += 1
                    self.parked.append(scheduler)
                    yield self._wakeup   # (a send done, a new arrival or a lane's finished requests wake it)
                    self.parked.remove(scheduler)
                    self.idle -= 1
                    continue
                if limit != scheduler.cfg.max_batch:
                    scheduler.cfg = base if limit == base.max_batch else replace(base, max_batch=limit)
            scheduler.admit_before = scheduler.last_start if ahead and scheduler.last_end == env.now else inf
            held = waits is not None and queued and self._holds(scheduler)
            if held:
                scheduler.admit_before = -inf   # (admission takes only requests that arrived before this)
            batch = schedule(env.now)
            rows = batch.rows
            work = rows or batch.prefill   # (bool(batch))
            if not work and not batch.preempted:
                if inbox:   # an idle loop spins through its polls at once
                    queued.extend(inbox)
                    inbox.clear()
                    continue
                if scheduler.admit_before != inf and queued:   # held back only as formed during a step that left
                    scheduler.last_end = -1.0                 # nothing to run: the CPU forms the next one now
                    continue
                self.idle += 1
                self.parked.append(scheduler)
                yield self._wakeup
                self.parked.remove(scheduler)
                self.idle -= 1
                continue
            if self.batch_queue and self.idle and queued:
                self.wake()   # vLLM V1 schedules again at once after queuing a batch: what this one left forms another
            prefills, tokens = [], 0
            for s, n in batch.prefill:
                prefills.append((n, s.computed))
                tokens += n
            if padded and len(prefills) > 1:   # (vLLM 0.2.x: every prompt of the step runs at the longest's length)
                prefills = padded_prefills(prefills)
            context = batch.context // rows if rows else 0   # (batch.decode_context, inlined)
            duration = batch.swap_s + (times.time(rows, context, prefills) if work else 0.0)
            if compiles is not None:
                duration += compiles.cost(tokens)
            if self.stages is not None:   # the other micro-batches ahead of it on the stages
                duration = self.stages.wall_time(env.now, duration)
            if hold is not None:
                hold.next_step(env.now, bool(prefills), duration)
            start, waiting, running = env.now, len(queued), len(scheduler.running)
            self.step_end = start + duration
            if self.batch_queue:
                self.in_flight[scheduler] = self.step_end
            if not step_ahead(env, duration):
                yield duration
            if self.batch_queue:
                del self.in_flight[scheduler]
            complete(batch, env.now)
            if hold is not None:
                hold.ran(batch, env.now, duration)
            scheduler.last_start, scheduler.last_end = start, env.now
            used = bm.num_blocks - (bm.free + len(bm.evictable))   # (bm.used)
            logged += (index, start, duration, rows, len(prefills), tokens, used, waiting, running, batch.preempted,
                      batch.swap_s)
            if len(logged) >= FLUSH_VALUES:
                log.settle()
            if self.idle and (not self.batch_queue or self._parked_work()):
                self.wake()   # blocks may have freed up for an idle virtual scheduler
            if skipper is not None:
                skipper.stepped(bool(prefills))
                continue   # (every step through this loop: decode_run.py does not count polls)
            if held or self.stages is not None or gate:
                continue   # (each held or pipelined step through this loop: decode_run.py does not see them)
            # decode-only iterations up to the next event in one loop, and the one that ends after it
            pending = decodes(self, scheduler)
            while pending is not None:
                start, duration, batch, waiting, running = pending   # (decode_run.Waiting)
                self.step_end = start + duration
                yield duration
                complete(batch, env.now)
                scheduler.last_start, scheduler.last_end = start, env.now
                log.append(index, start, duration, batch.rows, 0, 0, bm.used, waiting, running, 0, 0.0)
                if self.idle:
                    self.wake()
                pending = decodes(self, scheduler)

    def _running_elsewhere(self, scheduler: Scheduler) -> int:
        """Running sequences of this replica's other virtual engines (pipeline lanes)."""
        return sum(len(s.running) for s in self.schedulers if s is not scheduler)

    def _parked_work(self) -> bool:
        """(batch_queue) Whether an idle engine holds work of its own (running, swapped or arrived sequences) or KV is
        waiting to be claimed: only then does a finished step wake it; waiting requests go to the next batch formed."""
        return bool(self.awaiting_kv) or any(s.running or s.swapped_out or s.kv_arrived for s in self.parked)

    def _holds(self, scheduler: Scheduler) -> bool:
        """Whether TensorRT-LLM's batch waiting keeps the waiting prompts out of the step formed now."""
        cfg, generating = scheduler.cfg, len(scheduler.decoding)
        tokens = schedulable_prompt_tokens(self.waiting, len(scheduler.running), generating, cfg.max_batch,
                                           cfg.token_budget)
        return self.batch_wait.holds(tokens, generating)

    # ------------------------------------------------------------ scheduler hooks

    def first_token(self, seq: Seq, scheduler: Scheduler) -> bool:
        """A prefill replica hands the sequence on to the decode pool, keeping its KV until sent."""
        if self.role != "prefill":
            return False
        seq.source = (self, seq.blocks, seq.shared)
        seq.blocks, seq.shared = 0, []
        seq.published = 1 << 62     # the decode side does not offer its blocks to a prefix cache
        self.outstanding -= 1
        if self.holds_rows:
            self.sending += 1
        if self.first_token_sent:   # (DistServe's context stage streams it as its step ends: no hand-off in TTFT)
            rec, now = seq.rec, self.env.now
            rec.emitted.add(now)
            if rec.first_token_s is None:
                rec.first_token_s = now
        self.cluster.hand_on(seq)
        return True

    def finished(self, seq: Seq) -> None:
        self.outstanding -= 1
        if self.cluster.on_finish is not None:
            self.cluster.on_finish(seq.rec)

    def receive(self, seq: Seq, scheduler: Scheduler) -> None:
        self.env.start(self._transfer(seq, scheduler))

    def send_time(self, seq: Seq) -> float:
        """Seconds the KV of `seq` takes from its prefill replica to this one."""
        source = seq.source[0]
        copies = kv_copies(source.times.setup, self.times.setup)   # MLA's latent to each decode TP rank (kv_fanout)
        return source.times.send_time(seq.computed, self.cluster.kv_path, copies)

    def _transfer(self, seq: Seq, scheduler: Scheduler):
        yield self.send_time(seq)
        self.landed(seq, scheduler)

    def landed(self, seq: Seq, scheduler: Scheduler) -> None:
        """The KV of `seq` is here: the prefill replica's blocks freed, its first token out (unless the prefill
        pool sent it), and it decodes from this engine's next step."""
        source, blocks, shared = seq.source
        source.bm.release(blocks)
        source.bm.unref(shared)
        if source.holds_rows:
            source.sending -= 1
        source.wake()
        seq.source = None
        # The prompt's first token reaches the client with its KV, from the decode pool: TTFT includes the hand-off
        # and the decode engine's step in flight (first_token_at)
        if not source.first_token_sent:
            rec = seq.rec
            first = first_token_at(self.env.now, (self.group or self).step_end)
            rec.emitted.add(first)
            if rec.first_token_s is None:
                rec.first_token_s = first
        if self.batch_queue and self.in_flight:
            # vLLM V1: a request whose KV has landed is scheduled by the next batch formed, the one after the first
            # batch in flight completes (the engine blocks on it), whichever engine claimed the transfer
            target = min(self.in_flight, key=self.in_flight.__getitem__)
            scheduler.kv_moving -= 1
            target.kv_moving += 1
            target.arrive(seq)
            return
        scheduler.arrive(seq)
        self.wake()


def first_token_at(kv_landed_s: float, step_end_s: float) -> float:
    """When a disaggregated decode engine streams a request's first token (the prefill pool's, sent with the KV):
    at the end of the step in flight when the KV lands, where its scheduler loop next looks at the transfers
    (SGLang's decode event loop polls its transfer queue between steps and streams the token from the prebuilt
    batch, disaggregation/decode.py process_batch_result_prebuilt; TensorRT-LLM answers it when it schedules the
    request, py_executor _handle_first_token_response); at once on an idle engine."""
    return max(kv_landed_s, step_end_s)


def engine_seq_cap(max_batch: int, running: int, running_elsewhere: int) -> int:
    """A lane's running-sequence limit when `max_batch` bounds the whole engine: what the other lanes leave, never
    below what the lane already runs (nothing is evicted to meet it)."""
    return max(max_batch - running_elsewhere, running)
