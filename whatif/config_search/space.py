"""What `whatif search` searches: the model, the hardware pool and GPU budget, the workload, the SLOs, and the
axes of the space (parallel layouts, serving modes, batch limits, precisions, technique sets).

A replica setup is one replica's (system, tp/pp/ep, precisions, techniques): what the roofline prices. A
configuration is a deployment built from replica setups: aggregated replicas at a batch limit, or a disaggregated xPyD
cluster (x prefill replicas, y decode replicas). Engines are enumerated here; configurations in configs.py."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import WhatifError, shown
from .checkpoint_scheme import CHECKPOINT, DEFAULT_DTYPES

DEFAULT_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)   # max running sequences per replica (vLLM max_num_seqs: 256)
DEFAULT_CHUNKS = (8192,)    # tokens per prefill pass (vLLM/SGLang max_num_batched_tokens / chunked-prefill-size)
MODES = ("aggregated", "disaggregated")


def expand_modes(names):
    """--modes as given, with `both` (the flag's help and default) standing for every mode."""
    if names is None:
        return None
    out = [m for n in names for m in (MODES if isinstance(n, str) and n.lower() == "both" else (n,))]
    return list(dict.fromkeys(out))
OBJECTIVES = ("tok_s_per_gpu", "tok_s")    # what "best" maximizes: per GPU, or the whole deployment's


@dataclass(frozen=True)
class SLOTargets:
    """Per-request latency targets a configuration must meet (None: no target)."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None

    def __post_init__(self):
        for name in ("ttft_s", "tpot_s", "e2e_s"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0):
                raise WhatifError(f"slo {name}: {v!r} must be a number of seconds > 0")

    def misses(self, ttft_s: float, tpot_s: float, e2e_s: float) -> str:
        """Why a configuration with these latencies misses the targets ('' when it meets them)."""
        out = [f"{label} {value * 1e3:.4g} ms > {target * 1e3:.4g} ms"
               for label, value, target in (("TTFT", ttft_s, self.ttft_s), ("TPOT", tpot_s, self.tpot_s),
                                            ("E2E", e2e_s, self.e2e_s))
               if target is not None and value > target]
        return "; ".join(out)


@dataclass(frozen=True)
class ReplicaSetup:
    """One replica's setup: what one roofline evaluation prices (at every batch of the space)."""

    hardware: str
    tp: int
    pp: int
    ep: int
    weight: str
    kv: str
    techniques: tuple = ()     # technique specs, as `--technique` takes them
    dp_attention: bool = False  # attention data parallel (MoE, tp > 1); alone: one rank per GPU of the TP group
    quantization: str = ""     # a named scheme (`--quantizations`): sets the weights and activations ('' : dtypes)
    attention_dp: int = 0      # attention-DP ranks (0: tp under dp_attention, else 1); stored canonical

    def __post_init__(self):
        ranks = self.attention_dp or (self.tp if self.dp_attention else 1)
        object.__setattr__(self, "attention_dp", ranks)       # one spelling per layout: equal setups compare equal
        object.__setattr__(self, "dp_attention", ranks > 1)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def parallel(self):
        """Its layout as the roofline's Parallelism (what replica_scenario runs)."""
        from ..roofline.config import Parallelism
        return Parallelism(self.tp, self.pp, self.ep, self.dp_attention, attention_dp=self.attention_dp)

    @property
    def moe_tp(self) -> int:
        """Each routed expert's columns split over tp / ep GPUs (ep x moe_tp = tp, the engines' layout)."""
        return self.tp // self.ep if self.tp % self.ep == 0 else 0

    def label(self) -> str:
        techs = "+".join(str(t) for t in self.techniques)
        ep = (f" ep{self.ep}" + (f" moe-tp{self.moe_tp}" if 1 < self.ep < self.tp else "")) if self.ep > 1 else ""
        dp = "" if not self.dp_attention else " dp-attn" if self.attention_dp == self.tp else \
            f" dp-attn{self.attention_dp}"
        weights = f"q{self.quantization}" if self.quantization else f"w{self.weight}"
        return f"tp{self.tp} pp{self.pp}{ep}{dp} {weights} kv{self.kv}" + (f" {techs}" if techs else "")


@dataclass(frozen=True)
class SearchSpace:
    """A search: model, pool, workload, SLOs and the axes enumerated (each a tuple of the values tried)."""

    model: str
    hardware: tuple[str, ...]              # system (or GPU) types of the pool
    gpu_budget: int                        # GPUs the whole deployment may use
    prompt: int = 4000                     # ISL, tokens
    output: int = 1000                     # OSL, tokens
    slo: SLOTargets = field(default_factory=SLOTargets)
    tps: tuple[int, ...] | None = None     # None: every power of two up to a node (MoE with EP: up to the system)
    pps: tuple[int, ...] | None = None
    eps: tuple[int, ...] | None = None     # MoE: EP sizes tried; None: every power of two dividing tp
    attention_dps: tuple[int, ...] | None = None   # MoE: attention-DP ranks tried (1: off); None: attention_ranks
    nodes: int | None = None               # --nodes N: each system of the pool is N of that node profile
    batches: tuple[int, ...] = DEFAULT_BATCHES
    weight_dtypes: tuple[str, ...] = DEFAULT_DTYPES
    kv_dtypes: tuple[str, ...] = DEFAULT_DTYPES
    quantizations: tuple[str, ...] = ()    # schemes tried instead of weight_dtypes ('none': those dtypes)
    technique_sets: tuple[tuple, ...] = ((),)
    modes: tuple[str, ...] = MODES
    prefill_chunks: tuple[int, ...] = DEFAULT_CHUNKS   # tokens per prefill pass: one engine setting each
    efficiency: str = "default"
    kv_link: str | None = None             # link between disaggregated pools (default: the system's GPU link)
    objective: str = "tok_s_per_gpu"
    engine: str = "vllm"                   # --engine: the serving engine every replica runs (engine_profiles/)
    # host s a prefill step pays the first time a server runs its token count (the simulator's engine setting,
    # simulator/prefill_recompile.py): the steady state pays none (recompile.py), the re-check runs it
    prefill_recompile_s: float = 0.0

    def __post_init__(self):
        from ..specs.checks import MAX_GPUS, MAX_PARALLEL, MAX_REQUESTS, MAX_TOKENS, integer, number
        from ..roofline.engines import check_engine
        integer(self.gpu_budget, "--gpus", high=MAX_GPUS, what="GPUs")
        if not isinstance(self.engine, str):
            raise WhatifError(f"--engine: {shown(self.engine)} must be an engine's name")
        check_engine(self.engine)
        integer(self.prompt, "--prompt", high=MAX_TOKENS, what="tokens")
        integer(self.output, "--output", high=MAX_TOKENS, what="tokens")
        if not isinstance(self.slo, SLOTargets):
            raise WhatifError(f"slo: {shown(self.slo)} must be SLOTargets(ttft_s, tpot_s, e2e_s)")
        _names(self.hardware, "--hardware", "a system or GPU for the pool")
        if self.nodes is not None:
            integer(self.nodes, "--nodes", high=MAX_GPUS, what="nodes")
        for hw in self.hardware:
            node_gpus(hw)        # an unknown name is an error now, not a rejection of every engine
            system_gpus(hw, self.nodes)   # and one that cannot be composed of nodes
        for name, flag, high, what in (("tps", "--tp", MAX_PARALLEL, "GPUs"), ("pps", "--pp", MAX_PARALLEL, "GPUs"),
                                       ("eps", "--ep", MAX_PARALLEL, "GPUs"),
                                       ("attention_dps", "--dp-attention", MAX_PARALLEL, "ranks"),
                                       ("batches", "--batches", MAX_REQUESTS, "sequences"),
                                       ("prefill_chunks", "--prefill-chunks", MAX_TOKENS, "tokens")):
            values = getattr(self, name)
            if values is None and name in ("tps", "pps", "eps", "attention_dps"):
                continue         # every power of two up to a node
            _sequence(values, flag)
            for v in values:
                integer(v, flag, high=high, what=what)
        _names(self.modes, "--modes", "aggregated or disaggregated")
        for m in self.modes:
            if m not in MODES:
                raise WhatifError(f"--modes: {shown(m)} is not valid; valid: {', '.join(MODES)}")
        from ..roofline.config import Precision
        for w in _names(self.weight_dtypes, "--weight-dtypes", "a weight format, e.g. bf16"):
            Precision(weight=w)
        for kv in _names(self.kv_dtypes, "--kv-dtypes", "a KV cache format, e.g. bf16"):
            Precision(kv=kv)
        if self.quantizations:
            from ..specs.quantization import scheme
            for q in _names(self.quantizations, "--quantizations", "a scheme, e.g. fp8 or none"):
                if q not in ("none", CHECKPOINT):
                    scheme(q, "--quantizations")
        _sequence(self.technique_sets, "--technique")
        from ..roofline.efficiency import SOURCES
        if self.efficiency not in SOURCES:
            raise WhatifError(f"--efficiency: {shown(self.efficiency)} is not valid; valid: {', '.join(SOURCES)}")
        if self.kv_link is not None:
            from ..specs.hardware import load_component
            load_component(self.kv_link, "link", "--kv-link")
        number(self.prefill_recompile_s, "--prefill-recompile-s", 0.0, 10.0, "s")   # (SchedulerConfig's range)
        if self.objective not in OBJECTIVES:
            raise WhatifError(f"--objective: {shown(self.objective)} is not valid; valid: {', '.join(OBJECTIVES)}")


def _sequence(values, flag: str) -> None:
    """`values` must be a non-empty tuple or list (a bare string or number is a mistake, not one value)."""
    if not isinstance(values, (tuple, list)):
        raise WhatifError(f"{flag}: {shown(values)} must be a list of values, e.g. [1, 2]")
    if not values:
        raise WhatifError(f"{flag}: an empty list; give at least one value")


def _names(values, flag: str, example: str) -> tuple:
    """`values` must be a non-empty list of non-empty strings."""
    if not isinstance(values, (tuple, list)) or not values:
        raise WhatifError(f"{flag}: {shown(values)} must be a non-empty list; name {example}")
    for v in values:
        if not isinstance(v, str) or not v.strip():
            raise WhatifError(f"{flag}: {shown(v)} is not a name; name {example}")
    return tuple(values)


def node_gpus(hardware: str) -> int:
    """GPUs in one node of `hardware`: a system's count, or 8 for a bare GPU (one NVLink/NVSwitch node)."""
    from ..specs.hardware import MAX_BARE_GPUS, System, load_component
    comp = load_component(hardware, None, "--hardware")
    return comp.gpu_count if isinstance(comp, System) else MAX_BARE_GPUS


@lru_cache(maxsize=64)   # asked once per configuration composed (budget)
def system_gpus(hardware: str, nodes: int | None = None) -> int | None:
    """GPUs a system profile holds (all its nodes, `nodes` of it when given), or None for a bare GPU (as many as
    asked for)."""
    from ..scenario import Scenario
    system = Scenario(hardware=hardware, nodes=nodes).system_profile()
    return None if system is None else system.gpu_count


def budget(space: SearchSpace, hardware: str) -> int:
    """The GPUs a deployment on `hardware` may use: the budget, capped at what a system holds (a deployment
    beyond it would need nodes the profile does not have, and `simulate` refuses it)."""
    held = system_gpus(hardware, space.nodes)
    return space.gpu_budget if held is None else min(space.gpu_budget, held)


def budget_notes(space: SearchSpace) -> list[str]:
    """One line per system of the pool that holds fewer GPUs than the budget."""
    out = []
    for hw in space.hardware:
        held = system_gpus(hw, space.nodes)
        if held is not None and held < space.gpu_budget:
            out.append(f"note: --gpus {space.gpu_budget}: system '{hw}' holds {held} GPUs, so its deployments are "
                       f"capped at {held}; give --nodes N for N such nodes, or name a multi-node system "
                       f"(`whatif list hardware`, e.g. 2x-dgx-h100-ib)")
    return out


def _powers_of_two(limit: int) -> tuple[int, ...]:
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return tuple(out)


def layouts(space: SearchSpace, node: int, moe: bool, system: int | None = None) -> list[tuple[int, int, int, int]]:
    """(tp, pp, ep, attention-DP ranks; 1: off) of one replica within the budget. TP and PP stay inside one node
    (the node's GPU link); a MoE model's experts split ep x moe_tp = tp ways, every power-of-two EP dividing tp
    (TensorRT-LLM's moe_ep_size x moe_tp_size), each with attention_ranks' ranks. A TP group wider than a node
    (the `system`'s nodes) runs only whole experts over it (ep = tp, wide EP) under attention DP whose ranks'
    attention TP stays inside a node."""
    limit = min(node, space.gpu_budget)
    wide = min(system or node, space.gpu_budget)
    tps = space.tps or _powers_of_two(wide if moe else limit)
    pps = space.pps or _powers_of_two(limit)
    out = []
    for tp in tps:
        for pp in pps:
            if tp * pp > (wide if moe and pp == 1 else limit):
                continue
            eps = [e for e in (space.eps or default_eps(space, tp)) if tp % e == 0] if moe and tp > 1 else [1]
            for ep in eps:
                if tp > limit and ep != tp:
                    continue       # across nodes: wide EP only
                ranks = attention_ranks(tp, ep, limit, moe) if space.attention_dps is None else \
                    [r for r in space.attention_dps if tp % r == 0 and (moe and tp > 1 or r == 1)
                     and tp // r <= limit and (r > 1 or tp <= limit)]
                out += [(tp, pp, ep, r) for r in ranks]
    return out


def vllm_ep_sizes(tp: int) -> tuple[int, int]:
    """The EP sizes vLLM launches for a replica of `tp` GPUs: its routed experts form one group of its DP x TP GPUs,
    split over them like TP by default (ep 1) or whole with --enable-expert-parallel (ep = tp); no flag sets an EP
    between (docs.vllm.ai/en/v0.12.0/serving/data_parallel_deployment/ "The expert layers will by default form a
    (DP x TP) sized tensor parallel group"; expert_parallel_deployment/ at v0.10.1.1: "EP_SIZE = TP_SIZE x DP_SIZE")."""
    return (1, tp)


def default_eps(space: SearchSpace, tp: int) -> tuple[int, ...]:
    """EP sizes tried when --ep is not given: every power of two dividing tp (TensorRT-LLM's moe_ep_size x
    moe_tp_size, SGLang's --ep-size under --tp-size); vLLM's only the two it launches (vllm_ep_sizes). A given --ep
    is tried as asked (queries/serve_command.py notes what vLLM runs)."""
    from ..roofline.engines import engine_spec
    return vllm_ep_sizes(tp) if engine_spec(space.engine).base_engine == "vllm" else _powers_of_two(tp)


def attention_ranks(tp: int, ep: int, node: int, moe: bool) -> list[int]:
    """Attention-DP ranks tried for a TP group of `tp` GPUs with EP `ep` (1: off), the layouts the engines run:
    off (within a node); one rank per GPU at every EP (TensorRT-LLM enable_attention_dp, SGLang
    --enable-dp-attention); and with whole experts over the group (ep = tp) every power of two between, each
    rank's attention TP (tp / ranks) inside a node (vLLM --data-parallel-size with --enable-expert-parallel,
    SGLang --dp N under tp). Fewer ranks with split experts (moe_tp > 1) are left out: no engine config of the
    serving set runs them, and each adds a setup to price."""
    if not moe or tp == 1:
        return [1]
    ranks = [1] if tp <= node else []
    ranks += [r for r in _powers_of_two(tp)[1:-1] if ep == tp and tp // r <= node]
    return ranks + [tp]


def replica_setups(space: SearchSpace, moe: bool) -> list[ReplicaSetup]:
    """Every engine of the space, in a fixed order (the order results are reported in)."""
    keys = []
    for hw in space.hardware:
        node = node_gpus(hw)
        for tp, pp, ep, ranks in layouts(space, node, moe, system_gpus(hw, space.nodes)):
            for w, q in weight_formats(space):
                for kv in space.kv_dtypes:
                    for techs in space.technique_sets:
                        keys.append(ReplicaSetup(hw, tp, pp, ep, w, kv, tuple(techs), ranks > 1, q, ranks))
    return keys


def weight_formats(space: SearchSpace) -> list[tuple[str, str]]:
    """(weight dtype, scheme) pairs tried: the schemes named by `quantizations` ('none': each weight dtype),
    else the weight dtypes alone."""
    from ..specs.quantization import scheme
    plain = [(w, "") for w in space.weight_dtypes]
    if not space.quantizations:
        return plain
    return [pair for q in space.quantizations for pair in (plain if q == "none" else [("bf16", q)] if q == CHECKPOINT
                                                           else [(scheme(q).weight, q)])]
