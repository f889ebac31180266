"""The `whatif` command line: estimate, compare, simulate, capacity, report, demo, kernel, validate, list, show."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields

from . import output
from .specs import units
from .errors import WhatifError
from .roofline.efficiency import SOURCES
from .sim_cli import (add_capacity_parser, add_report_flag, add_simulate_parser, cmd_capacity, cmd_simulate,
                      start_report, write_report)


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad flags on one line and exits 2, like every other user error."""

    def error(self, message):
        raise WhatifError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def _add_common_hw(p):
    from .scenario import DEFAULT_HARDWARE
    p.add_argument("--hardware", default=None,
                   help=f"GPU or system profile name, or a YAML path (default {DEFAULT_HARDWARE})")
    p.add_argument("--efficiency", choices=SOURCES, default=None, help="efficiency source (default: default)")
    p.add_argument("--calibration", default=None, help="calibration file for --efficiency calibrated")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _add_scenario(p):
    """The flags that describe one scenario (estimate and compare share them)."""
    p.add_argument("--scenario", help="scenario YAML (flags given here override it)")
    p.add_argument("--model", help="model profile name or path to a YAML / Hugging Face config.json")
    _add_common_hw(p)
    for flag in ("gpus", "tp", "pp", "ep", "batch", "prompt", "output", "prefill-chunk", "weight-group-size"):
        p.add_argument(f"--{flag}", type=int)
    p.add_argument("--shared-prefix", type=int, help="leading prompt tokens all sequences share (default 0)")
    p.add_argument("--dtype", help="activation dtype; also weights and KV unless given (default bf16)")
    p.add_argument("--weight-dtype")
    p.add_argument("--kv-dtype")
    p.add_argument("--memory-utilization", type=float, help="fraction of HBM the engine may use (default 0.9)")
    p.add_argument("--eager", action="store_true", help="no CUDA graphs in decode: pay CPU launch per kernel")
    p.add_argument("--technique", action="append", default=[], metavar="NAME[:key=value,...]",
                   help="apply a technique (repeatable; see `whatif list techniques`)")
    t = p.add_argument_group("memory tiers and offloading")
    t.add_argument("--place", action="append", default=[], metavar="CLASS=TIER[:FRACTION]",
                   help="keep a share of weights, kv or activations in a slower tier: a memory profile of the "
                        "system, its technology (ddr5, lpddr5x, cxl, nvme) or 'host' (repeatable)")
    t.add_argument("--access", choices=("stream", "direct"), default=None,
                   help="stream: copy offloaded bytes into HBM layer by layer (default); direct: kernels read "
                        "the tier in place (KV only; weights are always streamed)")
    t.add_argument("--no-overlap", action="store_true", help="streamed copies wait for compute instead of overlapping")
    t.add_argument("--add-tier", action="append", default=[], metavar="MEMORY[:COUNT]",
                   help="attach COUNT devices of a memory profile behind the GPU's host link, e.g. "
                        "cxl-micron-cz120-256gb:4 (repeatable)")
    t.add_argument("--host-link", help="replace the GPU's host link, e.g. pcie-gen4-x16, pcie-gen5-x16, nvlink-c2c")
    t.add_argument("--price-per-hour", type=float, help="USD per hour of the GPUs used (over profile prices)")
    t.add_argument("--launch-us", type=float,
                   help="host CPU launch + queuing time per kernel in eager mode, microseconds (default: the GPU "
                        "profile's launch_overhead); e.g. a slower host CPU")
    t.add_argument("--context-window", type=int,
                   help="what-if: treat the model's context window as this many tokens (e.g. RoPE scaling)")


DEMO_OUT = "whatif-demo.html"
REPORT_OUT = "whatif-report.html"


def add_report_parser(sub) -> None:
    from .sim_cli import _add_simulator_flags, _SimulatorHelp
    p = sub.add_parser(
        "report", help="one self-contained HTML page for a scenario (charts; works offline)",
        description="Write one HTML page for the scenario: summary, roofline chart, latency and memory breakdowns "
                    "and a batch sweep; with --variant/--systems/--host-links a comparison (as `whatif compare`); "
                    "with --simulate a serving simulation (the simulator flags below, as `whatif simulate`); with "
                    "--validation predicted versus measured kernel times; with --reproduction the paper-claims "
                    "table. The page embeds plotly.js once, so it opens without a network.",
        epilog="The estimate, the comparison and the sweep use the scenario's workload (--batch, --prompt, --output "
               "or a --scenario file's workload: section); --simulate serves the traffic the simulator flags "
               "describe (a --scenario file's traffic:, engine:, cluster: and slo: sections, as `whatif simulate`).",
        formatter_class=_SimulatorHelp)
    _add_simulator_flags(p, searched_rate=False)
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
                   help="add predicted versus measured kernel times (the public Vidur timings in reference/, or "
                        "--measurements)")
    r.add_argument("--measurements", metavar="CSV",
                   help="a measurement table for the validation section: columns family, measured_s, predicted_s "
                        "(seconds) and optionally gpu, kernel, regime, split, source (implies --validation)")
    r.add_argument("--reproduction", action="store_true",
                   help="add the paper-claims table (every claim in whatif/claims evaluated; about a second)")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="whatif", description="Predict LLM inference latency, throughput and memory from specs.")
    sub = ap.add_subparsers(dest="command", parser_class=_Parser)

    est = sub.add_parser("estimate", help="TTFT, TPOT, throughput, memory and per-op tables for a scenario")
    _add_scenario(est)
    est.add_argument("--no-ops", action="store_true", help="omit the per-op tables from text output")
    add_report_flag(est)

    cmp_ = sub.add_parser("compare", help="technique sets and systems side by side against a baseline")
    _add_scenario(cmp_)
    cmp_.add_argument("--variant", action="append", default=[], metavar="SET",
                      help="a technique set to compare, e.g. 'kivi' or 'int4+kivi+h2o:heavy=0.1' (repeatable)")
    cmp_.add_argument("--systems", help="comma-separated hardware to compare (the first is the baseline's)")
    cmp_.add_argument("--host-links", help="comma-separated host links to run each system with, e.g. "
                                           "pcie-gen4-x16,pcie-gen5-x16,nvlink-c2c (the same offload over each)")
    add_report_flag(cmp_)

    cro = sub.add_parser("crossover", help="the batch from which an offloading scenario beats more GPUs per GPU")
    _add_scenario(cro)
    cro.add_argument("--versus-gpus", type=int, default=2,
                     help="GPUs (tensor parallel, all in HBM) to compare against (default 2)")
    cro.add_argument("--batches", help="comma-separated batch sizes to sweep (default 1,2,4,...,1024)")

    siz = sub.add_parser("size-tier", help="how many devices of a memory tier a scenario needs, and its decode rate")
    _add_scenario(siz)
    siz.add_argument("--tier", required=True, help="memory profile to add, e.g. cxl-micron-cz120-256gb")
    siz.add_argument("--max-count", type=int, default=None, help="most devices to try (default 64)")

    add_simulate_parser(sub)
    add_capacity_parser(sub)
    add_report_parser(sub)

    dem = sub.add_parser("demo", help="the flagship what-if on built-in profiles, as one HTML page (a few seconds)",
                         description="Llama-3.1-70B with 4-bit weights and 16k-token prompts on an H100 SXM, a GH200 "
                                     "and an H100 PCIe with CXL memory expanders, with KV quantization, speculative "
                                     "decoding and KV offloading; a small serving simulation and capacity search. "
                                     "Writes one self-contained HTML file and prints its path and the headline.")
    dem.add_argument("--out", default=DEMO_OUT, metavar="FILE", help=f"where to write the page (default {DEMO_OUT})")

    ker = sub.add_parser("kernel", help="single-kernel predictions")
    ksub = ker.add_subparsers(dest="kernel", parser_class=_Parser)
    g = ksub.add_parser("gemm", help="C[m,n] = A[m,k] @ B[k,n]")
    for f in ("m", "n", "k"):
        g.add_argument(f"--{f}", type=int, required=True)
    g.add_argument("--dtype", default="bf16")
    _add_common_hw(g)
    a = ksub.add_parser("attention", help="FlashAttention prefill or decode attention over a KV cache")
    a.add_argument("--phase", choices=("prefill", "decode"), required=True)
    for f in ("batch", "heads", "kv-heads", "head-dim", "seq-len"):
        a.add_argument(f"--{f}", type=int, required=True)
    a.add_argument("--dtype", default="bf16")
    _add_common_hw(a)
    r = ksub.add_parser("allreduce", help="ring all-reduce over the system's GPU interconnect")
    r.add_argument("--bytes", type=int, required=True)
    r.add_argument("--gpus", type=int, required=True)
    _add_common_hw(r)

    from .validate.cli import add_validate_parser
    add_validate_parser(sub, _Parser)

    ls = sub.add_parser("list", help="list hardware, models or techniques")
    ls.add_argument("what", choices=("hardware", "models", "techniques"))
    ls.add_argument("--kind", choices=("gpu", "system", "link", "memory"), help="hardware kind to list")
    ls.add_argument("--json", action="store_true")
    sh = sub.add_parser("show", help="show one hardware component, model or technique with sources")
    sh.add_argument("what", choices=("hardware", "model", "technique"))
    sh.add_argument("name")
    sh.add_argument("--json", action="store_true")
    return ap


# ---------------------------------------------------------------- commands


def _scenario_from_args(args):
    from .scenario import build_scenario, scenario_from_yaml
    top, sections = scenario_from_yaml(args.scenario) if args.scenario else ({}, {})
    sections = {k: dict(v) for k, v in sections.items()}
    for key, value in (("model", args.model), ("hardware", args.hardware), ("gpus", args.gpus),
                       ("efficiency", args.efficiency), ("calibration", args.calibration),
                       ("memory_utilization", args.memory_utilization)):
        if value is not None:
            top[key] = value
    if args.eager:
        top["cuda_graphs"] = False
    if args.technique:
        top["techniques"] = list(top.get("techniques") or []) + list(args.technique)
    if args.place:
        top["place"] = list(top.get("place") or []) + list(args.place)
    if args.add_tier:
        top["add_tiers"] = list(top.get("add_tiers") or []) + list(args.add_tier)
    for key, value in (("access", args.access), ("host_link", args.host_link),
                       ("price_per_hour", args.price_per_hour), ("context_window", args.context_window),
                       ("launch_us", args.launch_us)):
        if value is not None:
            top[key] = value
    if args.no_overlap:
        top["overlap"] = False
    for section, keys in (("parallel", ("tp", "pp", "ep")),
                          ("workload", ("batch", "prompt", "output", "prefill_chunk", "shared_prefix"))):
        for key in keys:
            value = getattr(args, key)
            if value is not None:
                sections.setdefault(section, {})[key] = value
    prec = sections.setdefault("precision", {})
    if args.dtype:
        from .roofline.config import Precision
        Precision(activation=args.dtype)   # a bad value is reported as --dtype, not as --weight-dtype
        prec["activation"] = args.dtype
        prec.setdefault("weight", args.dtype)
        prec.setdefault("kv", args.dtype)
    if args.weight_dtype:
        prec["weight"] = args.weight_dtype
    if args.kv_dtype:
        prec["kv"] = args.kv_dtype
    if args.weight_group_size is not None:
        prec["weight_group_size"] = args.weight_group_size
    return build_scenario(top, sections)


def cmd_estimate(args) -> int:
    start_report(args.report)
    scenario = _scenario_from_args(args)
    est = scenario.run()
    check_fits(est)
    if args.json:
        print(json.dumps(output.estimate_dict(est)))
    else:
        print(output.estimate_text(est, show_ops=not args.no_ops))
    if args.report:
        from .reports.build import estimate_page
        write_report(estimate_page(scenario, est), args.report)
    return 0


def check_fits(est) -> None:
    """A scenario that overfills a tier is an error naming the tier, by how much, and what to try."""
    m = est.memory
    over = m.overflow()
    if not over:
        return
    tier, need, usable = over[0]
    raise WhatifError(
        f"{est.model.name} does not fit on {est.system.name} with tp={est.parallel.tp} pp={est.parallel.pp}: "
        f"{tier} needs {units.nbytes(need)} per GPU (weights {units.nbytes(m.weights_bytes)}, "
        f"KV {units.nbytes(m.kv_cache_bytes)}, activations {units.nbytes(m.activation_bytes)} in all tiers), usable "
        f"{units.nbytes(usable)}: over by {units.nbytes(need - usable)}; "
        f"try more GPUs (--tp/--pp), a smaller --weight-dtype/--kv-dtype, a KV technique "
        f"(`whatif list techniques`), offloading (--place) or a smaller --batch (max batch here: {est.max_batch})")


def _compare_inputs(args):
    """(base scenario, other systems, host links) from compare's flags, each checked."""
    from dataclasses import replace
    base = _scenario_from_args(args)
    systems = [h.strip() for h in args.systems.split(",") if h.strip()] if args.systems else []
    if args.systems is not None and not systems:
        raise WhatifError("--systems: give one or more hardware names separated by commas")
    if systems and args.hardware:
        raise WhatifError("--systems and --hardware both name the hardware; give one of them")
    if systems:
        base = replace(base, hardware=systems[0])
    links = [h.strip() for h in args.host_links.split(",") if h.strip()] if args.host_links else None
    if args.host_links is not None and not links:
        raise WhatifError("--host-links: give one or more link profile names separated by commas")
    if links and args.host_link:
        raise WhatifError("--host-links and --host-link both set the host link; give one of them")
    return base, systems[1:], links


def cmd_compare(args) -> int:
    from .queries.compare import compare_dict, compare_text, run_compare
    start_report(args.report)
    base, others, links = _compare_inputs(args)
    result = run_compare(base, args.variant, others, links)
    print(json.dumps(compare_dict(result)) if args.json else compare_text(result))
    if args.report:
        from .reports.build import compare_page, compare_scenarios
        write_report(compare_page(result, compare_scenarios(base, args.variant, others, links)), args.report)
    return 0


def cmd_report(args) -> int:
    from .reports import build
    from .reports.page import Page
    from .reports.sweeps import parse_batches
    start_report(args.out, "--out")
    batches = parse_batches(args.batches) if args.batches else None
    if args.simulate:
        from .sim_cli import _require
        _require("simpy", "--simulate")
    comparing = bool(args.variant or args.systems is not None or args.host_links is not None)
    if comparing:
        from .queries.compare import run_compare
        base, others, links = _compare_inputs(args)
        result = run_compare(base, args.variant, others, links)
        scenarios = None if args.no_sweep else build.compare_scenarios(base, args.variant, others, links)
        sections = build.compare_sections(result, scenarios, batches)
        est = result.baseline.estimate
    else:
        base = _scenario_from_args(args)
        est = base.run()
        sections = build.estimate_sections(base, est, not args.no_sweep, batches)
    page = Page(args.title or f"whatif report: {est.model.name} on {est.system.name}",
                [f"efficiency: {est.efficiency.source}"], sections)
    if args.simulate:
        page.add(_report_simulation(args, base))
    if args.validation or args.measurements:
        from .reports.validation import read_measurements, validation_section, vidur_measurements
        if args.measurements:
            rows, source = read_measurements(args.measurements), f"measurement table {args.measurements}"
        else:
            rows = vidur_measurements()
            source = "Vidur's public operator timings (reference/vidur-profiling), default efficiency model"
        page.add(validation_section(rows, source))
    if args.reproduction:
        from .reports.reproduction import evaluate_claims, reproduction_section
        page.add(reproduction_section(evaluate_claims()))
    size = page.write(args.out, "--out")
    fits = "fits" if est.memory.fits else "does NOT fit"
    headline = (f"{est.model.name} on {est.system.name}: TTFT {units.seconds(est.ttft_s)}, TPOT "
                f"{units.seconds(est.tpot_s)}, {est.throughput_tok_s:,.1f} tok/s, max batch {est.max_batch}, {fits}")
    if args.json:
        print(json.dumps({"report": args.out, "bytes": size, "charts": page.figures,
                          "sections": [s.id for s in page.sections]}))
    else:
        print(f"wrote {args.out} ({units.nbytes(size)}, {page.figures} charts; sections: "
              f"{', '.join(s.title for s in page.sections)})\n{headline}")
    return 0


def _report_simulation(args, base):
    from .reports.simulation import simulation_section
    from .sim_cli import _sim_config, _simulation_values, progress
    from .simulator.cluster import simulate
    cfg = _sim_config(base, _simulation_values(args))
    with progress(args) as bar:
        result = simulate(cfg, bar)
    return simulation_section(result)


def cmd_demo(args) -> int:
    import os
    import time

    from .reports import demo
    from .sim_cli import _require
    t0 = time.perf_counter()
    start_report(args.out, "--out")
    _require("simpy", "whatif demo")
    page, headline = demo.build()
    size = page.write(args.out, "--out")
    print(f"whatif demo: wrote {os.path.abspath(args.out)} ({units.nbytes(size)}, {page.figures} charts, "
          f"{time.perf_counter() - t0:.1f} s); {demo.MODEL} 4-bit, batch {demo.WORKLOAD['batch']} x "
          f"{demo.WORKLOAD['prompt']:,}-token prompts: {headline}")
    return 0


def cmd_crossover(args) -> int:
    from .queries.tier_queries import SWEEP_BATCHES, crossover_dict, crossover_text, run_crossover
    if args.batch is not None:
        raise WhatifError("whatif crossover: --batch is swept; use --batches to choose the sizes")
    batches = SWEEP_BATCHES
    if args.batches:
        try:
            batches = tuple(int(b) for b in args.batches.split(",") if b.strip())
        except ValueError:
            raise WhatifError(f"--batches: {args.batches!r} must be comma-separated positive integers") from None
        if not batches or min(batches) < 1:
            raise WhatifError(f"--batches: {args.batches!r} must be comma-separated positive integers")
    result = run_crossover(_scenario_from_args(args), args.versus_gpus, sorted(set(batches)))
    print(json.dumps(crossover_dict(result)) if args.json else crossover_text(result))
    return 0


def cmd_size_tier(args) -> int:
    from .errors import positive_int
    from .queries.tier_queries import MAX_TIER_COUNT, run_size_tier, size_tier_dict, size_tier_text
    limit = positive_int(args.max_count, "--max-count") if args.max_count is not None else MAX_TIER_COUNT
    result = run_size_tier(_scenario_from_args(args), args.tier, limit)
    if args.json:
        print(json.dumps(size_tier_dict(result)))
    else:
        print(size_tier_text(result, limit))
    return 0


def cmd_kernel(args) -> int:
    from .specs.hardware import load_system
    from .roofline import kernels
    from .roofline.efficiency import load_efficiency
    from .scenario import DEFAULT_HARDWARE
    if args.kernel is None:
        raise WhatifError("whatif kernel: name a kernel; valid: gemm, attention, allreduce")
    hw = args.hardware or DEFAULT_HARDWARE
    system = load_system(hw, args.gpus if args.kernel == "allreduce" else None)   # --gpus <= the system's
    eff = load_efficiency(args.efficiency or "default", system.gpu, args.calibration)
    if args.kernel == "gemm":
        t = kernels.gemm_kernel(system, eff, args.m, args.n, args.k, args.dtype)
    elif args.kernel == "attention":
        t = kernels.attention_kernel(system, eff, args.phase, args.batch, args.heads, args.kv_heads,
                                     args.head_dim, args.seq_len, args.dtype)
    else:
        t = kernels.allreduce_kernel(system, eff, args.bytes, args.gpus)
    print(json.dumps(output.kernel_dict(t, system.name, eff)) if args.json else output.kernel_text(t, system.name, eff))
    return 0


def cmd_list(args) -> int:
    from .specs.hardware import component_kind, list_components
    from .specs.models import list_models
    if args.what == "techniques":
        from .queries import technique_info
        if args.kind:
            raise WhatifError("--kind applies to `whatif list hardware` only")
        infos = technique_info.all_infos()
        print(json.dumps(infos) if args.json else technique_info.list_text(infos))
        return 0
    if args.what == "models":
        if args.kind:
            raise WhatifError("--kind applies to `whatif list hardware` only")
        names = list_models()
        print(json.dumps(names) if args.json else "\n".join(names))
        return 0
    names = list_components(args.kind)
    if args.json:
        print(json.dumps([{"name": n, "kind": component_kind(n)} for n in names]))
    else:
        print(units.table(["name", "kind"], [[n, component_kind(n)] for n in names], right=set()))
    return 0


def _plain(value):
    """A dataclass tree as JSON-ready data (Quantities become {value, unit, provenance, source})."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _quantity_rows(data: dict, prefix: str = "") -> list[list[str]]:
    rows = []
    for key, value in data.items():
        if isinstance(value, dict) and "provenance" in value and "value" in value:
            rows.append([prefix + key, units.quantity(value["value"], value["unit"]), value["provenance"],
                         value["source"]])
        elif isinstance(value, dict) and "name" in value and "kind" not in value and prefix.count(".") < 2:
            rows.append([prefix + key, value["name"], "", ""])
            rows += _quantity_rows({k: v for k, v in value.items() if k != "name"}, prefix + key + ".")
        elif isinstance(value, dict):
            rows += _quantity_rows(value, prefix + key + ".")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                rows += _quantity_rows(item if isinstance(item, dict) else {"": item}, f"{prefix}{key}[{i}].")
        elif value not in (None, ""):
            rows.append([prefix + key, str(value), "", ""])
    return rows


def cmd_show(args) -> int:
    if args.what == "technique":
        from .queries import technique_info
        info = technique_info.info(args.name)
        print(json.dumps(info) if args.json else technique_info.show_text(info))
        return 0
    if args.what == "model":
        from .specs.models import load_model
        m = load_model(args.name)
        data = _plain(m)
        derived = {"total_params": m.total_params(), "active_params_per_token": m.active_params_per_token(),
                   "kv_bytes_per_token_bf16": m.kv_elements_per_token() * 2}
        if args.json:
            print(json.dumps({**data, "derived": derived}))
        else:
            rows = [[k, str(v)] for k, v in data.items() if v not in (None, "")]
            rows += [["total parameters", f"{derived['total_params']:,}"],
                     ["active parameters per token", f"{derived['active_params_per_token']:,}"],
                     ["KV cache per token (bf16)", units.nbytes(derived["kv_bytes_per_token_bf16"])]]
            print(units.table(["field", "value"], rows, right=set()))
        return 0
    from .specs.hardware import load_component
    comp = load_component(args.name, None, "show hardware")
    data = _plain(comp)
    if args.json:
        print(json.dumps(data))
    else:
        print(units.table(["field", "value", "provenance", "source"], _quantity_rows(data), right=set()))
    return 0


def cmd_validate(args) -> int:
    from .validate.cli import cmd_validate as run_validate
    return run_validate(args)


COMMANDS = {"estimate": cmd_estimate, "compare": cmd_compare, "crossover": cmd_crossover, "size-tier": cmd_size_tier,
            "simulate": cmd_simulate, "capacity": cmd_capacity, "report": cmd_report, "demo": cmd_demo,
            "kernel": cmd_kernel, "list": cmd_list, "show": cmd_show, "validate": cmd_validate}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return COMMANDS[args.command](args)
    except WhatifError as exc:
        print(f"whatif: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
