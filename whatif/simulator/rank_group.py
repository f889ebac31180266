"""An attention-DP replica as the engines run it: `attention_dp` ranks, each its own scheduler, waiting queue, batch
and KV pool (its share of the group's blocks), stepping together because every MoE layer gathers all ranks' tokens.

A step forms every rank's batch, takes the slowest rank's time (IterationTimes.group_time: each rank's own
attention, dense layers and CPU, the experts over the whole group's tokens) and completes every rank's batch at
its end; a rank with nothing to run still joins the step. Requests are routed to ranks as the engines do:
SGLang's DataParallelController dispatches round-robin by default (`--load-balance-method round_robin`;
shortest_queue and minimum_tokens on request), but a PD-disaggregated prefill server sends each request to rank
bootstrap_room % dp_size (data_parallel_controller.py follow_bootstrap_room_scheduler, the `auto` default in prefill
mode since sgl-project/sglang#16110, merged 2025-12-30, which left PD decode round-robin; before it
round_robin_scheduler did so in prefill and decode alike), a room its router draws at random (Dynamo's SGLang
handler and SGLang's mini_lb `_generate_bootstrap_room`: random.randint(0, 2**63 - 1)): a uniform random rank
(`random` here; sglang#19168 later let prefill use other methods, which it reports "significantly reduces TTFT under
load"); TensorRT-LLM's attention-DP router (pyexecutor ADPRouter) gives new requests to the ranks with the fewest
active requests (`least-outstanding` here)."""
from __future__ import annotations

from dataclasses import replace

from ..roofline.engines import rank_limit
from .adp_balance import AdpBalance
from .clock import Clock, Signal
from .config import SchedulerConfig
from .iteration_time import IterationTimes
from .log import IterationLog, ReplicaInfo
from .prefill_send_slots import SendSlots, send_slots_per_rank
from .replica import Replica
from .router import Router
from .scheduling.sequence import Seq

# The rank router each engine uses when the run names none (see the module docstring); by (engine, role) first,
# keyed on the spec's base engine (EngineSpec.base_engine: every release profile of SGLang routes as SGLang).
ENGINE_RANK_ROUTERS = {"trtllm": "least-outstanding", ("sglang", "prefill"): "random"}
DEFAULT_RANK_ROUTER = "round-robin"


def rank_scheduler(cfg: SchedulerConfig, setup, dp: int) -> SchedulerConfig:
    """One rank's scheduler limits (roofline/engines.py GROUP_LIMITS)."""
    spec = setup.engine_spec
    return replace(cfg, max_batch=rank_limit(spec, cfg.max_batch, dp),
                   token_budget=rank_limit(spec, cfg.token_budget, dp))


def rank_router_for(setup, role: str = "mixed") -> str:
    name = setup.engine_spec.base_engine if setup.engine_spec is not None else ""
    return ENGINE_RANK_ROUTERS.get((name, role), ENGINE_RANK_ROUTERS.get(name, DEFAULT_RANK_ROUTER))


class RankGroup:
    """One attention-DP replica: the cluster's routers see it as one replica, its ranks as one engine each."""

    def __init__(self, env: Clock, index: int, role: str, times: IterationTimes, cfg: SchedulerConfig,
                 log: IterationLog, cluster, rank_router: str | None = None):
        self.env, self.index, self.role, self.times, self.log = env, index, role, times, log
        dp = times.setup.parallel.attention_dp
        cfg = self.cfg = rank_scheduler(cfg, times.setup, dp)
        self.ranks = [Replica(env, index, role, times, cfg, log, cluster, blocks=times.kv_blocks // dp, group=self)
                      for _ in range(dp)]
        seed = getattr(cluster.cfg.workload, "seed", 0) if cluster is not None else 0
        self.router = Router(rank_router or rank_router_for(times.setup, role), self.ranks, f"{seed}-{index}")
        self.schedulers = [s for r in self.ranks for s in r.schedulers]
        self.balance = cfg.attention_dp_balance and dp > 1   # (TensorRT-LLM's attention_dp_config, adp_balance.py)
        slots = send_slots_per_rank(times.setup, role, cfg.max_batch)   # SGLang's PD prefill metadata slots
        self.send_slots = SendSlots(dp, slots) if slots else None
        self.idle = 0
        self._wakeup = Signal()
        self.step_end = 0.0   # when the group's step in flight ends (Replica._transfer reads it)
        for e in range(times.setup.parallel.pp):   # pp virtual engines, each stepping every rank's e-th scheduler
            env.start(self._run([r.schedulers[e] for r in self.ranks]))

    @property
    def bm(self):
        """A rank's block pool (a request lives on one rank: what it must fit)."""
        return self.ranks[0].bm

    @property
    def outstanding(self) -> int:
        return sum(r.outstanding for r in self.ranks)

    def info(self) -> ReplicaInfo:
        c = self.times
        return ReplicaInfo(self.index, self.role, c.setup.parallel.gpus, sum(r.bm.num_blocks for r in self.ranks),
                           c.block_size, c.kv_bytes_per_token, engines=c.setup.parallel.pp,
                           kv_blocks_held_end=sum(r.bm.used for r in self.ranks))

    def submit(self, seq: Seq) -> None:
        self.router.pick(seq.req.prefix_id).submit(seq)

    def hand_in(self, seq: Seq) -> None:
        self.router.pick(seq.req.prefix_id).hand_in(seq)

    def wake(self) -> None:
        if self.idle:
            signal, self._wakeup = self._wakeup, Signal()
            self.env.fire(signal)

    def _run(self, schedulers: list):
        env, times, append, index = self.env, self.times, self.log.append, self.index
        advance = self.ranks[0].stepping.advance   # (the run's, or a caller's: stepping.py)
        gate = AdpBalance(self.cfg.attention_dp_timeout_iters, self.cfg.attention_dp_batching_wait_iters) \
            if self.balance else None
        # a prefill kernel built per new token count, on each rank's own host (prefill_recompile.py; off by default)
        compiles = [r.compiles for r in self.ranks] if self.ranks[0].compiles is not None else None
        while True:
            now = env.now
            slots = self.send_slots
            if gate is not None:
                batches = self._balanced(schedulers, gate, now)
            elif slots is not None:
                batches = self._within_slots(schedulers, slots, now)
            else:
                batches = [s.schedule(now) for s in schedulers]
            busy = [b for b in batches if b.rows or b.prefill]
            if not busy and slots is not None and slots.held():
                slots.release()   # (no rank could take a prompt: the loop spins, polls its sends, and takes them)
                continue
            if not busy and not any(b.preempted for b in batches):
                self.idle += 1
                yield self._wakeup
                self.idle -= 1
                continue
            shapes = [(b.rows, b.decode_context, [(n, s.computed) for s, n in b.prefill]) for b in busy]
            duration = max(b.swap_s for b in batches) + (times.group_time(shapes) if busy else 0.0)
            if compiles is not None:   # each rank's host builds for its own new token count; the step waits for all
                duration += max(c.cost(sum(n for _, n in b.prefill)) for c, b in zip(compiles, batches))
            start = now
            self.step_end = start + duration
            waiting = sum(len(s.waiting) for s in schedulers)
            running = sum(len(s.running) for s in schedulers)
            if not advance(env, duration):
                yield duration
            for s, b in zip(schedulers, batches):
                s.complete(b, env.now)
            append(index, start, duration, sum(b.rows for b in batches), sum(len(b.prefill) for b in batches),
                   sum(n for b in batches for _, n in b.prefill), sum(r.bm.used for r in self.ranks), waiting,
                   running, sum(b.preempted for b in batches), max(b.swap_s for b in batches))
            if self.idle:
                self.wake()

    @staticmethod
    def _within_slots(schedulers: list, slots: SendSlots, now: float) -> list:
        """Every rank's batch, each taking no more new prompts than its free send slots (prefill_send_slots.py)."""
        batches = []
        for s, cap in zip(schedulers, slots.caps()):
            base = s.cfg
            if cap <= 0:
                s.admit_before = float("-inf")   # (admission takes only requests that arrived before this: none)
            elif len(s.running) + cap < base.max_batch:
                s.cfg = replace(base, max_batch=len(s.running) + cap)
            try:
                batches.append(s.schedule(now))
            finally:
                s.cfg, s.admit_before = base, float("inf")
        slots.record([sum(1 for q, _ in b.prefill if q.rec.first_scheduled_s == now) for b in batches])
        return batches

    @staticmethod
    def _balanced(schedulers: list, gate: AdpBalance, now: float) -> list:
        """Every rank's batch under the balancing gate: a held iteration admits no new prompt on any rank."""
        prompts = [bool(s.waiting) and s.policy.admits(s) for s in schedulers]
        held = not gate.admit(prompts, [len(s.decoding) for s in schedulers], [s.cfg.max_batch for s in schedulers])
        if not held:
            return [s.schedule(now) for s in schedulers]
        for s in schedulers:
            s.admit_before = float("-inf")   # (admission takes only requests that arrived before this)
        try:
            return [s.schedule(now) for s in schedulers]
        finally:
            for s in schedulers:
                s.admit_before = float("inf")
