"""The flags that describe one scenario (model, hardware, parallelism, precision, workload, efficiency,
techniques, memory tiers), shared by estimate, compare, crossover, size-tier, simulate, capacity and report,
and the Scenario they build."""
from __future__ import annotations

from ..roofline.efficiency import SOURCES
from ..roofline.engines import DEFAULT_ENGINE, ENGINES


def add_hardware_flags(p):
    """--hardware, the efficiency model and --json: what every prediction needs, kernels included."""
    from ..scenario import DEFAULT_HARDWARE
    p.add_argument("--hardware", default=None,
                   help=f"GPU or system profile name, or a YAML path (default {DEFAULT_HARDWARE})")
    p.add_argument("--efficiency", choices=SOURCES, default=None, help="efficiency source (default: default)")
    p.add_argument("--calibration", default=None, help="calibration file for --efficiency calibrated")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help=f"serving engine whose measured kernels the default efficiency was fitted on "
                        f"(default {DEFAULT_ENGINE})")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_scenario_flags(p):
    """The flags that describe one scenario (estimate and compare share them)."""
    p.add_argument("--scenario", help="scenario YAML (flags given here override it)")
    p.add_argument("--model", help="model profile name or path to a YAML / Hugging Face config.json")
    add_hardware_flags(p)
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


def scenario_from_args(args):
    """The Scenario of the --scenario file (if any) with the flags given over it."""
    from ..scenario import build_scenario, scenario_from_yaml
    top, sections = scenario_from_yaml(args.scenario) if args.scenario else ({}, {})
    sections = {k: dict(v) for k, v in sections.items()}
    for key, value in (("model", args.model), ("hardware", args.hardware), ("gpus", args.gpus),
                       ("efficiency", args.efficiency), ("calibration", args.calibration),
                       ("kernel_engine", args.engine),
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
    sections["precision"] = _precision(args, sections.get("precision", {}))
    return build_scenario(top, sections)


def _precision(args, prec: dict) -> dict:
    """The precision: section with --dtype, --weight-dtype, --kv-dtype and --weight-group-size over it."""
    if args.dtype:
        from ..roofline.config import Precision
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
    return prec
