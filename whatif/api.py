"""The Python API: `whatif.estimate`, `whatif.simulate`, `whatif.capacity` and `whatif.search`.

Each takes what the matching command takes, as keyword arguments named after its flags (`weight_dtype` for
`--weight-dtype`), builds the same Scenario the command builds (so the same checks and the same numbers), and
returns a typed result with `to_dict()` (what `--json` prints), `to_frame()` (a pandas DataFrame) and `text()`
(what the command prints). `model` and `hardware` are profile names or paths; `estimate` also takes spec objects
(a ModelSpec from whatif.specs.models, a System or GPU from whatif.specs.hardware). `scenario=` reads a scenario
YAML first; keyword arguments given override it, as flags do."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace

from .errors import WhatifError, shown


def _scenario(model, hardware, scenario: str | None, dtype: str | None, weight_dtype: str | None,
              kv_dtype: str | None, techniques, values: dict):
    """The Scenario the CLI would build from a scenario file and these flags (None: not given)."""
    from .inputs import PARALLEL, WORKLOAD, scenario_from_inputs
    from .scenario import Scenario
    values = dict(values)
    quantization = values.pop("quantization", None)   # a named scheme (vllm serve --quantization)
    expert_quantization = values.pop("expert_quantization", None)   # the routed experts' own scheme
    experts_only = values.pop("quantize_experts_only", None)        # quantization on the routed experts alone
    valid = {f.name for f in fields(Scenario)} - {"parallel", "precision", "workload"}
    unknown = sorted(k for k in values if k not in valid and k not in PARALLEL + WORKLOAD)
    if unknown:
        raise WhatifError(f"{unknown[0]}: not an argument; valid: " + ", ".join(sorted(valid | set(PARALLEL) |
                                                                                    set(WORKLOAD))))
    techs = ([techniques] if isinstance(techniques, str) else list(techniques)) if techniques else None
    given = {"model": model, "hardware": hardware, **values, "techniques": techs}
    return scenario_from_inputs(scenario, given, dtype, weight_dtype, kv_dtype, quantization=quantization,
                                expert_quantization=expert_quantization, quantize_experts_only=experts_only)


# ---------------------------------------------------------------- estimate

@dataclass(frozen=True)
class EstimateResult:
    """One batch's estimate: TTFT, TPOT, throughput, memory plan. `estimate` is roofline's Estimate."""

    estimate: object

    def __getattr__(self, name):   # ttft_s, tpot_s, e2e_s, throughput_tok_s, max_batch, memory, ...
        if name.startswith("__") or name == "estimate":   # copy/pickle probe before the field is set
            raise AttributeError(name)
        return getattr(self.estimate, name)

    @property
    def fits(self) -> bool:
        """The batch's weights, KV cache and activations fit the GPUs' memory (the CLI's error otherwise)."""
        return self.estimate.memory.fits

    def summary(self) -> dict:
        """The headline figures, flat (seconds, tokens/s, bytes per GPU)."""
        from .reports.output import decoded
        e, w = self.estimate, self.estimate.workload
        return {"model": e.model.name, "hardware": e.system.name, "gpus": e.parallel.gpus, "tp": e.parallel.tp,
                "pp": e.parallel.pp, "ep": e.parallel.ep, "batch": w.batch, "prompt": w.prompt,
                "output": w.output, "weight_dtype": e.precision.weight, "kv_dtype": e.precision.kv,
                "techniques": "+".join(t.name for t in e.techniques.items), "ttft_s": e.ttft_s,
                "tpot_s": decoded(e, e.tpot_s), "e2e_s": e.e2e_s, "throughput_tok_s": e.throughput_tok_s,
                "decode_throughput_tok_s": decoded(e, e.decode_throughput_tok_s), "max_batch": e.max_batch,
                "max_batch_throughput_tok_s": e.max_batch_throughput_tok_s, "max_context_tokens": e.max_context,
                "memory_per_gpu_bytes": e.memory.total_bytes, "fits": self.fits,
                "cost_per_mtok_usd": e.cost_per_mtok}

    def to_dict(self) -> dict:
        """What `whatif estimate --json` prints."""
        from .reports.output import estimate_dict
        return estimate_dict(self.estimate)

    def to_frame(self):
        """The summary as a one-row pandas DataFrame."""
        import pandas as pd
        return pd.DataFrame([self.summary()])

    def text(self, show_ops: bool = False) -> str:
        from .reports.output import estimate_text
        return estimate_text(self.estimate, show_ops=show_ops)


def _spec_resolved(sc, model, hardware):
    """`sc` resolved with a ModelSpec and/or System/GPU object in place of loading names (and without the
    launch, tier and all-reduce settings a named profile's resolution adds)."""
    from .roofline.efficiency import load_efficiency
    from .scenario import ResolvedScenario
    from .specs.hardware import GPU, System, load_system
    from .specs.models import load_model
    par = sc.parallel
    spec = load_model(model) if isinstance(model, str) else model
    if isinstance(hardware, System):
        if par.gpus > hardware.gpu_count:
            raise WhatifError(f"--tp x --pp = {par.gpus} GPUs, more than the {hardware.gpu_count} of "
                              f"'{hardware.name}'")
        system = replace(hardware, gpu_count=par.gpus)
    elif isinstance(hardware, GPU):
        system = System(name=hardware.name, description=hardware.description, gpu=hardware,
                        gpu_count=par.gpus, gpu_link=hardware.interconnect or hardware.host_link)
    else:
        system = load_system(hardware, par.gpus if par.gpus > 1 else None)
    eff = load_efficiency(sc.efficiency, system.gpu, sc.calibration, sc.kernel_engine)
    return ResolvedScenario(sc, spec, system, par, eff, sc.engine_spec())


def estimate(model=None, hardware=None, *, scenario: str | None = None, tp: int | None = None,
             pp: int | None = None, ep: int | None = None, gpus: int | None = None, batch: int | None = None,
             prompt: int | None = None, output: int | None = None, prefill_chunk: int | None = None,
             dtype: str | None = None, weight_dtype: str | None = None, kv_dtype: str | None = None,
             techniques: str | Sequence = (), efficiency: str | None = None, with_max_batch: bool = True,
             module_fits: bool = True, **options) -> EstimateResult:
    """TTFT, TPOT, throughput and memory of `batch` requests of `prompt` + `output` tokens, as `whatif estimate`.

    `options` are the scenario's other fields (place, price_per_hour, memory_utilization, context_window, ...).
    module_fits False prices every op as its own kernel, no whole-module fit (roofline/module_fits.py): the
    comparison of benchmarks/accuracy_modern.py --vs-kernels.
    A batch that does not fit is returned with `fits` False (the CLI's error)."""
    names = [x if isinstance(x, str) or x is None else None for x in (model, hardware)]
    values = dict(tp=tp, pp=pp, ep=ep, gpus=gpus, batch=batch, prompt=prompt, output=output,
                  prefill_chunk=prefill_chunk, efficiency=efficiency, **options)
    sc = _scenario(names[0], names[1], scenario, dtype, weight_dtype, kv_dtype, techniques, values)
    resolved = sc.resolved() if names == [model, hardware] else \
        _spec_resolved(sc, model if model is not None else sc.model, hardware if hardware is not None else sc.hardware)
    if not module_fits:
        resolved = replace(resolved, efficiency=replace(resolved.efficiency, module_fits=False))
    return EstimateResult(resolved.estimate(with_max_batch))


# ---------------------------------------------------------------- simulate and capacity

def _section(cls, given, extra: dict) -> dict:
    """A simulator section's fields from an instance of `cls` or a dict of its fields, with `extra` (None: not
    given) over them."""
    if given is not None and not isinstance(given, (cls, dict)):
        name = {"SchedulerConfig": "engine", "ClusterConfig": "cluster", "WorkloadSpec": "traffic"}.get(
            cls.__name__, cls.__name__)
        raise WhatifError(f"{name}: {shown(given)} must be a {cls.__name__} or a dict of its fields "
                          f"({', '.join(f.name for f in fields(cls))})")
    base = {} if given is None else {f.name: getattr(given, f.name) for f in fields(cls)} \
        if isinstance(given, cls) else dict(given)
    base.update({k: v for k, v in extra.items() if v is not None})
    return base


def _sim_config(model, hardware, scenario, dtypes, techniques, values, traffic, engine, cluster, slo, horizon_s):
    """The SimConfig `whatif simulate` builds (simulator.config.sim_config: the engine spec's defaults for the
    scenario's GPU, as the command's)."""
    from .simulator.config import SLO, ClusterConfig, SchedulerConfig, sim_config
    from .simulator.workload import WorkloadSpec
    sim_keys = {"rate", "requests", "duration_s", "lengths", "arrival", "seed", "max_batch", "token_budget",
                "replicas", "prefill_replicas", "slo_ttft", "slo_tpot", "attainment"}
    flat = {k: values.pop(k, None) for k in sim_keys}
    sc = _scenario(model, hardware, scenario, *dtypes, techniques, values)
    sections = {"traffic": _section(WorkloadSpec, traffic, {
                    "rate": flat["rate"], "requests": flat["requests"], "duration_s": flat["duration_s"],
                    "lengths": flat["lengths"], "arrival": flat["arrival"], "seed": flat["seed"],
                    "prompt": values.get("prompt"), "output": values.get("output")}),
                "engine": _section(SchedulerConfig, engine, {"max_batch": flat["max_batch"],
                                                          "token_budget": flat["token_budget"]}),
                "cluster": _section(ClusterConfig, cluster, {"replicas": flat["replicas"],
                                                             "prefill_replicas": flat["prefill_replicas"]}),
                "slo": _section(SLO, slo, {"ttft_s": flat["slo_ttft"], "tpot_s": flat["slo_tpot"],
                                           "attainment": flat["attainment"]}),
                "run": {} if horizon_s is None else {"horizon_s": horizon_s}}
    try:
        return sim_config(sc, sections)
    except TypeError as exc:
        raise WhatifError(f"{exc}") from None


@dataclass(frozen=True)
class SimulationResult:
    """A serving simulation's records and metrics. `result` is the simulator's SimulationResult."""

    result: object

    def __getattr__(self, name):   # attainment(), goodput_rps(), latency(), records, ...
        if name.startswith("__") or name == "result":
            raise AttributeError(name)
        return getattr(self.result, name)

    def to_dict(self) -> dict:
        """What `whatif simulate --json` prints."""
        return self.result.summary()

    def to_frame(self):
        """One row per request (arrival, TTFT, TPOT, end-to-end, ...)."""
        return self.result.records_frame()

    def text(self) -> str:
        return self.result.text()


def simulate(model=None, hardware=None, *, scenario: str | None = None, dtype: str | None = None,
             weight_dtype: str | None = None, kv_dtype: str | None = None, techniques: str | Sequence = (),
             traffic=None, engine=None, cluster=None, slo=None, horizon_s: float | None = None,
             progress: Callable[[int, int], None] | None = None, **values) -> SimulationResult:
    """Serve a stream of requests in the simulator, as `whatif simulate`. `values` are scenario fields (tp, pp,
    prompt, output, ...) and the common simulator settings: rate, requests, duration_s, lengths, arrival, seed,
    max_batch, token_budget, replicas, prefill_replicas, slo_ttft, slo_tpot, attainment. `traffic`, `engine`,
    `cluster` and `slo` give the rest (a WorkloadSpec/SchedulerConfig/ClusterConfig/SLO, or a dict of its fields)."""
    from .simulator.cluster import simulate as run
    cfg = _sim_config(model, hardware, scenario, (dtype, weight_dtype, kv_dtype), techniques, dict(values),
                      traffic, engine, cluster, slo, horizon_s)
    return SimulationResult(run(cfg, progress))


@dataclass(frozen=True)
class CapacityResult:
    """The highest request rate meeting the SLO, and every probe. `result` is simulator.capacity's."""

    result: object

    def __getattr__(self, name):   # rate_rps, probes, slo, note
        if name.startswith("__") or name == "result":
            raise AttributeError(name)
        return getattr(self.result, name)

    def to_dict(self) -> dict:
        return self.result.to_dict()

    def to_frame(self):
        """One row per simulation the search ran."""
        import pandas as pd
        return pd.DataFrame(self.result.to_dict()["probes"])

    def text(self) -> str:
        return self.result.text()


def capacity(model=None, hardware=None, *, scenario: str | None = None, dtype: str | None = None,
             weight_dtype: str | None = None, kv_dtype: str | None = None, techniques: str | Sequence = (),
             traffic=None, engine=None, cluster=None, slo=None, lo: float = 0.0, hi: float | None = None,
             rel_tol: float = 0.02, **values) -> CapacityResult:
    """The highest arrival rate (req/s) whose simulation meets the SLO (slo_ttft and/or slo_tpot, seconds), as
    `whatif capacity` (2,000 requests per run unless `requests` or `duration_s` says otherwise)."""
    from .simulator.capacity import max_rate
    from .simulator.cluster import simulate as run
    values = dict(values)
    if values.get("requests") is None and values.get("duration_s") is None:
        values["requests"] = 2000        # as `whatif capacity` (cli/simulate.py CAPACITY_REQUESTS)
    cfg = _sim_config(model, hardware, scenario, (dtype, weight_dtype, kv_dtype), techniques, values,
                      traffic, engine, cluster, slo, None)
    if not cfg.slo.given:
        raise WhatifError("capacity needs an SLO: give slo_ttft and/or slo_tpot (seconds)")
    return CapacityResult(max_rate(lambda rate: run(replace(cfg, workload=replace(cfg.workload, rate=rate))),
                                   cfg.slo, lo=lo, hi=hi, rel_tol=rel_tol))


# ---------------------------------------------------------------- search

def _technique_sets(techniques) -> tuple[tuple, ...]:
    """The baseline and each set given: 'kivi', 'int4+kivi', or a list of specs, one set each."""
    from .roofline.techniques.registry import technique_set
    sets = [()]
    if techniques is not None and not isinstance(techniques, (str, list, tuple)):
        raise WhatifError(f"--technique: {techniques!r:.80} must be a technique set ('int4+kivi') or a list of them")
    for t in [techniques] if isinstance(techniques, str) else techniques or ():
        tup = tuple(s for s in t.split("+") if s) if isinstance(t, str) else tuple(t)
        if tup not in sets and tup != ("none",):
            technique_set(tup)      # a misspelt name is an error now, not a rejection of every engine
            sets.append(tup)
    return tuple(sets)


def _listed(values):
    """A list or tuple as a tuple (None stays None); anything else is passed on for SearchSpace to refuse by name."""
    return tuple(values) if isinstance(values, (list, tuple, range)) else values


def search(model: str, hardware: str | Sequence[str], *, gpus: int, prompt: int = 4000, output: int = 1000,
           ttft: float | None = None, tpot: float | None = None, e2e: float | None = None,
           tp: Sequence[int] | None = None, pp: Sequence[int] | None = None, ep: Sequence[int] | None = None,
           dp_attention: Sequence[int] | None = None, nodes: int | None = None, batches: Sequence[int] | None = None,
           weight_dtypes: Sequence[str] | None = None, kv_dtypes: Sequence[str] | None = None,
           quantizations: Sequence[str] = (), techniques: Sequence = (),
           modes: Sequence[str] = ("aggregated", "disaggregated"),
           prefill_chunks: Sequence[int] | None = None, prefill_chunk: int | None = None,
           efficiency: str = "default", kv_link: str | None = None,
           objective: str = "tok_s_per_gpu", backend: str = "process", address: str | None = None,
           engine: str = "vllm", simulate_top: int = 0, sim_requests: int | None = None,
           progress: Callable[[int, int], None] | None = None, jobs: int | None = None, prune: bool = False,
           prefill_recompile_s: float = 0.0):
    """Search the deployments of `model` on at most `gpus` GPUs of `hardware` (one name or several) for a
    workload of `prompt` / `output` tokens: the Pareto frontier of tokens/s per GPU against tokens/s per user and
    the best configuration meeting `ttft` / `tpot` / `e2e` (seconds). `prefill_chunks` are the prefill chunk sizes
    tried (tokens per pass, default 8192; `prefill_chunk` gives one alone). A system profile caps the budget at
    the GPUs it holds. `dp_attention`: MoE attention-DP rank counts tried (1: off; default: space.attention_ranks'
    rule). `simulate_top` K > 0 re-checks in the simulator the K best of each mode and the frontier
    rows shown, and the best is then the highest simulated goodput (config_search/recheck.py). `jobs`: worker
    processes pricing the replica setups with backend "process" (default: the CPUs this process may use; a
    small space stays in this process), and running the re-check's capacity searches. `prune`: skip pricing the
    batches that can be neither on the frontier nor among the best (config_search/prune.py: the same frontier
    and best, fewer rows). `prefill_recompile_s`: host seconds a prefill step pays the first time a server runs
    its token count (the simulator's engine setting): the re-check runs it, the steady state pays none
    (config_search/recompile.py). `kv_dtypes`: KV cache formats tried; default the one `estimate` prices, the
    checkpoint's declared KV dtype where `engine` reads it (checkpoint_scheme.default_kv_dtypes), else bf16. Returns a
    whatif.config_search.result.SearchResult (`best`, `frontier`, `configs`, `to_dict()`, `to_frame()`, `text()`)."""
    from .config_search.run import run_search
    from .config_search.checkpoint_scheme import default_kv_dtypes, default_quantizations
    from .config_search.space import DEFAULT_BATCHES, DEFAULT_CHUNKS, DEFAULT_DTYPES, SearchSpace, SLOTargets
    quantizations = default_quantizations(model, weight_dtypes, quantizations) or ()   # a quantized checkpoint's own
    weight_dtypes = DEFAULT_DTYPES if weight_dtypes is None else weight_dtypes
    kv_dtypes = default_kv_dtypes(model, engine, kv_dtypes)   # estimate's rule: the checkpoint's, as the engine reads
    if prefill_chunk is not None:
        if prefill_chunks is not None:
            raise WhatifError("--prefill-chunk: give it or --prefill-chunks (a list), not both")
        prefill_chunks = (prefill_chunk,)
    space = SearchSpace(model=model, hardware=(hardware,) if isinstance(hardware, str) else _listed(hardware),
                        gpu_budget=gpus, prompt=prompt, output=output, slo=SLOTargets(ttft, tpot, e2e),
                        tps=_listed(tp), pps=_listed(pp), eps=_listed(ep), attention_dps=_listed(dp_attention),
                        nodes=nodes,
                        batches=DEFAULT_BATCHES if batches is None else _listed(batches),
                        weight_dtypes=_listed(weight_dtypes), kv_dtypes=_listed(kv_dtypes),
                        quantizations=_listed(quantizations), technique_sets=_technique_sets(techniques),
                        modes=_listed(modes),
                        prefill_chunks=DEFAULT_CHUNKS if prefill_chunks is None else _listed(prefill_chunks),
                        efficiency=efficiency, kv_link=kv_link,
                        objective=objective, engine=engine, prefill_recompile_s=prefill_recompile_s)
    return run_search(space, backend, address, progress, simulate_top, sim_requests, jobs, prune)
