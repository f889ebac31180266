"""`whatif simulate` and `whatif capacity`: the serving simulator from the command line.

Each simulator flag sets one field of one of the simulator's dataclasses (WorkloadSpec, EngineConfig,
ClusterConfig, SLO, SimConfig). A flag left out keeps the scenario file's value, and then the dataclass's
default: no default value lives here, and `--help` reads them from the dataclasses when it is shown."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from functools import cache

from .errors import WhatifError

# Capacity's default traffic size. A short run overstates capacity: past it, a queue needs time to
# build (llama-3-8b on h100-sxm, ShareGPT-like, TTFT 200 ms / TPOT 20 ms at 90%: 72 req/s with 500
# requests, 40 req/s with 3000). 2000 keeps a search to about ten seconds (assumed trade-off).
CAPACITY_REQUESTS = 2000
PROGRESS_DELAY_S = 2.0     # runs shorter than this print no bar (assumed: "a few seconds", issue 6)
BAR_CELLS = 30             # characters of the bar itself


@dataclass(frozen=True)
class SimFlag:
    """A command-line flag that sets `field` of the simulator's `section` dataclass."""

    section: str               # traffic, engine, cluster, slo, or run (SimConfig itself)
    field: str
    flag: str
    kwargs: dict               # argparse keywords besides dest and default

    @property
    def dest(self) -> str:
        return f"{self.section}_{self.field}"


def _f(section: str, field: str, flag: str, kind=None, metavar: str | None = None, help: str = "", **kw) -> SimFlag:
    kwargs = {"help": help, **kw}
    if kind is not None:
        kwargs["type"] = kind
    if metavar is not None:
        kwargs["metavar"] = metavar
    return SimFlag(section, field, flag, kwargs)


_BOOL = argparse.BooleanOptionalAction   # --x / --no-x, so a flag can override a scenario file either way

TRAFFIC_FLAGS = (
    _f("traffic", "rate", "--rate", float, "REQ/S",
       "mean arrival rate, requests per second (sessions per second with --turns > 1)"),
    _f("traffic", "arrival", "--arrival", None, "PROCESS", "arrival process; gamma is bursty (see --burstiness)"),
    _f("traffic", "burstiness", "--burstiness", float, "CV",
       "coefficient of variation of gamma inter-arrival times (1 is Poisson's; > 1 is burstier)"),
    _f("traffic", "requests", "--requests", int, "N", "how many requests to simulate"),
    _f("traffic", "duration_s", "--duration", float, "SECONDS",
       "instead of --requests: every request arriving in the first SECONDS"),
    _f("traffic", "lengths", "--lengths", None, "DIST",
       "prompt/output lengths: fixed (--prompt/--output tokens) or a built-in distribution"),
    _f("traffic", "prefix_groups", "--prefix-groups", int, "N",
       "each request opens with one of N shared prefixes (with --prefix-tokens)"),
    _f("traffic", "prefix_tokens", "--prefix-tokens", int, "T", "tokens of each shared prefix, added to the prompt"),
    _f("traffic", "turns", "--turns", int, "N",
       "multi-turn sessions of N turns; each turn's prompt carries the history"),
    _f("traffic", "think_s", "--think-time", float, "SECONDS", "mean time between a session's turns (exponential)"),
    _f("traffic", "trace", "--trace", str, "FILE",
       "CSV or JSON-lines requests (arrival_s, prompt_tokens, output_tokens, optional prefix_id) instead of "
       "generated ones"),
    _f("traffic", "seed", "--seed", int, "N", "seed of the arrivals and lengths: the same seed, the same requests"),
)
ENGINE_FLAGS = (
    _f("engine", "batching", "--batching", None, "MODE",
       "continuous: iteration-level (Orca, vLLM); static: a batch runs until its last request is done"),
    _f("engine", "priority", "--priority", None, "PHASE",
       "without chunked prefill: waiting prefills first (vLLM V0) or running decodes first"),
    _f("engine", "chunked_prefill", "--chunked-prefill", action=_BOOL,
       help="decodes first, prefill chunks fill the rest of each iteration's token budget (Sarathi-Serve)"),
    _f("engine", "max_batch", "--max-batch", int, "N", "most running sequences per replica"),
    _f("engine", "token_budget", "--token-budget", int, "TOKENS", "most tokens per iteration (decodes + prefill)"),
    _f("engine", "block_size", "--block-size", int, "TOKENS", "tokens per paged KV block"),
    _f("engine", "watermark", "--watermark", float, "FRACTION", "share of KV blocks kept free when admitting"),
    _f("engine", "prefix_caching", "--prefix-caching", action=_BOOL,
       help="share the KV blocks of common prompt prefixes between requests"),
    _f("engine", "preemption", "--preemption", None, "MODE",
       "a preempted request's KV is recomputed later, or swapped to host memory and back"),
    _f("engine", "swap_space_gb", "--swap-space", float, "GIB", "host memory per GPU for swapped KV, GiB"),
)
CLUSTER_FLAGS = (
    _f("cluster", "replicas", "--replicas", int, "N", "replicas of the scenario (the decode pool, disaggregated)"),
    _f("cluster", "router", "--router", None, "POLICY", "which replica each request goes to"),
    _f("cluster", "prefill_replicas", "--prefill-replicas", int, "N",
       "> 0: disaggregated (DistServe): N prefill replicas send each request's KV to a decode replica"),
    _f("cluster", "prefill_tp", "--prefill-tp", int, "N", "tensor parallelism of a prefill replica (default --tp)"),
    _f("cluster", "prefill_pp", "--prefill-pp", int, "N", "pipeline parallelism of a prefill replica (default --pp)"),
    _f("cluster", "kv_link", "--kv-link", str, "LINK",
       "link profile the KV crosses between the pools (default: the system's GPU interconnect)"),
)
SLO_FLAGS = (
    _f("slo", "ttft_s", "--slo-ttft", float, "SECONDS", "time-to-first-token objective"),
    _f("slo", "tpot_s", "--slo-tpot", float, "SECONDS", "time-per-output-token objective"),
    _f("slo", "attainment", "--attainment", float, "FRACTION", "share of requests that must meet every objective"),
)
RUN_FLAGS = (
    _f("run", "horizon_s", "--horizon", float, "SECONDS",
       "stop the simulated clock here and report what is unfinished (default: when every request is done)"),
)
GROUPS = (("traffic", "requests that arrive (a scenario file's traffic: section)", TRAFFIC_FLAGS),
          ("engine", "each replica's scheduler and KV cache (engine: section)", ENGINE_FLAGS),
          ("cluster", "replicas, routing, disaggregation (cluster: section)", CLUSTER_FLAGS),
          ("SLO", "latency objectives: attainment and goodput (slo: section)", SLO_FLAGS))
ALL_FLAGS = TRAFFIC_FLAGS + ENGINE_FLAGS + CLUSTER_FLAGS + SLO_FLAGS + RUN_FLAGS

# Estimate flags that describe one fixed batch: a simulation forms its own batches.
NOT_SIMULATED = (
    ("batch", "--batch", "the scheduler forms the batches; use --max-batch (most running sequences per replica)"),
    ("prefill_chunk", "--prefill-chunk", "use --token-budget (tokens per iteration) with --chunked-prefill"),
    ("shared_prefix", "--shared-prefix", "use --prefix-groups and --prefix-tokens"),
)

SIM_EPILOG = ("A --scenario file may also hold traffic:, engine:, cluster: and slo: sections and a top-level "
              "horizon_s, with the fields of whatif.simulator's WorkloadSpec, EngineConfig, ClusterConfig and SLO "
              "(e.g. traffic: {rate: 5, lengths: sharegpt}); flags override them. Its workload: section (one "
              "estimate batch) is not used: --prompt/--output (or traffic: prompt/output) set the fixed lengths.")


# ---------------------------------------------------------------- help text

def _section_classes() -> dict:
    from .scenario import sim_section_classes
    from .simulator.config import SimConfig
    return {**sim_section_classes(), "run": SimConfig}


@cache
def _help_notes() -> dict[str, str]:
    """dest -> '(one of a, b; default a)' from the simulator's constants and dataclass defaults."""
    from .simulator import config, workload
    choices = {"traffic_arrival": workload.ARRIVALS, "traffic_lengths": workload.LENGTHS,
               "engine_batching": config.BATCHING, "engine_priority": config.PRIORITIES,
               "engine_preemption": config.PREEMPTION, "cluster_router": config.ROUTERS}
    defaults = {f"{section}_{f.name}": f.default for section, cls in _section_classes().items() for f in fields(cls)}
    notes = {}
    for flag in ALL_FLAGS:
        parts = [f"one of {', '.join(choices[flag.dest])}"] if flag.dest in choices else []
        default = defaults.get(flag.dest)
        if isinstance(default, bool):
            parts.append(f"default {'on' if default else 'off'}")
        elif default is not None:
            parts.append(f"default {default:g}" if isinstance(default, float) else f"default {default}")
        notes[flag.dest] = "; ".join(parts)
    notes["traffic_requests"] = (f"default {workload.DEFAULT_REQUESTS}; with --trace, all of it unless --requests "
                                 "or --duration")
    return notes


class _SimulatorHelp(argparse.HelpFormatter):
    """Adds each simulator flag's valid values and default, read when help is shown, so that building the
    parser for another command imports nothing from the simulator (whose workload module needs numpy)."""

    override: dict[str, str] = {}    # dest -> a note of this command's own

    def _get_help_string(self, action):
        text = action.help or ""
        note = self.override.get(action.dest)
        if note is None and action.dest in {f.dest for f in ALL_FLAGS}:
            note = _help_notes()[action.dest]
        return f"{text} ({note.replace('%', '%%')})" if note else text


class _CapacityHelp(_SimulatorHelp):
    override = {"traffic_requests": f"default {CAPACITY_REQUESTS} here, unless --duration or --trace"}


# ---------------------------------------------------------------- parsers

def _add_simulator_flags(p, searched_rate: bool):
    """The scenario's flags and the simulator's; returns the 'run and output' group for more."""
    from .cli import _add_scenario
    _add_scenario(p)
    for title, description, flags in GROUPS:
        group = p.add_argument_group(title, description)
        for flag in flags:
            if searched_rate and flag.field == "rate":
                group.add_argument(flag.flag, dest=flag.dest, default=None, type=str, help=argparse.SUPPRESS)
            else:
                group.add_argument(flag.flag, dest=flag.dest, default=None, **flag.kwargs)
    out = p.add_argument_group("run and output")
    for flag in RUN_FLAGS:
        out.add_argument(flag.flag, dest=flag.dest, default=None, **flag.kwargs)
    out.add_argument("--no-progress", action="store_true",
                     help=f"no progress bar (one is drawn on stderr, when it is a terminal, for runs over "
                          f"{PROGRESS_DELAY_S:g} s)")
    return out


def add_simulate_parser(sub) -> None:
    p = sub.add_parser("simulate", help="serve a stream of requests: latency percentiles, throughput, goodput",
                       description="Simulate serving the scenario under a stream of requests (SimPy; every "
                                   "iteration's time from roofline).",
                       epilog=SIM_EPILOG, formatter_class=_SimulatorHelp)
    out = _add_simulator_flags(p, searched_rate=False)
    out.add_argument("--csv-dir", metavar="DIR",
                     help="also write requests.csv (one row per request) and iterations.csv (one row per "
                          "iteration per replica) into DIR")
    add_report_flag(out)


def add_capacity_parser(sub) -> None:
    p = sub.add_parser("capacity", help="the highest request rate that meets latency SLOs, per configuration",
                       description="Search the highest arrival rate (req/s) whose simulation meets the SLO "
                                   "(--slo-ttft and/or --slo-tpot) for --attainment of requests: doubling, then "
                                   "bisection, each run the same traffic (same seed) at another rate. With "
                                   "--trace, the trace's arrival times are scaled to each rate.",
                       epilog=SIM_EPILOG + " A file's traffic rate is ignored: the rate is what is searched.",
                       formatter_class=_CapacityHelp)
    add_report_flag(_add_simulator_flags(p, searched_rate=True))
    s = p.add_argument_group("search")
    s.add_argument("--variant", action="append", default=[], metavar="SET",
                   help="a technique set to search too, e.g. 'kivi' or 'int4+kivi' (repeatable; as in compare)")
    s.add_argument("--systems", help="comma-separated hardware to search on (the first is the baseline's)")
    s.add_argument("--lo", type=float, metavar="REQ/S", help="a rate known to pass: the search starts there")
    s.add_argument("--hi", type=float, metavar="REQ/S", help="the highest rate to try (default: double until a fail)")
    s.add_argument("--rel-tol", type=float, metavar="FRACTION",
                   help="stop when the bracket is this narrow relative to the rate (default 0.02)")


# ---------------------------------------------------------------- HTML reports

def add_report_flag(p) -> None:
    p.add_argument("--report", metavar="FILE",
                   help="also write the result as one self-contained HTML page (charts, works offline) to FILE")


def start_report(path: str | None, flag: str = "--report") -> None:
    """Before any work: the page can be written at `path` and plotly (which draws it) is installed."""
    if path is None:
        return
    import importlib.util
    if importlib.util.find_spec("plotly") is None:
        raise WhatifError(f"{flag} needs the plotly package: pip install 'whatif[report]'")
    from .reports.page import check_out_path
    check_out_path(path, flag)


def write_report(page, path: str, flag: str = "--report", stream=None) -> int:
    """Write `page` to `path` and say so on `stream` (default stderr: stdout keeps the command's own output)."""
    from .specs.units import nbytes
    size = page.write(path, flag)
    print(f"report: {path} ({nbytes(size)}, {page.figures} charts)", file=stream or sys.stderr)
    return size


# ---------------------------------------------------------------- building the configuration

def _reject_estimate_flags(args) -> None:
    for dest, flag, instead in NOT_SIMULATED:
        if getattr(args, dest) is not None:
            raise WhatifError(f"{flag} does not apply to a simulation: {instead}")


def _require(module: str, command: str) -> None:
    import importlib.util
    if importlib.util.find_spec(module) is None:
        raise WhatifError(f"{command} needs the {module} package: pip install 'whatif[sim]'")


def _simulation_values(args) -> dict[str, dict]:
    """{section: field values}: the scenario file's simulator sections, then the flags given over them."""
    from .scenario import SIM_TOP, read_scenario_file
    file_values = read_scenario_file(args.scenario)[2] if args.scenario else {}
    values = {section: dict(file_values.get(section, {})) for section in ("traffic", "engine", "cluster", "slo")}
    values["run"] = {key: file_values[key] for key in SIM_TOP if key in file_values}
    for key in ("prompt", "output"):             # the scenario's flags, for a simulation the traffic's lengths
        if getattr(args, key) is not None:
            values["traffic"][key] = getattr(args, key)
    for flag in ALL_FLAGS:
        value = getattr(args, flag.dest, None)
        if value is not None:
            values[flag.section][flag.field] = value
    return values


def _sim_config(scenario, values: dict[str, dict]):
    """SimConfig from {section: field values}; each dataclass checks its own values."""
    c = _section_classes()
    return c["run"](scenario, c["traffic"](**values["traffic"]), c["engine"](**values["engine"]),
                    c["cluster"](**values["cluster"]), c["slo"](**values["slo"]), **values["run"])


def _check_csv_dir(directory: str | None) -> None:
    # before the run, not after it: a bad path should not cost a simulation
    if directory is not None and os.path.exists(directory) and not os.path.isdir(directory):
        raise WhatifError(f"--csv-dir: {directory!r} is a file; give a directory (created when missing)")


# ---------------------------------------------------------------- progress

class ProgressBar:
    """progress(arrived, total) for simulate(): one line on `stream`, redrawn in place with '\\r' (share of
    requests arrived, elapsed wall seconds), silent until the run has taken more than `delay_s`."""

    def __init__(self, stream, delay_s: float = PROGRESS_DELAY_S, clock=time.monotonic):
        self.stream, self.delay_s, self.clock = stream, delay_s, clock
        self.start = clock()
        self.label = ""          # e.g. which capacity run this is
        self.drawn = 0           # characters on the line now, to blank it

    def __call__(self, arrived: int, total: int) -> None:
        elapsed = self.clock() - self.start
        if elapsed <= self.delay_s:
            return
        share = arrived / total if total else 1.0
        cells = int(share * BAR_CELLS)
        line = (f"{self.label}[{'#' * cells}{'.' * (BAR_CELLS - cells)}] {share:4.0%} of {total} requests "
                f"arrived, {elapsed:.0f} s")
        line = line[:max(10, shutil.get_terminal_size().columns - 1)]   # a wrapped line cannot be redrawn
        self.stream.write("\r" + line.ljust(self.drawn))
        self.stream.flush()
        self.drawn = max(self.drawn, len(line))

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
            self.drawn = 0


def _progress_bar(args) -> ProgressBar | None:
    if args.no_progress or not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr)


@contextmanager
def progress(args):
    """The progress bar of one command (None when off), cleared however the command ends."""
    bar = _progress_bar(args)
    try:
        yield bar
    finally:
        if bar is not None:
            bar.clear()


# ---------------------------------------------------------------- simulate

def cmd_simulate(args) -> int:
    from .cli import _scenario_from_args
    _reject_estimate_flags(args)
    _require("simpy", "whatif simulate")
    if args.csv_dir is not None:
        _require("pandas", "--csv-dir")
    _check_csv_dir(args.csv_dir)
    start_report(args.report)
    cfg = _sim_config(_scenario_from_args(args), _simulation_values(args))
    from .simulator.cluster import simulate
    with progress(args) as bar:
        result = simulate(cfg, bar)
    paths = result.write_csv(args.csv_dir) if args.csv_dir is not None else []
    if args.json:
        summary = result.summary()
        if paths:
            summary["csv_files"] = paths
        print(json.dumps(summary))
    else:
        print(result.text())
        if paths:
            print(f"CSV: {paths[0]} (one row per request), {paths[1]} (one row per iteration per replica)")
    if args.report:
        from .reports.build import simulation_page
        write_report(simulation_page(cfg, result), args.report)
    return 0


# ---------------------------------------------------------------- capacity

def _search_settings(args) -> dict:
    """max_rate's lo/hi/rel_tol, only those given (max_rate holds the defaults), checked with the flags' names."""
    import math
    search = {}
    for key, flag in (("lo", "--lo"), ("hi", "--hi"), ("rel_tol", "--rel-tol")):
        value = getattr(args, key)
        if value is None:
            continue
        if not math.isfinite(value) or value < 0 or (key != "lo" and value == 0) or (key == "rel_tol" and value >= 1):
            valid = {"lo": ">= 0 req/s", "hi": "> 0 req/s", "rel_tol": "> 0 and < 1"}[key]
            raise WhatifError(f"{flag}: {value!r} must be a number {valid}")
        search[key] = value
    if "hi" in search and search["hi"] <= search.get("lo", 0.0):
        raise WhatifError(f"--hi: {search['hi']:g} req/s must be above --lo ({search.get('lo', 0.0):g} req/s)")
    return search


def _configurations(base, variants: list[str], systems_arg: str | None, hardware_given: bool) -> list[tuple]:
    """(label, scenario) for the baseline and each variant on each system, in `whatif compare`'s order."""
    from .queries.compare import BASELINE_NAMES
    systems = [h.strip() for h in systems_arg.split(",") if h.strip()] if systems_arg else []
    if systems_arg is not None and not systems:
        raise WhatifError("--systems: give one or more hardware names separated by commas")
    if systems and hardware_given:
        raise WhatifError("--systems and --hardware both name the hardware; give one of them")
    sets = ["baseline"] + [v for v in variants if v.strip().lower() not in BASELINE_NAMES]
    configs = []
    for hardware in systems or [base.hardware]:
        for variant in sets:
            techniques = tuple(base.techniques) + (() if variant == "baseline" else (variant,))
            label = variant if len(systems) < 2 else f"{variant} on {hardware}"
            configs.append((label, replace(base, hardware=hardware, techniques=techniques)))
    return configs


def _trace_rate(requests, path) -> float:
    """A trace's own mean arrival rate, req/s, over the span of its arrivals."""
    span = requests[-1].arrival_s - requests[0].arrival_s if requests else 0.0
    if len(requests) < 2 or span <= 0:
        raise WhatifError(f"--trace {path}: capacity scales the trace's arrival times to each rate, which needs "
                          "two or more requests arriving at different times")
    return (len(requests) - 1) / span


def time_scaled(requests, factor: float) -> list:
    """The same requests with their arrival times stretched by `factor` from the first arrival."""
    t0 = requests[0].arrival_s
    return [replace(r, arrival_s=t0 + (r.arrival_s - t0) * factor) for r in requests]


def _rate_runner(cfg, label: str, bar: ProgressBar | None):
    """run(rate) -> SimulationResult: `cfg`'s traffic at `rate` (generated again with the same seed, or its trace
    scaled in time)."""
    from .simulator.cluster import simulate
    from .simulator.workload import generate
    trace = generate(cfg.workload) if cfg.workload.trace is not None else None
    trace_rate = _trace_rate(trace, cfg.workload.trace) if trace is not None else None

    def run(rate: float):
        if bar is not None:
            bar.label = f"{label} at {rate:.4g} req/s "
        if trace is None:
            return simulate(replace(cfg, workload=replace(cfg.workload, rate=rate)), bar)
        return simulate(cfg, bar, requests=time_scaled(trace, trace_rate / rate))
    return run


def _traffic_line(spec) -> str:
    from .simulator.workload import describe
    text = describe(spec)
    if spec.trace is not None:
        return text + ", arrival times scaled to each rate"
    unit = "sessions/s" if spec.turns > 1 else "req/s"
    return text.replace(f" {spec.rate:g} {unit}", " arrivals at each rate searched", 1)


def cmd_capacity(args) -> int:
    from .cli import _scenario_from_args
    from .simulator.capacity import compare_capacity, compare_text
    _reject_estimate_flags(args)
    if args.traffic_rate is not None:
        raise WhatifError("capacity searches the rate; drop --rate")
    _require("simpy", "whatif capacity")
    search = _search_settings(args)
    start_report(args.report)
    base = _scenario_from_args(args)
    values = _simulation_values(args)
    values["traffic"].pop("rate", None)     # a scenario file's rate: searched instead
    if not {"requests", "duration_s", "trace"} & set(values["traffic"]):
        values["traffic"]["requests"] = CAPACITY_REQUESTS
    cfg = _sim_config(base, values)
    if not cfg.slo.given:
        raise WhatifError("whatif capacity needs an SLO: give --slo-ttft and/or --slo-tpot (seconds), or an slo: "
                          "section in --scenario")
    configs = _configurations(base, args.variant, args.systems, args.hardware is not None)
    for _, scenario in configs:      # a bad technique or system is an error now, not after the first searches
        scenario.technique_set()
        scenario.resolve()
    with progress(args) as bar:
        runs = {label: _rate_runner(replace(cfg, scenario=scenario), label, bar) for label, scenario in configs}
        results = compare_capacity(runs, cfg.slo, **search)
    if args.json:
        rows = [{"label": label, "model": sc.model, "hardware": sc.hardware,
                 "techniques": [str(t) for t in sc.techniques], **results[label].to_dict()} for label, sc in configs]
        print(json.dumps({"traffic": _traffic_line(cfg.workload), "configurations": rows}))
    else:
        head = f"{base.model}: {_traffic_line(cfg.workload)}"
        if len(configs) == 1:
            label, sc = configs[0]
            techniques = ", ".join(str(t) for t in sc.techniques) or "no techniques"
            print("\n".join([f"{head}\n{sc.hardware}, {techniques}", results[label].text()]))
        else:
            print(head + "\n" + compare_text(results))
    if args.report:
        from .reports.build import capacity_page
        write_report(capacity_page(configs, results, _traffic_line(cfg.workload)), args.report)
    return 0
