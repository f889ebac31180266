"""What to simulate besides the scenario: the engine's scheduler, the cluster, the SLOs.

The scheduler's limits (max sequences, token budget, block size, chunked prefill, prefix caching) default to the serving
engine's spec (engine_profiles/*.yaml, vLLM unless --engine says otherwise: SchedulerConfig.for_engine); the
rest are vLLM's documented defaults, stated where they come from."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

from ..errors import WhatifError, check_mapping, positive_int
from ..roofline.config import MOE_A2A
from ..roofline.engines import engine_spec
from ..roofline.moe_kernels import check_moe_kernels
from ..specs.checks import choice, integer, number
from ..specs.engines import CAPACITY, PRIORITIES, EngineSpec
from ..scenario import Scenario

if TYPE_CHECKING:   # (the workload module needs numpy, which building a command's parser does not)
    from .workload import WorkloadSpec

_SPEC = engine_spec()   # the default engine's spec: a bare SchedulerConfig()'s defaults (a run's: for_engine)
# The fields whose default is the engine spec's for the scenario's GPU (SchedulerConfig.for_engine).
SPEC_DEFAULTS = ("priority", "chunked_prefill", "max_batch", "token_budget", "block_size", "capacity",
                 "prefix_caching", "preempted_blocks_cached", "admits_after_preempting", "preempted_queue_last",
                 "max_paddings", "admits_partial_chunk")

BATCHING = ("continuous", "static")
PREEMPTION = ("recompute", "swap")
ROUTERS = ("round-robin", "least-outstanding", "prefix-aware")


@dataclass(frozen=True)
class SchedulerConfig:
    """One replica's scheduler and KV cache manager."""

    batching: str = "continuous"   # continuous (iteration-level, Orca/vLLM) or static (request-level, padded)
    priority: str = _SPEC.priority  # without chunked prefill: prefill-priority (vLLM V0), decode-priority, or
                                    # mixed: whole prompts beside the decodes (TensorRT-LLM without chunked context)
    chunked_prefill: bool = _SPEC.chunked_prefill   # Sarathi-Serve / vLLM V1: decodes first, prefill chunks fill
    max_batch: int = _SPEC.max_num_seqs             # running sequences (the engine's max_num_seqs)
    token_budget: int = _SPEC.max_num_batched_tokens   # tokens per iteration (max_num_batched_tokens)
    block_size: int = _SPEC.block_size              # tokens per KV block
    watermark: float = 0.01        # share of KV blocks kept free when admitting (vLLM default)
    prefix_caching: bool = _SPEC.prefix_caching   # reuse shared prefixes' KV blocks (vLLM V1, SGLang: on by default)
    preemption: str = "recompute"  # recompute (vLLM default) or swap to host memory
    # with prefix caching, a sequence preempted by recompute leaves its full KV blocks cached (vLLM V1), so it
    # recomputes only the blocks evicted meanwhile; SGLang's retract frees them uncached (release_kv_cache
    # is_insert=False)
    preempted_blocks_cached: bool = _SPEC.preempted_blocks_cached
    admits_after_preempting: bool = _SPEC.admits_after_preempting   # vLLM V1: no admission in a step that preempted
    # a waiting request's first chunk cut to the free KV blocks; vLLM V1 (False) admits the token budget's chunk only
    # when all its blocks are free, else stops admitting (scheduler.py: allocate_slots(...) is None -> break)
    admits_partial_chunk: bool = _SPEC.admits_partial_chunk
    # a sequence preempted by recompute rejoins the waiting queue at its back (SGLang's retract: waiting_queue.extend),
    # not its front (vLLM)
    preempted_queue_last: bool = _SPEC.preempted_queue_last
    # vLLM 0.2.x: a prefill step's prompts padded to its longest (2D inputs), admitted while prompts x longest fit the
    # token budget and the padding stays within this many tokens (scheduling/padded_prompts.py); None: unpadded
    max_paddings: int | None = _SPEC.max_paddings
    capacity: str = _SPEC.capacity   # on-demand: KV blocks as tokens need them (vLLM, preempting when out);
                                     # reserve: a request is admitted only with blocks for its whole output
                                     # set aside (TensorRT-LLM's GUARANTEED_NO_EVICT): never preempted
    swap_space_gb: float = 4.0     # host memory per GPU for swapped KV, GiB (vLLM's swap_space default)
    scheduler_steps: int = 1       # vLLM V0 --num-scheduler-steps: a decode iteration runs this many decode
                                   # passes for one scheduling, its tokens streamed together at its end
    policy: str | None = None      # a scheduling policy by name (scheduling/registry.py; checked when an engine is
                                   # built); default: the one batching, priority and chunked_prefill describe
    # TensorRT-LLM's attention_dp_config (enable_balance, timeout_iters, batching_wait_iters; defaults off, 50, 10):
    # an attention-DP group holds new prompts until every rank has one (simulator/adp_balance.py)
    attention_dp_balance: bool = False
    attention_dp_timeout_iters: int = 50
    attention_dp_batching_wait_iters: int = 10
    # SGLang's --scheduler-recv-interval (default 1): a busy scheduler polls for new requests once per this many
    # decode steps (a step with a prefill, or an idle engine, polls at once): simulator/recv_interval.py
    recv_interval: int = 1
    # TensorRT-LLM's batch_wait_timeout_iters / batch_wait_max_tokens_ratio (defaults 0, 0: off): prompts held
    # beside running decodes until the step's tokens reach ratio x token budget or the iterations run out
    # (simulator/batch_wait.py)
    batch_wait_timeout_iters: int = 0
    batch_wait_max_tokens_ratio: float = 0.0
    # host seconds a prefill step pays the first time the server runs its prefill token count (a kernel Triton
    # compiles per token count: SGLang's FLA L2-norm of the GDN prefill before PR #31558); 0: off
    # (simulator/prefill_recompile.py)
    prefill_recompile_s: float = 0.0
    # SGLang with --disable-radix-cache serving ignore_eos requests (capacity ratio): a request joins only if the
    # pool holds every running one and it to their ends, whole outputs at ratio 1.0 (scheduling/ignore_eos.py)
    ignore_eos_admission: bool = False
    # pipeline parallelism: whether micro-batches form as vLLM V1's batch queue does (an arrival waits for the batch in
    # flight; engine spec scheduler.pp_batch_queue, for_engine's default) or every free pp slot takes arrivals at once;
    # None: the replica's spec decides. Set for an engine run on another's spec (Sarathi-Serve's: claims/family_j.py)
    pp_batch_queue: bool | None = None

    def __post_init__(self):
        choice(self.batching, BATCHING, "--batching")
        choice(self.priority, PRIORITIES, "--priority")
        choice(self.preemption, PREEMPTION, "--preemption")
        choice(self.capacity, CAPACITY, "--capacity")
        positive_int(self.max_batch, "--max-batch")
        positive_int(self.token_budget, "--token-budget")
        positive_int(self.block_size, "--block-size")
        number(self.watermark, "--watermark", 0.0, 0.5)
        number(self.swap_space_gb, "--swap-space", 0.0)
        positive_int(self.scheduler_steps, "--scheduler-steps")
        if self.scheduler_steps > 1 and (self.chunked_prefill or self.batching != "continuous"
                                         or self.priority != "prefill"):
            raise WhatifError(f"--scheduler-steps {self.scheduler_steps}: multi-step scheduling (vLLM 0.6) runs "
                              f"with continuous batching, prefill-priority steps and no chunked prefill; valid: "
                              f"--scheduler-steps 1, or --batching continuous --priority prefill --no-chunked-prefill")
        if self.policy is not None and not isinstance(self.policy, str):
            raise WhatifError(f"policy: {self.policy!r} must be a scheduling policy's name")
        integer(self.attention_dp_timeout_iters, "attention_dp_timeout_iters", 0, what="iterations")
        integer(self.attention_dp_batching_wait_iters, "attention_dp_batching_wait_iters", 0, what="iterations")
        integer(self.recv_interval, "recv_interval", 1, what="decode steps")
        integer(self.batch_wait_timeout_iters, "batch_wait_timeout_iters", 0, what="iterations")
        number(self.batch_wait_max_tokens_ratio, "batch_wait_max_tokens_ratio", 0.0, 1.0)
        number(self.prefill_recompile_s, "prefill_recompile_s", 0.0, 10.0)
        if self.ignore_eos_admission is True and self.capacity != "ratio":
            raise WhatifError(f"ignore_eos_admission: SGLang's ignore_eos admission refines capacity 'ratio', not "
                              f"{self.capacity!r}; valid: capacity ratio, or ignore_eos_admission false")
        if self.max_paddings is not None:
            integer(self.max_paddings, "max_paddings", 0, what="tokens")
        if self.pp_batch_queue is not None and not isinstance(self.pp_batch_queue, bool):
            raise WhatifError(f"pp_batch_queue: {self.pp_batch_queue!r} must be true, false or unset (the engine's)")
        for name in ("chunked_prefill", "prefix_caching", "attention_dp_balance", "preempted_blocks_cached",
                     "admits_after_preempting", "preempted_queue_last", "ignore_eos_admission",
                     "admits_partial_chunk"):
            if not isinstance(getattr(self, name), bool):
                raise WhatifError(f"{name}: {getattr(self, name)!r} must be true or false")

    @property
    def whole_prompts_beside_decodes(self) -> bool:
        """The `mixed` policy in force: continuous batching without chunked prefill, prompts whole beside the
        running decodes within the token budget (so a prompt longer than the budget can never run)."""
        return self.priority == "mixed" and not self.chunked_prefill and self.batching == "continuous"

    @classmethod
    def for_engine(cls, spec: EngineSpec, **given) -> SchedulerConfig:
        """The scheduler of `spec` (its limits as defaults), with the fields `given` over them."""
        unknown = set(given) - {f.name for f in fields(cls)}
        if unknown:
            raise WhatifError(f"engine: unknown field(s) {', '.join(sorted(unknown))}; "
                              f"valid: {', '.join(f.name for f in fields(cls))}")
        defaults = {"chunked_prefill": spec.chunked_prefill, "priority": spec.priority, "max_batch": spec.max_num_seqs,
                    "token_budget": spec.max_num_batched_tokens, "block_size": spec.block_size,
                    "capacity": spec.capacity, "prefix_caching": spec.prefix_caching,
                    "preempted_blocks_cached": spec.preempted_blocks_cached,
                    "admits_after_preempting": spec.admits_after_preempting,
                    "preempted_queue_last": spec.preempted_queue_last, "max_paddings": spec.max_paddings,
                    "admits_partial_chunk": spec.admits_partial_chunk, "pp_batch_queue": spec.pp_batch_queue}
        return cls(**{**defaults, **given})


@dataclass(frozen=True)
class ClusterConfig:
    """Replicas of the scenario's model behind a router; with prefill_replicas > 0, a disaggregated
    cluster (DistServe): a prefill pool of its own layout and GPU type, and a decode pool of `replicas` of the
    scenario's layout, KV sent over `kv_link` (default: NVLink when both pools fit in one node or rack of the
    system, else the nodes' NICs)."""

    replicas: int = 1
    router: str = "round-robin"
    prefill_replicas: int = 0
    prefill_tp: int | None = None  # the prefill pool's parallelism (default: the scenario's)
    prefill_pp: int | None = None
    prefill_ep: int | None = None  # (default: the decode pool's, or the prefill TP group where experts span it)
    prefill_dp_attention: bool | None = None   # (default: the decode pool's when both have one TP size)
    prefill_attention_dp: int | None = None    # its attention-DP ranks (default: one per GPU under DP attention)
    prefill_hardware: str | None = None   # the prefill pool's system or GPU (default: the scenario's)
    prefill_max_batch: int | None = None   # a prefill replica's running sequences (default: the engine's max_batch)
    prefill_token_budget: int | None = None   # a prefill replica's tokens per step (default: its token_budget)
    prefill_moe_kernels: str | None = None   # the prefill pool's fused-MoE kernels (TensorRT-LLM's ctx worker
                                             # moe_config.backend; default: the scenario's moe_kernels)
    prefill_moe_a2a: str | None = None   # what carries the prefill pool's attention-DP MoE dispatch / combine (an
                                         # SGLang prefill worker without --moe-a2a-backend gathers; default: moe_a2a)
    kv_link: str | None = None     # link profile between the pools (default: see above)

    def __post_init__(self):
        positive_int(self.replicas, "--replicas")
        choice(self.router, ROUTERS, "--router")
        if isinstance(self.prefill_replicas, bool) or not isinstance(self.prefill_replicas, int) \
                or self.prefill_replicas < 0:
            raise WhatifError(f"--prefill-replicas: {self.prefill_replicas!r} must be a non-negative integer")
        for name in ("prefill_tp", "prefill_pp", "prefill_ep", "prefill_attention_dp", "prefill_max_batch",
                     "prefill_token_budget"):
            if getattr(self, name) is not None:
                positive_int(getattr(self, name), "--" + name.replace("_", "-"))
        if self.prefill_dp_attention is not None and not isinstance(self.prefill_dp_attention, bool):
            raise WhatifError(f"--prefill-dp-attention: {self.prefill_dp_attention!r}; valid: true or false")
        if self.prefill_moe_kernels is not None:
            check_moe_kernels(self.prefill_moe_kernels, "--prefill-moe-kernels")
        if self.prefill_moe_a2a is not None:
            choice(self.prefill_moe_a2a, MOE_A2A, "--prefill-moe-a2a")
        if self.prefill_hardware is not None and not isinstance(self.prefill_hardware, str):
            raise WhatifError(f"--prefill-hardware: {self.prefill_hardware!r} must be a system or GPU profile's name")
        if self.prefill_dp_attention is False and (self.prefill_attention_dp or 1) > 1:
            raise WhatifError(f"--prefill-attention-dp {self.prefill_attention_dp}: attention-DP ranks of a prefill "
                              f"replica, but --no-prefill-dp-attention turns attention DP off; drop one of them")
        given = [n for n in ("prefill_tp", "prefill_pp", "prefill_ep", "prefill_dp_attention", "prefill_attention_dp",
                             "prefill_hardware", "prefill_max_batch", "prefill_token_budget", "prefill_moe_kernels",
                             "prefill_moe_a2a")
                 if getattr(self, n) is not None]
        if given and not self.disaggregated:
            raise WhatifError(f"--{given[0].replace('_', '-')}: sets the prefill pool's layout or limits; give "
                              f"--prefill-replicas N (N > 0) for a disaggregated cluster, or drop it")

    @property
    def disaggregated(self) -> bool:
        return self.prefill_replicas > 0

    def prefill_scheduler(self, decode: SchedulerConfig) -> SchedulerConfig:
        """A prefill replica's scheduler: the decode pool's (`decode`) with the prefill pool's own limits over it
        (aiconfigurator's generator launches prefill workers at max_batch_size 1, max_num_tokens ISL + 1500)."""
        return replace(decode, max_batch=self.prefill_max_batch or decode.max_batch,
                       token_budget=self.prefill_token_budget or decode.token_budget)

    def prefill_parallel(self, decode):
        """The prefill pool's Parallelism: its own fields over the decode pool's (`decode`), EP following its TP
        group where the decode pool spreads experts over the whole group, attention-DP kept only at one TP size."""
        from ..roofline.config import Parallelism
        tp, pp = self.prefill_tp or decode.tp, self.prefill_pp or decode.pp
        ep = self.prefill_ep or (decode.ep if tp == decode.tp else tp if decode.ep == decode.tp > 1 else 1)
        # the prefill workers' own transport where given, else the decode pool's (search names none: NCCL's)
        a2a = self.prefill_moe_a2a or getattr(decode, "moe_a2a", "nccl")
        # the routing skew is the model's and the traffic's, not a pool's: an EP prefill pool waits on it too
        skew = getattr(decode, "expert_skew", 0.0) if ep > 1 else 0.0
        ranks = self.prefill_attention_dp
        if ranks is not None:
            if tp % ranks:
                valid = ", ".join(str(d) for d in range(1, tp + 1) if tp % d == 0)
                raise WhatifError(f"--prefill-attention-dp: {ranks} ranks do not divide the prefill TP group of {tp} "
                                  f"GPUs; valid: {valid} (attention TP per rank = prefill tp / ranks)")
            return Parallelism(tp=tp, pp=pp, ep=ep, dp_attention=ranks > 1, attention_dp=ranks, moe_a2a=a2a,
                               expert_skew=skew)
        dp = self.prefill_dp_attention
        if dp is None:
            dp = decode.dp_attention and tp == decode.tp and ep == tp
        return Parallelism(tp=tp, pp=pp, ep=ep, dp_attention=dp, moe_a2a=a2a, expert_skew=skew)


@dataclass(frozen=True)
class SLO:
    """Per-request latency objectives (DistServe: a request attains the SLO when it meets both)."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    attainment: float = 0.9        # share of requests that must attain it (capacity search)

    def __post_init__(self):
        if self.ttft_s is not None:
            number(self.ttft_s, "--slo-ttft", 0.0, low_open=True)
        if self.tpot_s is not None:
            number(self.tpot_s, "--slo-tpot", 0.0, low_open=True)
        number(self.attainment, "--attainment", 0.0, 1.0, low_open=True)

    @property
    def given(self) -> bool:
        return self.ttft_s is not None or self.tpot_s is not None


@dataclass(frozen=True)
class SimConfig:
    """One simulation: the scenario (model, system, parallelism, techniques) served under a workload."""

    scenario: Scenario
    workload: WorkloadSpec
    scheduler: SchedulerConfig = SchedulerConfig()
    cluster: ClusterConfig = ClusterConfig()
    slo: SLO = SLO()
    horizon_s: float | None = None  # stop the clock here (default: when every request is done)

    def __post_init__(self):
        if self.horizon_s is not None:
            number(self.horizon_s, "--horizon", 0.0, low_open=True)


def section_classes() -> dict:
    """{scenario file section: the simulator dataclass its fields belong to}."""
    from .workload import WorkloadSpec
    return {"traffic": WorkloadSpec, "engine": SchedulerConfig, "cluster": ClusterConfig, "slo": SLO}


def file_sections(sim: dict, where: str) -> dict:
    """A scenario file's simulator values (scenario.read_scenario_file's third part), each section checked for
    unknown fields."""
    checked = {k: check_mapping(sim[k], {f.name for f in fields(cls)}, f"{where}.{k}")
               for k, cls in section_classes().items() if k in sim}
    return {**{k: v for k, v in sim.items() if k not in checked}, **checked}


def sim_config(scenario: Scenario, values: dict[str, dict]) -> SimConfig:
    """SimConfig from {section: field values} (traffic, engine, cluster, slo, run): the engine's scheduler
    defaults are its spec's for the scenario's GPU; each dataclass checks its own values."""
    c = section_classes()
    return SimConfig(scenario, c["traffic"](**values.get("traffic", {})),
                     SchedulerConfig.for_engine(scenario.engine_spec(), **values.get("engine", {})),
                     ClusterConfig(**values.get("cluster", {})), SLO(**values.get("slo", {})), **values.get("run", {}))
