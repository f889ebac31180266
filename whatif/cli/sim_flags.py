"""The simulator's flags, shared by `whatif simulate`, `whatif capacity` and `whatif report --simulate`.

Each simulator flag sets one field of one of the simulator's dataclasses (WorkloadSpec, SchedulerConfig,
ClusterConfig, SLO, SimConfig). A flag left out keeps the scenario file's value, and then the default: the
dataclass's, or the engine spec's for the scenario's GPU (SchedulerConfig.for_engine). No default value lives here:
`--help` reads them when it is shown, the engine spec's as that rule with vLLM's figure on an H100. --max-batch is
--max-num-seqs spelled as the scheduler's limit: one knob."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from dataclasses import fields
from functools import cache
from typing import NamedTuple

from ..errors import WhatifError
from ..specs.checks import (MAX_BATCH, MAX_PARALLEL, MAX_REPLICAS, MAX_REQUESTS, MAX_TOKENS, MAX_TURNS,
                            Field, implausible_slo, is_number)
from .progress import add_progress_flag
from .scenario_flags import add_scenario_flags


class SimFlag(NamedTuple):   # (not a dataclass: every command's parser imports this module; a tuple class is cheaper)
    """A command-line flag that sets `field` of the simulator's `section` dataclass."""

    section: str               # traffic, engine, cluster, slo, or run (SimConfig itself)
    field: str
    flag: str
    kwargs: dict               # argparse keywords besides dest and default
    aliases: tuple = ()        # the engines' and their benchmark clients' spellings of the same flag

    @property
    def dest(self) -> str:
        return f"{self.section}_{self.field}"


def _f(section: str, field: str, flag: str, kind: Field | None = None, metavar: str | None = None, help: str = "",
       aliases: tuple = (), **kw) -> SimFlag:
    kwargs = {"help": help, **kw}
    if kind is not None:
        kwargs["type"] = kind.flag_type()
    if metavar is not None:
        kwargs["metavar"] = metavar
    FIELDS[f"{section}_{field}"] = kind if kind is not None else Field("bool")
    return SimFlag(section, field, flag, kwargs, aliases)


GAMMA_SHAPE = "gamma_shape"               # --burstiness (vLLM's shape), made the traffic's CV (burstiness)
FIELDS: dict[str, Field] = {}             # dest -> the Field that checks a flag's or a scenario file's value
_BOOL = argparse.BooleanOptionalAction   # --x / --no-x, so a flag can override a scenario file either way
_TEXT = Field("text")
_SECONDS = Field("seconds", low_open=True)   # a flag's time needs its unit (500ms, 0.5s); a file's bare number is s

TRAFFIC_FLAGS = (
    _f("traffic", "rate", "--rate", Field("float", 0, 1e6, "requests per second", True), "REQ/S",
       "mean arrival rate, requests per second (sessions per second with --turns > 1)",
       aliases=("--request-rate",)),
    _f("traffic", "concurrency", "--concurrency", Field("int", 1, MAX_REQUESTS, "clients"), "N",
       "instead of --rate: a closed loop of N clients, each sending its next request when its last is answered "
       "(vllm bench serve --max-concurrency, genai-perf --concurrency); TTFT counts from the send",
       aliases=("--max-concurrency",)),
    _f("traffic", "arrival", "--arrival", _TEXT, "PROCESS", "arrival process; gamma is bursty (see --burstiness)"),
    _f("traffic", GAMMA_SHAPE, "--burstiness", Field("float", 0, 1e4, "(gamma shape)", True), "SHAPE",
       "as vllm bench serve --burstiness: the shape of gamma inter-arrival times, lower is burstier (1 is "
       "Poisson's, 0.25 twice as variable, 4 steadier); implies --arrival gamma when not 1. A scenario file's "
       "traffic.burstiness is the coefficient of variation instead (CV = 1/sqrt(shape))"),
    _f("traffic", "requests", "--requests", Field("int", 1, MAX_REQUESTS, "requests"), "N",
       "how many requests to simulate", aliases=("--num-prompts",)),
    _f("traffic", "duration_s", "--duration", _SECONDS, "TIME",
       "instead of --requests: every request arriving in the first TIME, with its unit: 90s, 2min"),
    _f("traffic", "lengths", "--lengths", _TEXT, "DIST",
       "prompt/output lengths: fixed (--prompt/--output tokens) or a built-in distribution"),
    # the benchmark clients' spread of fixed lengths: sglang.bench_serving's --random-range-ratio (uniform in [r L, L];
    # InferenceX's client passes 0.8, benchmarks/serving_reference.py CLIENT_RANGE_RATIO); vllm bench serve's flag of
    # that name draws [(1 - r) L, (1 + r) L] since v0.9 (vllm/benchmarks/datasets.py RandomDataset), not this
    _f("traffic", "range_ratio", "--range-ratio", Field("float", 0, 1, "(a share of the length)", True), "RATIO",
       "with fixed lengths: draw each prompt and output length uniform in [RATIO x L, L] (sglang.bench_serving "
       "--random-range-ratio RATIO; InferenceX's client runs 0.8), which keeps a closed loop's clients from "
       "stepping in lockstep; 1: every request exactly --prompt / --output tokens"),
    _f("traffic", "prefix_groups", "--prefix-groups", Field("int", 0, MAX_REQUESTS, "prefixes"), "N",
       "each request opens with one of N shared prefixes (with --prefix-tokens)"),
    _f("traffic", "prefix_tokens", "--prefix-tokens", Field("int", 0, MAX_TOKENS, "tokens"), "T",
       "tokens of each shared prefix, added to the prompt"),
    _f("traffic", "turns", "--turns", Field("int", 1, MAX_TURNS, "turns"), "N",
       "multi-turn sessions of N turns; each turn's prompt carries the history"),
    _f("traffic", "think_s", "--think-time", Field("seconds"), "TIME",
       "mean time between a session's turns (exponential), with its unit: 500ms, 2s"),
    _f("traffic", "trace", "--trace", _TEXT, "FILE",
       "CSV or JSON-lines requests (arrival_s, prompt_tokens, output_tokens, optional prefix_id) instead of "
       "generated ones"),
    _f("traffic", "seed", "--seed", Field("int", 0, 2**63 - 1), "N",
       "seed of the arrivals and lengths: the same seed, the same requests"),
)
ENGINE_FLAGS = (
    _f("engine", "batching", "--batching", _TEXT, "MODE",
       "continuous: iteration-level (Orca, vLLM); static: a batch runs until its last request is done"),
    _f("engine", "priority", "--priority", _TEXT, "PHASE",
       "without chunked prefill: waiting prompts first (prefill, vLLM V0), running decodes first (decode), or "
       "whole prompts beside the decodes within the token budget (mixed, TensorRT-LLM)"),
    _f("engine", "chunked_prefill", "--chunked-prefill", action=_BOOL, aliases=("--enable-chunked-prefill",),
       help="decodes first, prefill chunks fill the rest of each iteration's token budget (Sarathi-Serve)"),
    _f("engine", "token_budget", "--token-budget", Field("int", 1, MAX_TOKENS, "tokens"), "TOKENS",
       "most tokens per iteration (decodes + prefill)"),
    _f("engine", "block_size", "--block-size", Field("int", 1, 1 << 16, "tokens"), "TOKENS",
       "tokens per paged KV block"),
    _f("engine", "watermark", "--watermark", Field("float", 0, 0.99, "a fraction of the KV blocks"), "FRACTION",
       "share of KV blocks kept free when admitting"),
    _f("engine", "prefix_caching", "--prefix-caching", action=_BOOL, aliases=("--enable-prefix-caching",),
       help="share the KV blocks of common prompt prefixes between requests (vLLM --enable-prefix-caching, "
            "SGLang's radix cache)"),
    _f("engine", "preemption", "--preemption", _TEXT, "MODE",
       "a preempted request's KV is recomputed later, or swapped to host memory and back"),
    _f("engine", "capacity", "--capacity", _TEXT, "POLICY",
       "on-demand: KV blocks as tokens need them, preempting when out (vLLM); reserve: admit a request only "
       "with blocks for its whole output set aside, never preempting (TensorRT-LLM's GUARANTEED_NO_EVICT); ratio: "
       "on demand, a request admitted while its prompt and output fit beside the running ones' remaining "
       "outputs x SGLang's new_token_ratio (SGLang)"),
    _f("engine", "swap_space_gb", "--swap-space", Field("float", 0, 1e6, "GiB"), "GIB",
       "host memory per GPU for swapped KV, GiB"),
    _f("engine", "scheduler_steps", "--scheduler-steps", Field("int", 1, 1024, "decode steps"), "N",
       "multi-step scheduling (vLLM 0.6 --num-scheduler-steps): each decode iteration runs N decode steps for "
       "one scheduling and streams their tokens together; prefill-priority without chunked prefill"),
    _f("engine", "prefill_recompile_s", "--prefill-recompile-s", Field("float", 0, 10, "seconds"), "S",
       "host seconds a prefill step pays the first time the server runs its token count (a kernel built per "
       "count; search takes the same flag), default 0: off"),
)
CLUSTER_FLAGS = (
    _f("cluster", "replicas", "--replicas", Field("int", 1, MAX_REPLICAS, "replicas"), "N",
       "replicas of the scenario (the decode pool, disaggregated)"),
    _f("cluster", "router", "--router", _TEXT, "POLICY", "which replica each request goes to"),
    _f("cluster", "prefill_replicas", "--prefill-replicas", Field("int", 0, MAX_REPLICAS, "replicas"), "N",
       "> 0: disaggregated (DistServe): N prefill replicas send each request's KV to a decode replica"),
    _f("cluster", "prefill_tp", "--prefill-tp", Field("int", 1, MAX_PARALLEL), "N",
       "tensor parallelism of a prefill replica (default --tp)"),
    _f("cluster", "prefill_pp", "--prefill-pp", Field("int", 1, MAX_PARALLEL), "N",
       "pipeline parallelism of a prefill replica (default --pp)"),
    _f("cluster", "prefill_ep", "--prefill-ep", Field("int", 1, MAX_PARALLEL), "N",
       "expert parallelism of a prefill replica (default: --ep, or the prefill TP group where --ep spans --tp)"),
    _f("cluster", "prefill_dp_attention", "--prefill-dp-attention", action=_BOOL,
       help="attention data parallel in a prefill replica (default: --dp-attention when the pools' TP sizes match)"),
    _f("cluster", "prefill_attention_dp", "--prefill-attention-dp", Field("int", 1, MAX_PARALLEL, "ranks"), "N",
       "attention-DP ranks of a prefill replica, each over prefill TP / N GPUs (1: off; default: one per GPU "
       "under --prefill-dp-attention)"),
    _f("cluster", "prefill_max_batch", "--prefill-max-batch", Field("int", 1, MAX_BATCH, "sequences"), "N",
       "most running sequences per prefill replica (default --max-batch; aiconfigurator launches prefill workers "
       "at max_batch_size 1)"),
    _f("cluster", "prefill_token_budget", "--prefill-token-budget", Field("int", 1, MAX_TOKENS, "tokens"), "TOKENS",
       "most tokens per iteration of a prefill replica (default --token-budget)"),
    _f("cluster", "prefill_moe_kernels", "--prefill-moe-kernels", _TEXT, "KERNELS",
       "fused-MoE kernels of the prefill pool where its workers pick other ones than the decode pool's "
       "(TensorRT-LLM's ctx worker moe_config.backend; default --moe-kernels)"),
    _f("cluster", "prefill_moe_a2a", "--prefill-moe-a2a", _TEXT, "A2A",
       "what carries the prefill pool's attention-DP MoE dispatch / combine where its workers differ from the "
       "decode pool's: nccl, deepep or gather (an SGLang prefill worker without --moe-a2a-backend gathers; "
       "default --moe-a2a)"),
    _f("cluster", "prefill_hardware", "--prefill-hardware", _TEXT, "SYSTEM",
       "system or GPU profile of the prefill pool (default --hardware): heterogeneous prefill and decode"),
    _f("cluster", "kv_link", "--kv-link", _TEXT, "LINK",
       "link profile the KV crosses between the pools (default: the system's GPU interconnect when both pools "
       "fit one node or rack, else the nodes' NICs)"),
)
SLO_FLAGS = (
    _f("slo", "ttft_s", "--slo-ttft", _SECONDS, "TIME",
       "time-to-first-token objective with its unit: 500ms, 0.5s (a bare number is refused: vLLM's --goodput "
       "reads ms, a scenario file's slo.ttft_s seconds)"),
    _f("slo", "tpot_s", "--slo-tpot", _SECONDS, "TIME",
       "time-per-output-token objective with its unit: 50ms, 0.05s (a bare number is refused)"),
    _f("slo", "attainment", "--attainment", Field("float", 0, 1, "a fraction of requests", True), "FRACTION",
       "share of requests that must meet every objective"),
)
RUN_FLAGS = (
    _f("run", "horizon_s", "--horizon", _SECONDS, "TIME",
       "stop the simulated clock here and report what is unfinished, with its unit: 90s, 2min (default: when "
       "every request is done)"),
)
GROUPS = (("traffic", "requests that arrive (a scenario file's traffic: section)", TRAFFIC_FLAGS),
          ("engine", "each replica's scheduler and KV cache (engine: section)", ENGINE_FLAGS),
          ("cluster", "replicas, routing, disaggregation (cluster: section)", CLUSTER_FLAGS),
          ("SLO", "latency objectives: attainment and goodput (slo: section)", SLO_FLAGS))
ALL_FLAGS = TRAFFIC_FLAGS + ENGINE_FLAGS + CLUSTER_FLAGS + SLO_FLAGS + RUN_FLAGS
# engine.max_batch is the engine's max_num_seqs: in a simulation --max-batch is that flag's other spelling
MAX_BATCH_ALIAS = "--max-batch"
FIELDS["engine_max_batch"] = Field("int", 1, MAX_BATCH, "sequences")
# a scenario file's traffic.burstiness: the coefficient of variation of the gaps (1/sqrt of --burstiness's shape)
FIELDS["traffic_burstiness"] = Field("float", 0, 100, "(coefficient of variation)", True)

# Estimate flags that describe one fixed batch: a simulation forms its own batches.
NOT_SIMULATED = (
    ("batch", "--batch", "the scheduler forms the batches; use --max-batch (most running sequences per replica)"),
    ("prefill_chunk", "--prefill-chunk", "use --token-budget (tokens per iteration) with --chunked-prefill"),
    ("shared_prefix", "--shared-prefix", "use --prefix-groups and --prefix-tokens"),
)

SIM_EPILOG = ("A --scenario file may also hold traffic:, engine:, cluster: and slo: sections and a top-level "
              "horizon_s, with the fields of whatif.simulator's WorkloadSpec, SchedulerConfig, ClusterConfig and SLO "
              "(e.g. traffic: {rate: 5, lengths: sharegpt}); its time fields (*_s) are seconds, and its "
              "traffic.burstiness the coefficient of variation (1/sqrt of --burstiness); flags override them. Its "
              "workload: section (one "
              "estimate batch) is not used: --prompt/--output (or traffic: prompt/output) set the fixed lengths.")


# ---------------------------------------------------------------- help text

def _section_classes() -> dict:
    from ..simulator.config import SimConfig, section_classes
    return {**section_classes(), "run": SimConfig}


def _spec_default(h100, base) -> str:
    """The rule for a default the engine spec fills (SchedulerConfig.for_engine): vLLM's on an H100 as the example,
    and its base default (a bare SchedulerConfig's) where the GPU changes it."""
    if isinstance(h100, bool):
        return f"e.g. {'on' if h100 else 'off'} for an H100"
    return f"e.g. {h100} on an H100" + (f"; vLLM's default {base} on smaller GPUs and the A100" if h100 != base else "")


@cache
def _help_notes() -> dict[str, str]:
    """dest -> '(one of a, b; default a)' from the simulator's constants and dataclass defaults; for the engine
    spec's fields, which depend on the GPU, the rule and an example."""
    from ..scenario import Scenario
    from ..simulator import config, workload
    choices = {"traffic_arrival": workload.ARRIVALS, "traffic_lengths": workload.LENGTHS,
               "engine_batching": config.BATCHING, "engine_priority": config.PRIORITIES,
               "engine_preemption": config.PREEMPTION, "cluster_router": config.ROUTERS}
    defaults = {f"{section}_{f.name}": f.default for section, cls in _section_classes().items() for f in fields(cls)}
    on_h100 = config.SchedulerConfig.for_engine(Scenario(hardware="h100-sxm").engine_spec())
    notes = {}
    for flag in ALL_FLAGS:
        parts = [f"one of {', '.join(choices[flag.dest])}"] if flag.dest in choices else []
        default = defaults.get(flag.dest)
        if flag.section == "engine" and flag.field in config.SPEC_DEFAULTS:
            parts.append("default: the engine spec's for the GPU, " + _spec_default(getattr(on_h100, flag.field),
                                                                                     default))
        elif isinstance(default, bool):
            parts.append(f"default {'on' if default else 'off'}")
        elif default is not None:
            parts.append(f"default {default:g}" if isinstance(default, float) else f"default {default}")
        notes[flag.dest] = "; ".join(parts)
    notes[f"traffic_{GAMMA_SHAPE}"] = "default 1"
    notes["traffic_requests"] = (f"default {workload.DEFAULT_REQUESTS}; with --trace, all of it unless --requests "
                                 "or --duration")
    # the scenario's engine limits (their help states the rule): the example, as the scheduler's flags
    notes["max_num_seqs"] = _spec_default(on_h100.max_batch, defaults["engine_max_batch"])
    notes["max_num_batched_tokens"] = _spec_default(on_h100.token_budget, defaults["engine_token_budget"])
    return notes


class SimulatorHelp(argparse.HelpFormatter):
    """Adds each simulator flag's valid values and default, read when help is shown, so that building the
    parser for another command imports nothing from the simulator (whose workload module needs numpy)."""

    override: dict[str, str] = {}    # dest -> a note of this command's own

    def _get_help_string(self, action):
        text = action.help or ""
        note = self.override.get(action.dest)
        if note is None:
            note = _help_notes().get(action.dest)
        return f"{text} ({note.replace('%', '%%')})" if note else text


# ---------------------------------------------------------------- parser

def add_simulator_flags(p, searched_rate: bool, refuses_batch: bool = True):
    """The scenario's flags and the simulator's; returns the 'run and output' group for more. `refuses_batch`:
    the command refuses the estimate's one-batch flags (reject_estimate_flags), so --help leaves them out."""
    add_scenario_flags(p, MAX_BATCH_ALIAS, tuple(flag for _, flag, _ in NOT_SIMULATED) if refuses_batch else ())
    for title, description, flags in GROUPS:
        group = p.add_argument_group(title, description)
        for flag in flags:
            if searched_rate and flag.field == "rate":
                group.add_argument(flag.flag, *flag.aliases, dest=flag.dest, default=None, type=str,
                                   help=argparse.SUPPRESS)
            else:
                group.add_argument(flag.flag, *flag.aliases, dest=flag.dest, default=None, **flag.kwargs)
    out = p.add_argument_group("run and output")
    for flag in RUN_FLAGS:
        out.add_argument(flag.flag, dest=flag.dest, default=None, **flag.kwargs)
    add_progress_flag(out)
    return out


# ---------------------------------------------------------------- building the configuration

def reject_estimate_flags(args) -> None:
    """A flag that sets one fixed batch is an error in a simulation, naming the flag to use instead."""
    for dest, flag, instead in NOT_SIMULATED:
        if getattr(args, dest) is not None:
            raise WhatifError(f"{flag} does not apply to a simulation: {instead}")


def _file_values(path: str | None) -> dict[str, dict]:
    """{section: field values} of a scenario file's simulator sections (empty sections without a file)."""
    from ..scenario import SIM_TOP, read_scenario_file
    file_values = {}
    if path:   # (the simulator's dataclasses imported only for a file: an estimate without one needs none)
        from ..simulator.config import file_sections
        file_values = file_sections(read_scenario_file(path)[2], Path(path).name)
    values = {section: dict(file_values.get(section, {})) for section in ("traffic", "engine", "cluster", "slo")}
    values["run"] = {key: file_values[key] for key in SIM_TOP if key in file_values}
    return values


def check_file_sections(scenario, path: str | None) -> None:
    """A scenario file's simulator sections checked as a simulation checks them, for the commands that do not
    simulate (estimate, compare, report): a wrong value is an error there too, not silently ignored."""
    values = _file_values(path)
    if any(values.values()):
        from ..simulator.config import sim_config
        sim_config(scenario, check_simulation_values(values))


def simulation_values(args) -> dict[str, dict]:
    """{section: field values}: the scenario file's simulator sections, then the flags given over them."""
    values = _file_values(args.scenario)
    for key in ("prompt", "output"):             # the scenario's flags, for a simulation the traffic's lengths
        if getattr(args, key) is not None:
            values["traffic"][key] = getattr(args, key)
    if args.max_num_seqs is not None:            # --max-num-seqs / --max-batch: the scheduler's limit too
        values["engine"]["max_batch"] = args.max_num_seqs
    for flag in ALL_FLAGS:
        value = getattr(args, flag.dest, None)
        if value is not None:
            values[flag.section][flag.field] = value
    shape = values["traffic"].pop(GAMMA_SHAPE, None)
    if shape is not None:                        # vLLM's gamma shape as the workload's coefficient of variation
        from ..simulator.workload import cv_of_gamma_shape
        values["traffic"]["burstiness"] = cv_of_gamma_shape(float(shape)) if is_number(shape) else shape
        if values["traffic"].get("arrival") is None and shape != 1:
            values["traffic"]["arrival"] = "gamma"
    return check_simulation_values(values)


_LENGTH = Field("int", 1, MAX_TOKENS, "tokens")


def warn(note: str | None) -> None:
    if note:
        print(f"whatif: warning: {note}", file=sys.stderr)


def check_simulation_values(values: dict[str, dict]) -> dict[str, dict]:
    """Every value (a flag's or the scenario file's) through its Field, times with units made seconds, before
    any work; and the requests a --rate x --duration run generates bounded like --requests."""
    for section, fields_ in values.items():
        for key, value in list(fields_.items()):
            where = f"{section if section != 'run' else 'scenario'}.{key}"
            field = FIELDS.get(f"{section}_{key}") or (_LENGTH if (section, key) in (("traffic", "prompt"),
                                                                                     ("traffic", "output")) else None)
            if field is not None and value is not None and not (section == "traffic" and key == "rate"
                                                                 and isinstance(value, str)):
                fields_[key] = field.check(value, where)
    for name, key in (("TTFT", "ttft_s"), ("TPOT", "tpot_s")):
        warn(implausible_slo(name, values["slo"].get(key), f"--slo-{name.lower()} (slo.{key})"))
    traffic = values["traffic"]
    if traffic.get("concurrency") and traffic.get("rate") is not None:
        raise WhatifError("give --rate (an open stream of arrivals) or --concurrency (a closed loop of clients), "
                          "not both")
    rate, duration = traffic.get("rate"), traffic.get("duration_s")
    if isinstance(rate, float) and isinstance(duration, float) and rate * duration > MAX_REQUESTS:
        raise WhatifError(f"--rate {rate:g} x --duration {duration:g} s is about {rate * duration:,.0f} requests; "
                          f"valid: at most {MAX_REQUESTS:,} (shorten --duration)")
    return values
