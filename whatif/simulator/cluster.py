"""A serving cluster on the simulator's event clock (clock.py): requests arrive, a router sends each
to a replica, replicas run their engines; with disaggregation (DistServe), prefill replicas hand each
prefilled request to a decode replica, which pulls its KV over the link between the pools.

`simulate` returns every request that arrived, finished or not, with the reason for rejections."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from ..roofline.techniques.compose import overrides
from ..scenario import Scenario
from .clock import URGENT, Clock
from .collections_paused import collections_paused
from .config import SLO, SimConfig
from .iteration_time import IterationTimes
from .pools import check_fits, kv_path, prefill_flags, prefill_scenario, systems_used   # noqa: F401 (check_fits: the commands')
from .log import IterationLog
from .open_loop import OpenLoop
from .rank_group import RankGroup
from .replica import Replica
from .request import REJECTED, Record, Request
from .router import Router
from .scheduling.sequence import Seq
from .stepping import EXACT, Stepping


_TIMES: dict[str, IterationTimes] = {}   # runs of one scenario (a capacity search) share roofline answers
_TIMES_KEPT = 8
PRIORITY_WORDS = {"prefill": "prefill-priority", "decode": "decode-priority",
                  "mixed": "whole prompts beside the decodes"}   # (without chunked prefill)


def _iteration_times(scenario: Scenario, par, sched, plan_seq_len: int) -> IterationTimes:
    if par != scenario.parallel:
        scenario = replace(scenario, parallel=par, gpus=None)
    key = repr((scenario, sched.block_size, sched.token_budget, plan_seq_len, sched.scheduler_steps))
    times = _TIMES.get(key)
    if times is None:
        setup = scenario.resolved().pass_setup()   # (shared prefixes: the traffic's, cached; not the workload's)
        times = IterationTimes(setup, scenario.cuda_graphs, sched.block_size, sched.token_budget, plan_seq_len,
                               sched.scheduler_steps)
        # a kept scenario of an equal setup (another chunk, batch cap or traffic: a re-check's layouts) lends its
        # StepPricer: the pricer reads the setup alone, so its remembered parts answer this one's steps alike
        times.pricer = next((t.pricer for t in _TIMES.values() if t.setup == setup), times.pricer)
        if len(_TIMES) >= _TIMES_KEPT:
            _TIMES.pop(next(iter(_TIMES)))
        _TIMES[key] = times
    times.hits = times.misses = 0   # counted per run
    return times


def _replica(env, index: int, role: str, times: IterationTimes, sched, log, cluster):
    """A replica of `times`' layout: under attention-DP a group of ranks stepping together (rank_group.py)."""
    if times.setup.parallel.attention_dp > 1:
        return RankGroup(env, index, role, times, sched, log, cluster)
    return Replica(env, index, role, times, sched, log, cluster)


class Cluster:
    def __init__(self, env, cfg: SimConfig, plan_seq_len: int, keep_log: bool = True, stepping: Stepping = EXACT):
        self.env = env
        self.cfg = cfg
        self.stepping = stepping   # the replicas' shortcuts and step observer (stepping.py)
        self.log = IterationLog(keep=keep_log)
        sc, sched, cl = cfg.scenario, cfg.scheduler, cfg.cluster
        decode_times = _iteration_times(sc, sc.parallel, sched, plan_seq_len)
        self.window = decode_times.setup.model.max_position_embeddings
        self.fits: tuple[int, int] | None = None   # see rejection
        self.limits: tuple | None = None   # (prompt, prompt + output) within which rejection answers '' (arrive)
        self.kv_path = None
        self.systems = ""
        self.on_finish: Callable | None = None   # called with each finished request's record (a closed loop's clients)
        self.entry_scheduler = sched   # the limits of the pool that computes the prompts
        if cl.disaggregated:
            pre = prefill_scenario(cfg)
            self.entry_scheduler = pre_sched = cl.prefill_scheduler(sched)
            with prefill_flags():
                prefill_times = _iteration_times(pre, pre.parallel, pre_sched, plan_seq_len)
            gpus = prefill_times.setup.parallel.gpus, decode_times.setup.parallel.gpus
            self.kv_path = kv_path(cfg, prefill_times.setup.system, *gpus)
            self.systems = systems_used(cfg, *gpus)
            prefill = [_replica(env, i, "prefill", prefill_times, pre_sched, self.log, self)
                       for i in range(cl.prefill_replicas)]
            decode = [_replica(env, cl.prefill_replicas + i, "decode", decode_times, sched, self.log, self)
                      for i in range(cl.replicas)]
            self.entry, self.decode = Router(cl.router, prefill), Router(cl.router, decode)
            self.replicas = prefill + decode
        else:
            mixed = [_replica(env, i, "mixed", decode_times, sched, self.log, self) for i in range(cl.replicas)]
            self.entry = self.decode = Router(cl.router, mixed)
            self.replicas = mixed
        # the pool's one replica, which takes every request (Router.pick's answer), else None
        self.single = self.entry.replicas[0] if len(self.entry.replicas) == 1 else None

    def rejection(self, r: Request) -> str:
        """Why a request can never be served here ('' when it can)."""
        # One text per cause (the request's own length is in its record), so a summary counts them together.
        if r.prompt + r.output > self.window:
            return f"prompt + output exceeds the context window ({self.window} tokens)"
        e = self.entry_scheduler
        if e.whole_prompts_beside_decodes and r.prompt > e.token_budget:
            # TensorRT-LLM without chunked context: max input length = min(max_seq_len - 1, max_num_tokens)
            return (f"prompt exceeds the token budget ({e.token_budget} tokens) of an engine that computes a "
                    "prompt whole in one step (raise --token-budget or turn on --chunked-prefill)")
        if self.fits is None:   # the most tokens a prefill and a decode replica hold above the watermark
            self.fits = tuple((r.replicas[0].bm.num_blocks - r.replicas[0].bm.watermark_blocks)
                              * r.replicas[0].bm.block_size for r in (self.entry, self.decode))
        if r.prompt <= self.fits[0] and r.prompt + r.output - 1 <= self.fits[1]:   # (ceil(t / size) <= usable)
            return ""
        for router, tokens in ((self.entry, r.prompt), (self.decode, r.prompt + r.output - 1)):
            replica = router.replicas[0]
            blocks = -(-tokens // replica.bm.block_size)
            usable = replica.bm.num_blocks - replica.bm.watermark_blocks
            if blocks > usable:
                return (f"needs more KV blocks than a {replica.role} replica holds ({usable} above the watermark, "
                        f"{usable * replica.bm.block_size} tokens)")
        return ""

    def arrive(self, rec: Record) -> None:
        r = rec.request
        limits = self.limits
        # (rejection's answer '' without asking it, for a request within every limit it checks: most of them)
        if limits is None or not (r.prompt <= limits[0] and r.prompt + r.output <= limits[1]):
            reason = self.rejection(r)
            if reason:
                rec.status, rec.reason = REJECTED, reason
                return
            if self.fits is not None:
                e, inf = self.entry_scheduler, float("inf")
                budget = e.token_budget if e.whole_prompts_beside_decodes else inf
                self.limits = (min(self.fits[0], budget), min(self.window, self.fits[1] + 1))
        if self.single is not None:
            self.single.submit(Seq(rec))
        else:
            self.entry.pick(r.prefix_id).submit(Seq(rec))

    def hand_on(self, seq: Seq) -> None:
        self.decode.pick(seq.req.prefix_id).hand_in(seq)

    def lookup_stats(self) -> dict:
        stats: dict = {}
        for times in {id(r.times): r.times for r in self.replicas}.values():
            for key, value in times.stats().items():
                stats[key] = stats.get(key, 0) + value if key.startswith("iteration_time") else value
        return stats


def describe_setup(cfg: SimConfig, cluster: Cluster, workload: str) -> dict:
    """Human lines (strings) for the report, and the raw configuration under 'config'."""
    e, cl = cfg.scheduler, cfg.cluster
    first = cluster.replicas[0].times.setup
    techs = first.techniques.label() if first.techniques else "none"
    systems = " / ".join(dict.fromkeys(r.times.setup.system.name for r in cluster.replicas))   # (pools' own types)
    kv = first.techniques.kv_label(first.precision.kv) if first.techniques else None   # (kivi's 2 bits, say)
    scenario = (f"{cfg.scenario.model} on {systems}, {first.precision.label(kv)}, techniques: {techs}, "
                f"efficiency: {first.efficiency.source}")

    def pool(replicas: list) -> str:
        r = replicas[0]
        par = r.times.setup.parallel
        ranks = (f", {par.attention_dp} attention-DP ranks stepping together, {r.router.policy} to ranks, each "
                 f"at most {r.cfg.max_batch} sequences and {r.cfg.token_budget} tokens a step"
                 if isinstance(r, RankGroup) else "")
        own = r.schedulers[0].cfg   # (a prefill pool's own limits: ClusterConfig.prefill_scheduler)
        if not ranks and (own.max_batch, own.token_budget) != (e.max_batch, e.token_budget):
            ranks = f", at most {own.max_batch} sequences and {own.token_budget} tokens a step"
        gpu = f"{r.times.setup.system.gpu.name} " if cl.prefill_hardware else ""   # (pools of two GPU types)
        ep = f" ep={par.ep}" if par.ep > 1 else ""
        return (f"{len(replicas)} {r.role} replica{'s' if len(replicas) > 1 else ''} ({gpu}tp={par.tp} pp={par.pp}{ep}"
                f"{ranks}, {r.times.kv_blocks} KV blocks = {r.times.kv_blocks * e.block_size} tokens each)")
    pools = [pool([r for r in cluster.replicas if r.role == role]) for role in ("prefill", "decode", "mixed")
             if any(r.role == role for r in cluster.replicas)]
    batching = (f"scheduling policy {e.policy}" if e.policy is not None else "static batching" if e.batching == "static"
                else f"continuous batching, {'chunked prefill' if e.chunked_prefill else PRIORITY_WORDS[e.priority]}")
    if e.scheduler_steps > 1:
        batching += f", {e.scheduler_steps} decode steps per scheduling (multi-step, tokens streamed together)"
    if e.recv_interval > 1:
        batching += f", new requests read every {e.recv_interval} decode steps (SGLang --scheduler-recv-interval)"
    if e.ignore_eos_admission:
        batching += ", ignore_eos requests admitted only if every running one fits to its end (SGLang, radix cache off)"
    if e.prefill_recompile_s > 0:
        batching += (f", {e.prefill_recompile_s * 1e3:.3g} ms of host compile on each prefill step of a token count "
                     "not run before (a kernel built per count, as SGLang's FLA L2-norm before PR #31558)")
    if e.batch_wait_timeout_iters > 0 or e.batch_wait_max_tokens_ratio > 0:
        batching += (f", prompts beside decodes held up to {e.batch_wait_timeout_iters} steps or until "
                     f"{e.batch_wait_max_tokens_ratio:.0%} of the token budget (TensorRT-LLM batch waiting)")
    spec = first.engine_spec
    engine = (f"{spec.name + ' spec (engine_profiles), ' if spec is not None else ''}"
              f"{batching}, token budget {e.token_budget}, max batch {e.max_batch}, {e.block_size}-token blocks, "
              f"watermark {e.watermark:.0%}, prefix caching {'on' if e.prefix_caching else 'off'}, "
              + ("KV reserved for the whole output at admission (no preemption)" if e.capacity == "reserve"
                 else f"KV blocks on demand, preemption by {e.preemption}"
                 + (", admission by SGLang's new_token_ratio" if e.capacity == "ratio" else "")))
    cluster_line = " + ".join(pools) + f", router {cl.router}"
    if cluster.kv_path is not None:
        cluster_line += f", {cluster.kv_path.name}"
    if cluster.systems:
        cluster_line += f"; pools as their own deployments: {cluster.systems}"
    out = {"scenario": scenario, "engine": engine, "cluster": cluster_line, "workload": workload}
    prompt_handling = [t.name for t in first.techniques.items if overrides(t, "prefill_units")]
    if prompt_handling:   # the scheduler prefills whole prompts; say so rather than answer silently without it
        out["not simulated"] = (f"{', '.join(prompt_handling)}: which prompt tokens are computed, compressed or "
                                "reused (applied by `whatif estimate`); here every prompt token is prefilled")
    return {**out, "config": {"engine": asdict(e), "cluster": asdict(cl), "horizon_s": cfg.horizon_s}}


def simulate(cfg: SimConfig, progress: Callable[[int, int], None] | None = None,
             requests: list[Request] | None = None, stop_failing: SLO | None = None, keep_log: bool = True,
             stepping: Stepping = EXACT):
    """Run `cfg` (its workload's requests, or `requests`) and return a SimulationResult. `stop_failing`: an
    open-loop run without a horizon raises certain_miss.SloFailed as soon as it fails that SLO for sure.
    `keep_log` False: the iterations are counted, not stored (a run judged by its requests alone). `stepping`:
    the replicas' shortcuts and step observer (stepping.py; a test's own, else the exact ones)."""
    from .workload import generate
    with collections_paused() as paused:   # (building the requests and their records too)
        if requests is None:
            requests = generate(cfg.workload)

        if cfg.workload is not None and cfg.workload.concurrency:
            from .closed_loop import check_closed_loop
            check_closed_loop(cfg)
        return _run(cfg, list(map(Record, requests)), requests, paused, progress, stop_failing=stop_failing,
                    keep_log=keep_log, stepping=stepping)


def _run(cfg: SimConfig, records: list[Record], requests: list[Request], paused, progress, clients: int = 0,
         stop_failing: SLO | None = None, keep_log: bool = True, stepping: Stepping = EXACT):
    """simulate's run of `records` (the collector paused by the caller; `paused.freeze()` before the clock starts)."""
    from .metrics import SimulationResult
    from .workload import describe
    mean_len = sum(r.prompt + r.output for r in requests) / max(len(requests), 1)
    env = Clock()
    cluster = Cluster(env, cfg, max(1, round(mean_len)), keep_log, stepping)

    check, every = None, 1
    if stop_failing is not None and cfg.horizon_s is None and records:
        from .certain_miss import CHECKS, watch
        check, every = watch(stop_failing, len(records)), max(1, len(records) // CHECKS)

    spec = cluster.replicas[0].times.setup.engine_spec
    paid = spec is not None and (spec.frontend.per_request_s > 0 or spec.frontend.per_prompt_token_s > 0)
    front = spec.frontend if paid else None
    loop: Any = None      # a closed loop's ClientLoop
    arrivals: OpenLoop | None = None
    if cfg.workload is not None and cfg.workload.concurrency:   # clients on the clock send the requests
        from .closed_loop import ClientLoop
        lanes = cfg.cluster.prefill_replicas if cfg.cluster.disaggregated else 1   # (closed_loop.py: front ends)
        loop = ClientLoop(env, cluster, records, cfg.workload.concurrency,
                          front if cfg.workload.through_server else None, lanes)
        cluster.on_finish = loop.answered
        env.at(0, loop.start, None, URGENT)
    else:
        arrivals = OpenLoop(env, cluster, records, progress, check, every)
        env.at(0, arrivals.deliver, None, URGENT)   # started as a process starts: an urgent call now
        if check is not None:
            cluster.on_finish = arrivals.answered
    paused.freeze()   # the records and the cluster live to the end: never scanned
    try:
        env.run(until=cfg.horizon_s)
    finally:
        # The clock, replicas and cluster reach each other (a cycle): cut what reaches the records from them, so
        # the records are freed when the result is (or at once, after a stopped run), not by the collector
        cluster.on_finish = None
        if arrivals is not None:
            arrivals.release()
    arrived = arrivals.arrived if arrivals is not None else loop.sent
    for replica in cluster.replicas:
        for scheduler in replica.schedulers:
            scheduler.flush()
    if progress:
        progress(len(records), len(records))
    records = records[:arrived]   # those due after the horizon never arrived
    setup = describe_setup(cfg, cluster, describe(cfg.workload) if cfg.workload is not None
                           else f"{len(requests)} given requests")
    return SimulationResult(records, cluster.log, [r.info() for r in cluster.replicas], env.now, cfg.slo, setup,
                            cluster.lookup_stats(), front, loop.clients if loop is not None else 0)
