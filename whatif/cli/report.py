"""`whatif report` (one HTML page for a scenario) and `whatif demo` (the flagship what-if as a page)."""
from __future__ import annotations

import json

from ..specs import units
from .compare import compare_inputs
from .progress import progress
from .reporting import start_report
from .scenario_flags import scenario_from_args
from .sim_flags import check_file_sections
from .sim_flags import SimulatorHelp, add_simulator_flags, simulation_values

DEMO_OUT = "whatif-demo.html"
REPORT_OUT = "whatif-report.html"


def add_report_parser(p) -> None:
    p.description = ("Write one HTML page for the scenario: summary, roofline chart, latency and memory breakdowns "
                     "and a batch sweep; with --variant/--systems/--host-links a comparison (as `whatif compare`); "
                     "with --simulate a serving simulation (the simulator flags below, as `whatif simulate`); with "
                     "--validation predicted versus measured kernel times; with --reproduction the paper-claims "
                     "table. The page embeds plotly.js once, so it opens without a network.")
    p.epilog = ("The estimate, the comparison and the sweep use the scenario's workload (--batch, --prompt, --output "
                "or a --scenario file's workload: section); --simulate serves the traffic the simulator flags "
                "describe (a --scenario file's traffic:, engine:, cluster: and slo: sections, as `whatif simulate`).")
    p.formatter_class = SimulatorHelp
    add_simulator_flags(p, searched_rate=False, refuses_batch=False)
    r = p.add_argument_group("report")
    r.add_argument("--out", default=REPORT_OUT, metavar="FILE", help=f"where to write the page (default {REPORT_OUT})")
    r.add_argument("--title", help="the page's title (default: model on hardware)")
    r.add_argument("--variant", action="append", default=[], metavar="SET",
                   help="a technique set to compare against the scenario, as in `whatif compare` (repeatable)")
    r.add_argument("--systems", help="comma-separated hardware to compare (the first is the baseline's)")
    r.add_argument("--host-links", help="comma-separated host links to compare each system over")
    r.add_argument("--batches", help="comma-separated batch sizes of the sweep (default 1, 2, 4, ... up to the max "
                                     "batch)")
    r.add_argument("--no-sweep", action="store_true", help="leave out the batch sweep")
    r.add_argument("--simulate", action="store_true",
                   help="add a serving simulation of the scenario (traffic, engine, cluster and SLO flags above)")
    r.add_argument("--validation", action="store_true",
                   help="add predicted versus measured kernel times (the committed subset of Vidur's public "
                        "timings, or --measurements)")
    r.add_argument("--measurements", metavar="CSV",
                   help="a measurement table for the validation section: columns family, measured_s, predicted_s "
                        "(seconds) and optionally gpu, kernel, regime, split, source (implies --validation)")
    r.add_argument("--reproduction", action="store_true",
                   help="add the paper-claims table (every claim in whatif/claims evaluated; about a second)")


def add_demo_parser(dem) -> None:
    dem.description = ("Llama-3.1-70B with 4-bit weights and 16k-token prompts on an H100 SXM, a GH200 and an H100 "
                       "PCIe with CXL memory expanders, with KV quantization, speculative decoding and KV offloading; "
                       "a small serving simulation and capacity search. Writes one self-contained HTML file and "
                       "prints its path and the headline.")
    dem.add_argument("--out", default=DEMO_OUT, metavar="FILE", help=f"where to write the page (default {DEMO_OUT})")


def cmd_report(args) -> int:
    from ..reports import build
    from ..reports.page import Page
    from ..reports.sweeps import parse_batches
    start_report(args.out, "--out")
    batches = parse_batches(args.batches) if args.batches is not None else None   # `--batches=` is an error
    comparing = bool(args.variant or args.systems is not None or args.host_links is not None)
    if comparing:
        from ..queries.compare import run_compare
        base, others, links = compare_inputs(args)
        result = run_compare(base, args.variant, others, links)
        scenarios = None if args.no_sweep else build.compare_scenarios(base, args.variant, others, links)
        sections = build.compare_sections(result, scenarios, batches)
        est = result.baseline.estimate
    else:
        base = scenario_from_args(args)
        check_file_sections(base, args.scenario)
        est = base.run()
        sections = build.estimate_sections(base, est, not args.no_sweep, batches)
    page = Page(args.title or f"whatif report: {est.model.name} on {est.system.name}",
                [f"efficiency: {est.efficiency.source}"], sections)
    if args.simulate:
        page.add(_simulation_section(args, base))
    if args.validation or args.measurements:
        page.add(_validation_section(args.measurements))
    if args.reproduction:
        from ..reports.reproduction import evaluate_claims, reproduction_section
        page.add(reproduction_section(evaluate_claims()))
    size = page.write(args.out, "--out")
    fits = "fits" if est.memory.fits else "does NOT fit"
    from ..reports.output import tok_rate   # (when run: building the parser stays light)
    tpot = units.seconds(est.tpot_s) if est.workload.output > 1 else "none (one output token)"
    headline = (f"{est.model.name} on {est.system.name}: TTFT {units.seconds(est.ttft_s)}, TPOT {tpot}, "
                f"{tok_rate(est.throughput_tok_s)}, max batch {est.max_batch}, {fits}")
    if args.json:
        print(json.dumps({"report": args.out, "bytes": size, "charts": page.figures,
                          "sections": [s.id for s in page.sections]}, allow_nan=False))
    else:
        print(f"wrote {args.out} ({units.nbytes(size)}, {page.figures} charts; sections: "
              f"{', '.join(s.title for s in page.sections)})\n{headline}")
    return 0


def _simulation_section(args, base):
    from ..reports.simulation import simulation_section
    from ..simulator.cluster import simulate
    from ..simulator.config import sim_config
    cfg = sim_config(base, simulation_values(args))
    with progress(args) as bar:
        result = simulate(cfg, bar)
    return simulation_section(result)


def _validation_section(measurements: str | None):
    """Predicted versus measured: the --measurements table, or the committed subset of Vidur's public timings
    (package data, so an installed whatif has it too)."""
    from ..reports.validation import validation_section
    from ..validate.reference import COMMITTED_SOURCE, committed_measurements
    from ..validate.table import read_measurements
    if measurements:
        rows, source = read_measurements(measurements), f"measurement table {measurements}"
    else:
        rows, source = committed_measurements(), COMMITTED_SOURCE
    return validation_section(rows, source)


def cmd_demo(args) -> int:
    import os
    import time

    from ..reports import demo
    t0 = time.perf_counter()
    start_report(args.out, "--out")
    page, headline = demo.build()
    size = page.write(args.out, "--out")
    print(f"whatif demo: wrote {os.path.abspath(args.out)} ({units.nbytes(size)}, {page.figures} charts, "
          f"{time.perf_counter() - t0:.1f} s); {demo.MODEL} 4-bit, batch {demo.WORKLOAD['batch']} x "
          f"{demo.WORKLOAD['prompt']:,}-token prompts: {headline}")
    return 0
