"""A scenario: model + system + parallelism + precisions + workload, from one YAML file and/or flags."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import WhatifError, check_mapping, positive_int, shown
from .specs.checks import (MAX_BATCH, MAX_GPUS, MAX_PARALLEL, MAX_TOKENS, MAX_WIDTH, boolean, choice, integer,
                           mapping, number, string)
from .specs.hardware import System, load_component, load_system
from .specs.nodes import compose_nodes, load_nodes, node_profiles
from .specs.models import ModelSpec, load_model
from .specs.profiles import read_yaml
from .specs.engines import DECODE_GRAPH_MODES, EngineSpec, expand_sizes
from .specs.defaults import DEFAULT_HARDWARE, DEFAULT_MODEL  # noqa: F401 (re-exported: callers import them here)
from .specs.quantity import Quantity
from .roofline.config import Parallelism, Precision
from .roofline.efficiency import Efficiency, efficiency_source, load_efficiency
from .roofline.engines import DEFAULT_ENGINE, engine_for_gpu, engine_spec
from .roofline.workload import Workload
from .roofline.pass_setup import PassSetup, pass_setup
from .roofline.moe_kernels import WEIGHT_ONLY_KERNELS, check_moe_kernels, moe_fit_engine
from .roofline.placement import Placement, parse_place
from .roofline.techniques.compose import TechniqueSet
from .roofline.techniques.registry import technique_set
from .roofline.tiers import add_tiers, with_host_link

if TYPE_CHECKING:   # (imported when an estimate runs: a simulation or a search reads the scenario without it)
    from .roofline.estimate import Estimate


@dataclass(frozen=True)
class Scenario:
    """One scenario's inputs: model, hardware, layout, precision, workload, techniques, tiers."""

    model: str = DEFAULT_MODEL
    hardware: str = DEFAULT_HARDWARE
    gpus: int | None = None
    nodes: int | None = None   # --nodes N: N of the node profile `hardware` as one system (NICs between them)
    parallel: Parallelism = field(default_factory=Parallelism)
    precision: Precision = field(default_factory=Precision)
    workload: Workload = field(default_factory=Workload)
    efficiency: str = "default"
    calibration: str | None = None
    kernel_engine: str = DEFAULT_ENGINE   # --engine: the serving engine (engine_profiles/) whose loop, memory
                                          # accounting and measured kernels are used (YAML `engine:` is the
                                          # simulator's scheduler section)
    cuda_graphs: bool = True
    cudagraph_mode: str | None = None   # decode graphs whole ('full') or in pieces ('piecewise', vLLM's PIECEWISE);
                                        # None: the engine spec's cuda_graphs.decode_mode
    cuda_graph_sizes: tuple | None = None   # decode batch sizes captured (a launch's list, TensorRT-LLM's
                                            # cuda_graph_config.batch_sizes); None: the engine spec's decode_sizes
    overlap_schedule: bool | None = None   # the engine's host work runs beside the GPU's step (its spec's
                                           # cpu.overlapped; None: the spec's): False as SGLang's
                                           # --disable-overlap-schedule, or speculative decoding on its V1 workers
    topk_topp_sort: bool | None = None   # the engine's top-k/top-p sampler sorts each sequence's vocabulary (its
                                         # spec's sampler_sorts_vocab; None: the spec's): a release's default path
                                         # for requests carrying both (serving_reference.py vllm_sort_sampler)
    memory_utilization: float | None = None   # the engine's memory fraction; None: its spec's default
    max_num_seqs: int | None = None             # the engine's scheduler limits; None: its spec's defaults
    max_num_batched_tokens: int | None = None
    techniques: tuple = ()     # specs: 'kivi', 'h2o:heavy=0.1', or {name: kivi, bits: 4}
    place: tuple | dict = ()   # 'kv=cxl:0.5' specs, or {kv: {cxl: 0.5}}: shares kept outside HBM
    access: str = "stream"     # stream (copy into HBM per layer) or direct (kernels read the tier in place)
    overlap: bool = True       # streamed copies overlap compute
    add_tiers: tuple = ()      # 'MEMORY[:COUNT]': extra devices behind the GPU's host link
    host_link: str | None = None        # replace the GPU's host link (and the tier paths through it)
    price_per_hour: float | None = None  # USD/h for the GPUs used, over the profiles' prices
    context_window: int | None = None    # what-if: treat the model's window as this many tokens
    launch_us: float | None = None       # host CPU launch + queuing time per kernel in eager mode (e.g. Grace's)
    moe_kernels: str | None = None       # the fused-MoE kernels the deployment picks (TensorRT-LLM moe_config.backend
                                         # TRTLLM: 'trtllm-gen', MXFP4 x MXFP8: 'trtllm-gen-mxfp8'; vLLM
                                         # VLLM_MXFP4_USE_MARLIN=1: 'marlin'; VLLM_USE_FLASHINFER_MOE_FP8=0 with
                                         # VLLM_MOE_USE_DEEP_GEMM=0, block-FP8: 'triton'), priced by
                                         # the rows that timed them (moe_kernels.py)
    moe_problem_cost: bool = False       # price each local expert's grouped-GEMM problem where measured (TensorRT-LLM's
                                         # Hopper block-FP8 MoE: roofline/grouped_problems.py); off: as before

    def parallelism(self) -> Parallelism:
        """The parallelism, --gpus filling --tp where only it is given (and checked against tp x pp)."""
        par = self.parallel
        if self.gpus is not None:
            positive_int(self.gpus, "--gpus")
            if par.tp == 1 and self.gpus > par.pp:
                if self.gpus % par.pp:
                    raise WhatifError(f"--gpus: {self.gpus} is not a multiple of --pp {par.pp}")
                par = replace(par, tp=self.gpus // par.pp)
            elif par.tp * par.pp != self.gpus:
                raise WhatifError(f"--gpus: {self.gpus} != --tp {par.tp} x --pp {par.pp}; "
                                  f"give matching values or only one of them")
        return par

    def resolved(self) -> ResolvedScenario:
        """The profiles loaded and checked, and the engine spec built, once: what everything below takes."""
        par = self.parallelism()
        model = load_model(self.model)
        if self.context_window is not None:
            model = replace(model, max_position_embeddings=positive_int(self.context_window, "--context-window"))
        if self.gpus is None and par.gpus > 1:
            comp = self.system_profile()
            if comp is not None and par.gpus > comp.gpu_count:
                more = f", or --nodes N (N of '{comp.name}')" if comp.name in node_profiles() else ""
                raise WhatifError(f"--tp {par.tp} x --pp {par.pp} = {par.gpus} GPUs, more than the "
                                  f"{comp.gpu_count} GPUs of system '{comp.name}'; "
                                  f"valid: tp x pp <= {comp.gpu_count}{more}")
        system = load_nodes(self.hardware, self.nodes, par.gpus if par.gpus > 1 else self.gpus)
        if self.host_link is not None:
            system = with_host_link(system, self.host_link)
        engine = self.engine_spec().with_moe_kernels(self.moe_kernels)   # (its MoE finalize + all-reduce fusion)
        if self.launch_us is not None:
            lu = self.launch_us
            if isinstance(lu, bool) or not isinstance(lu, (int, float)) or not 0 <= lu < 1e6:
                raise WhatifError(f"--launch-us: {lu!r} must be a non-negative number of microseconds")
            launch = Quantity(lu * 1e-6, "s", "assumed", "user-given CPU launch time per kernel (--launch-us)")
            system = replace(system, gpu=replace(system.gpu, launch_overhead=launch))
        elif engine.eager_launch_s is not None:   # an eager engine's own host cost per kernel (PyTorch eager)
            launch = Quantity(engine.eager_launch_s, "s", "assumed", engine.sources["kernels.eager_launch_s"])
            system = replace(system, gpu=replace(system.gpu, launch_overhead=launch))
        system = add_tiers(system, list(self.add_tiers))
        eff = load_efficiency(self.efficiency, system.gpu, self.calibration, self.kernel_engine)
        # the engine version's own all-reduce limit caps the fitted kernels' thresholds (trtllm-0.6: NCCL only)
        eff = replace(eff, custom_allreduce_max_bytes=engine.custom_allreduce_cap(par.tp),
                      multinode_nvls=engine.multinode_nvls)   # (NCCL_NVLS_ENABLE=0: two_node_allreduce.py)
        if engine.programmatic_launch:   # PDL: each kernel starts as the one before drains (kernel_options.py)
            eff = replace(eff, kernel_gap_s=0.0)
        moe_engine = moe_fit_engine(self.moe_kernels, system.gpu.arch)
        if moe_engine is not None and eff.engine:   # (the ideal and calibrated models time no MoE fit)
            eff = replace(eff, moe_engine=moe_engine,
                          provenance=f"{eff.provenance}; MoE experts: the {self.moe_kernels} kernels the deployment "
                                     f"picks, priced by {moe_engine}'s fused-MoE fit of their rows (moe_kernels.py)")
        if self.moe_kernels in WEIGHT_ONLY_KERNELS and eff.engine:
            eff = replace(eff, moe_weight_only=True,
                          provenance=f"{eff.provenance}; MoE experts: 4-bit float weights on the {self.moe_kernels} "
                                     "kernels, priced by the engine's weight-only MoE fit (moe_kernels.py)")
        if self.moe_problem_cost and eff.engine:   # (the ideal and calibrated models time no such term)
            eff = replace(eff, grouped_problem_cost=True,
                          provenance=f"{eff.provenance}; MoE experts: each local expert's grouped-GEMM problem priced "
                                     "where measured (grouped_problems.py)")
        return ResolvedScenario(self, model, system, par, eff, engine)

    def system_profile(self) -> System | None:
        """The system named (its --nodes composed), all its GPUs; None for a bare GPU (as many as asked for)."""
        comp = load_component(self.hardware, None, "--hardware")
        if not isinstance(comp, System):
            return None if self.nodes in (None, 1) else load_nodes(self.hardware, self.nodes)
        return compose_nodes(comp, self.nodes) if self.nodes else comp

    def resolve(self) -> tuple[ModelSpec, System, Parallelism, Efficiency]:
        """(model, system, parallelism, efficiency) of resolved()."""
        r = self.resolved()
        return r.model, r.system, r.parallel, r.efficiency

    def engine_spec(self) -> EngineSpec:
        """The engine's spec as it configures itself on this scenario's GPU (vLLM's large-GPU defaults): the
        GPU's profile decides, not how many of it."""
        return _engine_on(self.kernel_engine, self.hardware, self.max_num_seqs, self.max_num_batched_tokens,
                          self.cudagraph_mode, self.cuda_graph_sizes, self.overlap_schedule, self.topk_topp_sort)

    def utilization(self) -> float:
        """The engine's memory fraction: given, or its spec's default at this tensor parallelism."""
        if self.memory_utilization is not None:
            return self.memory_utilization
        return self.engine_spec().memory.default_fraction(self.parallel.tp)

    def technique_set(self) -> TechniqueSet:
        return technique_set(self.techniques).for_workload(self.workload).for_engine(self.kernel_engine)

    def placement(self) -> Placement:
        return parse_place(self.place, self.access, self.overlap)

    def run(self, with_max_batch: bool = True) -> Estimate:
        return self.resolved().estimate(with_max_batch)


@cache
def _engine_on(kernel_engine: str, hardware: str, max_num_seqs: int | None,
               max_num_batched_tokens: int | None, cudagraph_mode: str | None = None,
               cuda_graph_sizes: tuple | None = None, overlap_schedule: bool | None = None,
               topk_topp_sort: bool | None = None) -> EngineSpec:
    # memoized: a run asks for its spec from the CLI, the estimate and the simulator; it is built once
    gpu = load_system(hardware).gpu
    spec = engine_spec(engine_for_gpu(kernel_engine, gpu)).for_gpu(gpu)   # vllm on an AMD GPU: vllm-rocm
    spec = spec.with_decode_graph_mode(cudagraph_mode).with_graph_sizes(cuda_graph_sizes)
    spec = spec.with_cpu_overlap(overlap_schedule).with_sort_sampler(topk_topp_sort)
    if max_num_seqs is None and max_num_batched_tokens is None:
        return spec
    return spec.with_limits(max_num_seqs, max_num_batched_tokens)


@dataclass(frozen=True)
class ResolvedScenario:
    """A Scenario with its profiles loaded, its parallelism settled and its engine spec built for its GPU (every
    default filled): the estimate, the simulator's iteration pricer and the configuration search take this."""

    scenario: Scenario
    model: ModelSpec
    system: System
    parallel: Parallelism
    efficiency: Efficiency
    engine_spec: EngineSpec

    @property
    def utilization(self) -> float:
        return self.scenario.utilization()

    @property
    def placement(self) -> Placement:
        return self.scenario.placement()

    def technique_set(self, workload: Workload | None = None) -> TechniqueSet:
        return technique_set(self.scenario.techniques).for_workload(workload or self.scenario.workload).for_engine(
            self.scenario.kernel_engine)

    def pass_setup(self, shared_prefix: int = 0, workload: Workload | None = None) -> PassSetup:
        """The forward pass setup (a simulation's prefixes are its traffic's: it leaves shared_prefix 0), with the
        techniques' defaults for `workload` (default: the scenario's), as the estimate of `workload` builds it."""
        sc = self.scenario
        return pass_setup(self.model, self.system, self.parallel, sc.precision, self.efficiency, self.utilization,
                          self.technique_set(workload), self.placement, shared_prefix, self.engine_spec)

    def estimate(self, with_max_batch: bool = True, workload: Workload | None = None) -> Estimate:
        """The estimate of the scenario's workload, or of `workload` on the same deployment."""
        from .roofline.estimate import estimate
        sc, w = self.scenario, workload or self.scenario.workload
        return estimate(self.model, self.system, self.parallel, sc.precision, w, self.efficiency,
                        cuda_graphs=sc.cuda_graphs, utilization=self.utilization, techniques=self.technique_set(w),
                        with_max_batch=with_max_batch, placement=self.placement, price_per_hour=sc.price_per_hour,
                        engine_spec=self.engine_spec)


_SECTIONS = {"parallel": Parallelism, "precision": Precision, "workload": Workload}
_TOP = {"model", "hardware", "gpus", "nodes", "efficiency", "calibration", "kernel_engine", "cuda_graphs",
        "cudagraph_mode", "cuda_graph_sizes", "overlap_schedule", "topk_topp_sort", "memory_utilization",
        "max_num_seqs", "max_num_batched_tokens",
        "techniques", "place", "access", "overlap", "add_tiers", "host_link", "price_per_hour", "context_window",
        "launch_us", "moe_kernels", "moe_problem_cost"}


def _section(cls, raw, where: str):
    extra = {"quantize_experts_only"} if cls is Precision else set()   # a switch inputs.py turns into fields
    return check_mapping(raw, {f.name for f in fields(cls) if not f.name.startswith("_")} | extra, where)


# What `whatif simulate` / `capacity` read besides the scenario: sections named after the simulator's dataclasses
# (traffic, engine, cluster, slo; checked by whatif.simulator.config.file_sections) and a top-level horizon_s.
SIM_SECTIONS = ("traffic", "engine", "cluster", "slo")
SIM_TOP = ("horizon_s",)


def read_scenario_file(path: str) -> tuple[dict, dict, dict]:
    """Read a scenario file into (top-level values, {section: values}, {simulation key: values}) for merging
    with flags. The third holds the simulator's sections (unchecked here: the simulator's dataclasses check
    their fields) and horizon_s."""
    data = read_yaml(Path(path))
    where = Path(path).name
    check_mapping(data, _TOP | set(_SECTIONS) | set(SIM_SECTIONS) | set(SIM_TOP), where)
    top = {k: data[k] for k in _TOP if k in data}
    sections = {k: _section(cls, data[k], f"{where}.{k}") for k, cls in _SECTIONS.items() if k in data}
    sim = {k: data[k] for k in SIM_TOP + SIM_SECTIONS if k in data}
    return top, sections, sim


# Every number a scenario (file or flags) gives, with its stated physical bound: checked before any work.
_SECTION_INTS = {("parallel", "tp"): MAX_PARALLEL, ("parallel", "pp"): MAX_PARALLEL, ("parallel", "ep"): MAX_PARALLEL,
                 ("parallel", "moe_tp"): MAX_PARALLEL, ("parallel", "attention_dp"): MAX_PARALLEL,
                 ("workload", "batch"): MAX_BATCH, ("workload", "prompt"): MAX_TOKENS,
                 ("workload", "output"): MAX_TOKENS, ("workload", "prefill_chunk"): MAX_TOKENS,
                 ("precision", "weight_group_size"): MAX_WIDTH}
_FLAG = {"prefill_chunk": "--prefill-chunk", "shared_prefix": "--shared-prefix", "moe_tp": "--moe-tp",
         "attention_dp": "--dp-attention",
         "weight_group_size": "--weight-group-size"}


def _check_sections(sections: dict) -> None:
    for (section, key), high in _SECTION_INTS.items():
        if key in sections.get(section, {}):
            integer(sections[section][key], f"{section}.{key} ({_FLAG.get(key, '--' + key)})", 1, high)
    if "shared_prefix" in sections.get("workload", {}):
        integer(sections["workload"]["shared_prefix"], "workload.shared_prefix (--shared-prefix)", 0, MAX_TOKENS)
    for key, value in sections.get("precision", {}).items():
        if key == "quantize_experts_only":
            boolean(value, "precision.quantize_experts_only (--quantize-experts-only)")
        elif key == "modules" and not isinstance(value, (tuple, list)):
            mapping(value, "precision.modules", "a mapping of module class to scheme, e.g. {attention: none}")
        elif key == "modules":
            continue
        elif key != "weight_group_size":
            string(value, f"precision.{key}", **({"max_len": 4096, "empty": True} if key == "source" else {}))


def _check_top(kwargs: dict) -> None:
    for key, flag in (("model", "--model"), ("hardware", "--hardware"), ("efficiency", "--efficiency"),
                      ("kernel_engine", "--engine"), ("access", "--access"), ("host_link", "--host-link"),
                      ("calibration", "--calibration")):
        if kwargs.get(key) is not None:
            string(kwargs[key], f"{key} ({flag})", max_len=4096)
    if kwargs.get("gpus") is not None:
        integer(kwargs["gpus"], "gpus (--gpus)", 1, MAX_GPUS, "GPUs")
    if kwargs.get("nodes") is not None:
        integer(kwargs["nodes"], "nodes (--nodes)", 1, MAX_GPUS, "nodes")
    if kwargs.get("context_window") is not None:
        integer(kwargs["context_window"], "context_window (--context-window)", 1, MAX_TOKENS, "tokens")
    if kwargs.get("max_num_seqs") is not None:
        integer(kwargs["max_num_seqs"], "max_num_seqs (--max-num-seqs)", 1, MAX_BATCH, "sequences")
    if kwargs.get("max_num_batched_tokens") is not None:
        integer(kwargs["max_num_batched_tokens"], "max_num_batched_tokens (--max-num-batched-tokens)", 1, MAX_TOKENS,
                "tokens")
    if kwargs.get("memory_utilization") is not None:
        number(kwargs["memory_utilization"], "memory_utilization (--memory-utilization)", 0.0, 1.0,
               "a fraction of HBM", low_open=True)
    if kwargs.get("price_per_hour") is not None:
        number(kwargs["price_per_hour"], "price_per_hour (--price-per-hour)", 0.0, 1e4, "USD per hour")
    if kwargs.get("launch_us") is not None:
        number(kwargs["launch_us"], "launch_us (--launch-us)", 0.0, 1e6, "microseconds")
    if kwargs.get("moe_kernels") is not None:
        check_moe_kernels(kwargs["moe_kernels"])
    for key in ("cuda_graphs", "overlap", "moe_problem_cost"):
        if key in kwargs:
            boolean(kwargs[key], key)
    for key in ("overlap_schedule", "topk_topp_sort"):
        if kwargs.get(key) is not None:
            boolean(kwargs[key], key)
    if kwargs.get("cudagraph_mode") is not None:
        choice(kwargs["cudagraph_mode"], DECODE_GRAPH_MODES, "cudagraph_mode")


def build_scenario(top: dict, sections: dict) -> Scenario:
    """Scenario from merged values (file first, flags over it): each value's type and range checked here."""
    kwargs = dict(top)
    _check_top(kwargs)
    _check_sections(sections)
    if kwargs.get("calibration") is not None:   # a calibration file alone implies --efficiency calibrated
        kwargs["efficiency"] = efficiency_source(kwargs.get("efficiency"), kwargs["calibration"])
    for name, cls in _SECTIONS.items():
        try:
            kwargs[name] = cls(**sections.get(name, {}))
        except TypeError as exc:
            raise WhatifError(f"{name}: {exc}") from None
    techs = kwargs.get("techniques", ())
    if isinstance(techs, str):
        techs = [techs]
    if not isinstance(techs, (list, tuple)):
        raise WhatifError(f"techniques: {shown(techs)} must be a list of names, 'name:key=value' specs or mappings")
    kwargs["techniques"] = tuple(techs)
    if kwargs.get("cuda_graph_sizes") is not None:   # (a tuple: the engine spec is memoized on it)
        kwargs["cuda_graph_sizes"] = expand_sizes(kwargs["cuda_graph_sizes"], "cuda_graph_sizes")
    for key in ("place", "add_tiers"):
        value = kwargs.get(key, ())
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple, dict)):
            raise WhatifError(f"{key}: {shown(value)} must be a list of specs" +
                              (" or a mapping" if key == "place" else ""))
        kwargs[key] = value if isinstance(value, dict) else tuple(value)
    return Scenario(**kwargs)
