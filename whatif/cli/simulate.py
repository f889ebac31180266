"""`whatif simulate` and `whatif capacity`: the serving simulator from the command line."""
from __future__ import annotations

import json
import os
from dataclasses import replace

from ..errors import WhatifError
from ..specs.checks import flag_float, flag_text
from .common import require
from .estimate import add_serve_command_flag, serve_command
from .progress import ProgressBar, progress
from .reporting import add_report_flag, start_report, write_report
from .scenario_flags import scenario_from_args
from .sim_flags import SIM_EPILOG, SimulatorHelp, add_simulator_flags, reject_estimate_flags, simulation_values
from .tables import add_table_flags, start_tables, write_tables
from .traces import time_scaled, trace_rate

# Capacity's default traffic size. A short run overstates capacity: past it, a queue needs time to
# build (llama-3-8b on h100-sxm, ShareGPT-like, TTFT 200 ms / TPOT 20 ms at 90%: 72 req/s with 500
# requests, 40 req/s with 3000). 2000 keeps a search to about ten seconds (assumed trade-off).
CAPACITY_REQUESTS = 2000


class CapacityHelp(SimulatorHelp):
    override = {"traffic_requests": f"default {CAPACITY_REQUESTS} here, unless --duration or --trace"}


def add_simulate_parser(p) -> None:
    p.description = ("Simulate serving the scenario under a stream of requests (a discrete-event simulation; every "
                     "iteration's time from roofline).")
    p.epilog, p.formatter_class = SIM_EPILOG, SimulatorHelp
    out = add_simulator_flags(p, searched_rate=False)
    out.add_argument("--csv-dir", metavar="DIR",
                     help="also write requests.csv (one row per request) and iterations.csv (one row per "
                          "iteration per replica) into DIR")
    add_serve_command_flag(out, "simulation")
    add_report_flag(out)
    add_table_flags(out)


def add_capacity_parser(p) -> None:
    p.description = ("Search the highest arrival rate (req/s) whose simulation meets the SLO (--slo-ttft and/or "
                     "--slo-tpot) for --attainment of requests: doubling, then bisection, each run the same traffic "
                     "(same seed) at another rate. With --trace, the trace's arrival times are scaled to each rate.")
    p.epilog = SIM_EPILOG + " A file's traffic rate is ignored: the rate is what is searched."
    p.formatter_class = CapacityHelp
    out = add_simulator_flags(p, searched_rate=True)
    add_report_flag(out)
    add_table_flags(out)
    s = p.add_argument_group("search")
    s.add_argument("--variant", action="append", default=[], metavar="SET",
                   help="a technique set to search too, e.g. 'kivi' or 'int4+kivi' (repeatable; as in compare)")
    s.add_argument("--systems", type=flag_text,
                   help="comma-separated hardware to search on (the first is the baseline's)")
    s.add_argument("--lo", type=flag_float(0, 1e6, "req/s", low_open=True), metavar="REQ/S",
                   help="a rate known to pass (> 0): the search starts there")
    s.add_argument("--hi", type=flag_float(0, 1e6, "req/s", low_open=True), metavar="REQ/S",
                   help="the highest rate to try (default: double until a fail)")
    s.add_argument("--rel-tol", type=flag_float(0, 0.5, "of the rate", low_open=True), metavar="FRACTION",
                   help="stop when the bracket is this narrow relative to the rate (default 0.02)")


# ---------------------------------------------------------------- simulate

def _check_csv_dir(directory: str | None) -> None:
    # before the run, not after it: a bad path should not cost a simulation
    if directory is not None and os.path.exists(directory) and not os.path.isdir(directory):
        raise WhatifError(f"--csv-dir: {directory!r} is a file; give a directory (created when missing)")


def cmd_simulate(args) -> int:
    reject_estimate_flags(args)
    if args.csv_dir is not None:
        require("pandas", "--csv-dir")
    _check_csv_dir(args.csv_dir)
    start_report(args.report)
    start_tables(args)
    from ..simulator.cluster import check_fits, simulate
    from ..simulator.config import sim_config
    cfg = sim_config(scenario_from_args(args), simulation_values(args))
    from .estimate import warn_stored_format
    warn_stored_format(cfg.scenario)   # (before a does-not-fit: the stored format may fit)
    check_fits(cfg)
    with progress(args) as bar:
        result = simulate(cfg, bar)
    paths = result.write_csv(args.csv_dir) if args.csv_dir is not None else []
    serve = None
    if args.serve_command:
        from ..queries.deployment import from_simulation
        serve = serve_command(*from_simulation(cfg), args.json)
    if args.json:
        summary = result.summary()
        if paths:
            summary["csv_files"] = paths
        if serve:
            summary["serve_command"] = serve
        print(json.dumps(summary, allow_nan=False))
    else:
        print(result.text() + (f"\n\n{serve}" if serve else ""))
        if paths:
            print(f"CSV: {paths[0]} (one row per request), {paths[1]} (one row per iteration per replica)")
    from .result_rows import SIMULATE_COLUMNS, simulation_row
    write_tables(args, [simulation_row(result.summary(), cfg.scenario)], SIMULATE_COLUMNS)
    if args.report:
        from ..reports.build import simulation_page
        write_report(simulation_page(cfg, result), args.report)
    from . import keep_to_exit
    keep_to_exit(result)   # (the process ends next: not freed one object at a time)
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
    from ..queries.compare import compare_rows, on_system
    from .compare import parse_systems   # (capacity's --systems: `whatif compare`'s module, not simulate's)
    systems = parse_systems(systems_arg, hardware_given)
    first = on_system(base, systems[0]) if systems else base
    rows = compare_rows(first, variants, systems[1:])
    own_parallel = any(":" in spec for spec in systems)   # NAME:tp=N: the label says which parallelism

    def where(sc) -> str:
        return sc.hardware + (f" tp={sc.parallel.tp} pp={sc.parallel.pp}" if own_parallel else "")
    return [(variant if len(systems) < 2 else f"{variant} on {where(scenario)}", scenario)
            for variant, scenario in rows]


def _rate_runner(cfg, label: str, bar: ProgressBar | None):
    """run(rate) -> SimulationResult: `cfg`'s traffic at `rate` (generated again with the same seed, or its trace
    scaled in time)."""
    from ..simulator.cluster import simulate
    from ..simulator.workload import generate
    trace = generate(cfg.workload) if cfg.workload.trace is not None else None
    own_rate = trace_rate(trace, cfg.workload.trace) if trace is not None else None

    def run(rate: float):
        if bar is not None:
            bar.label = f"{label} at {rate:.4g} req/s "
        if trace is None:
            return simulate(replace(cfg, workload=replace(cfg.workload, rate=rate)), bar)
        return simulate(cfg, bar, requests=time_scaled(trace, own_rate / rate))
    return run


def _traffic_line(spec) -> str:
    from ..simulator.workload import describe
    text = describe(spec)
    if spec.trace is not None:
        return text + ", arrival times scaled to each rate"
    unit = "sessions/s" if spec.turns > 1 else "req/s"
    return text.replace(f" {spec.rate:g} {unit}", " arrivals at each rate searched", 1)


def cmd_capacity(args) -> int:
    from ..simulator.capacity import compare_capacity, compare_text
    reject_estimate_flags(args)
    if args.traffic_rate is not None:
        raise WhatifError("capacity searches the rate; drop --rate")
    if args.traffic_concurrency is not None:
        raise WhatifError("capacity searches an open stream's rate; drop --concurrency")
    search = _search_settings(args)
    start_report(args.report)
    start_tables(args)
    base = scenario_from_args(args)
    values = simulation_values(args)
    values["traffic"].pop("rate", None)     # a scenario file's rate: searched instead
    if not {"requests", "duration_s", "trace"} & set(values["traffic"]):
        values["traffic"]["requests"] = CAPACITY_REQUESTS
    from ..simulator.config import sim_config
    cfg = sim_config(base, values)
    if not cfg.slo.given:
        raise WhatifError("whatif capacity needs an SLO: give --slo-ttft and/or --slo-tpot (seconds), or an slo: "
                          "section in --scenario")
    configs = _configurations(base, args.variant, args.systems, args.hardware is not None)
    from ..simulator.cluster import check_fits
    for _, scenario in configs:      # a bad technique or system is an error now, not after the first searches
        scenario.technique_set()
        scenario.resolve()
        check_fits(replace(cfg, scenario=scenario))
    with progress(args) as bar:
        runs = {label: _rate_runner(replace(cfg, scenario=scenario), label, bar) for label, scenario in configs}
        results = compare_capacity(runs, cfg.slo, **search)
    if args.json:
        rows = [{"label": label, "model": sc.model, "hardware": sc.hardware,
                 "techniques": [str(t) for t in sc.techniques], **results[label].to_dict()} for label, sc in configs]
        print(json.dumps({"traffic": _traffic_line(cfg.workload), "configurations": rows}, allow_nan=False))
    else:
        head = f"{base.model}: {_traffic_line(cfg.workload)}"
        if len(configs) == 1:
            label, sc = configs[0]
            techniques = ", ".join(str(t) for t in sc.techniques) or "no techniques"
            print("\n".join([f"{head}\n{sc.hardware}, {techniques}", results[label].text()]))
        else:
            print(head + "\n" + compare_text(results))
    if args.report:
        from ..reports.build import capacity_page
        write_report(capacity_page(configs, results, _traffic_line(cfg.workload)), args.report)
    from .result_rows import CAPACITY_COLUMNS, capacity_rows
    write_tables(args, capacity_rows(configs, results), CAPACITY_COLUMNS)
    return 0
