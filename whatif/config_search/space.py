"""What `whatif search` searches: the model, the hardware pool and GPU budget, the workload, the SLOs, and the
axes of the space (parallel layouts, serving modes, batch limits, precisions, technique sets).

An engine is one replica's setup (system, tp/pp/ep, precisions, techniques): what the roofline prices. A
configuration is a deployment built from engines: aggregated replicas at a batch limit, or a disaggregated xPyD
cluster (x prefill replicas, y decode replicas). Engines are enumerated here; configurations in configs.py."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import WhatifError, positive_int

DEFAULT_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)   # max running sequences per replica (vLLM max_num_seqs: 256)
DEFAULT_DTYPES = ("bf16",)
MODES = ("aggregated", "disaggregated")
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
class EngineKey:
    """One replica's setup: what one roofline evaluation prices (at every batch of the space)."""

    hardware: str
    tp: int
    pp: int
    ep: int
    weight: str
    kv: str
    techniques: tuple = ()     # technique specs, as `--technique` takes them
    dp_attention: bool = False  # attention data parallel over the TP group (MoE, ep == tp > 1)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    def label(self) -> str:
        techs = "+".join(str(t) for t in self.techniques)
        ep = f" ep{self.ep}" if self.ep > 1 else ""
        dp = " dp-attn" if self.dp_attention else ""
        return f"tp{self.tp} pp{self.pp}{ep}{dp} w{self.weight} kv{self.kv}" + (f" {techs}" if techs else "")


@dataclass(frozen=True)
class SearchSpace:
    """A search: model, pool, workload, SLOs and the axes enumerated (each a tuple of the values tried)."""

    model: str
    hardware: tuple[str, ...]              # system (or GPU) types of the pool
    gpu_budget: int                        # GPUs the whole deployment may use
    prompt: int = 4000                     # ISL, tokens
    output: int = 1000                     # OSL, tokens
    slo: SLOTargets = field(default_factory=SLOTargets)
    tps: tuple[int, ...] | None = None     # None: every power of two up to a node
    pps: tuple[int, ...] | None = None
    batches: tuple[int, ...] = DEFAULT_BATCHES
    weight_dtypes: tuple[str, ...] = DEFAULT_DTYPES
    kv_dtypes: tuple[str, ...] = DEFAULT_DTYPES
    technique_sets: tuple[tuple, ...] = ((),)
    modes: tuple[str, ...] = MODES
    prefill_chunk: int = 8192              # tokens per prefill pass (engine max_num_batched_tokens)
    efficiency: str = "default"
    kv_link: str | None = None             # link between disaggregated pools (default: the system's GPU link)
    objective: str = "tok_s_per_gpu"

    def __post_init__(self):
        positive_int(self.gpu_budget, "--gpus")
        positive_int(self.prompt, "--prompt")
        positive_int(self.output, "--output")
        positive_int(self.prefill_chunk, "--prefill-chunk")
        if not self.hardware:
            raise WhatifError("--hardware: name at least one system or GPU for the pool")
        for name, flag in (("tps", "--tp"), ("pps", "--pp"), ("batches", "--batches")):
            for v in getattr(self, name) or ():
                positive_int(v, flag)
        for m in self.modes:
            if m not in MODES:
                raise WhatifError(f"--modes: {m!r} is not valid; valid: {', '.join(MODES)}")
        from ..roofline.config import Precision
        for w in self.weight_dtypes:
            Precision(weight=w)
        for kv in self.kv_dtypes:
            Precision(kv=kv)
        if self.objective not in OBJECTIVES:
            raise WhatifError(f"--objective: {self.objective!r} is not valid; valid: {', '.join(OBJECTIVES)}")
        if not self.batches or not self.modes:
            raise WhatifError("search: give at least one batch limit and one mode")


def node_gpus(hardware: str) -> int:
    """GPUs in one node of `hardware`: a system's count, or 8 for a bare GPU (one NVLink/NVSwitch node)."""
    from ..specs.hardware import MAX_BARE_GPUS, System, load_component
    comp = load_component(hardware, None, "--hardware")
    return comp.gpu_count if isinstance(comp, System) else MAX_BARE_GPUS


def _powers_of_two(limit: int) -> tuple[int, ...]:
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return tuple(out)


def layouts(space: SearchSpace, node: int, moe: bool) -> list[tuple[int, int, int, bool]]:
    """(tp, pp, ep, dp_attention) of one replica: inside one node (TP and PP over the node's GPU link) and within
    the budget. EP spreads experts over the TP group (1 or tp), as the roofline models it; with ep = tp > 1 the
    attention may also run data-parallel over that group (SGLang --enable-dp-attention)."""
    limit = min(node, space.gpu_budget)
    tps = space.tps or _powers_of_two(limit)
    pps = space.pps or _powers_of_two(limit)
    out = []
    for tp in tps:
        for pp in pps:
            if tp * pp > limit:
                continue
            for ep in ((1, tp) if moe and tp > 1 else (1,)):
                out.append((tp, pp, ep, False))
                if ep > 1:
                    out.append((tp, pp, ep, True))
    return out


def engine_keys(space: SearchSpace, moe: bool) -> list[EngineKey]:
    """Every engine of the space, in a fixed order (the order results are reported in)."""
    keys = []
    for hw in space.hardware:
        node = node_gpus(hw)
        for tp, pp, ep, dp in layouts(space, node, moe):
            for w in space.weight_dtypes:
                for kv in space.kv_dtypes:
                    for techs in space.technique_sets:
                        keys.append(EngineKey(hw, tp, pp, ep, w, kv, tuple(techs), dp))
    return keys
