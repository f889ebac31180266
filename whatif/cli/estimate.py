"""`whatif estimate` (one scenario: TTFT, TPOT, throughput, memory, per-op tables) and `whatif kernel`
(one kernel's prediction)."""
from __future__ import annotations

import json

from ..errors import WhatifError
from ..specs import units
from .output import estimate_dict, estimate_text, kernel_dict, kernel_text
from .reporting import add_report_flag, start_report, write_report
from .scenario_flags import add_hardware_flags, add_scenario_flags, scenario_from_args


def add_estimate_parser(sub) -> None:
    est = sub.add_parser("estimate", help="TTFT, TPOT, throughput, memory and per-op tables for a scenario")
    add_scenario_flags(est)
    est.add_argument("--no-ops", action="store_true", help="omit the per-op tables from text output")
    add_report_flag(est)


def add_kernel_parser(sub, parser_class) -> None:
    ker = sub.add_parser("kernel", help="single-kernel predictions")
    ksub = ker.add_subparsers(dest="kernel", parser_class=parser_class)
    g = ksub.add_parser("gemm", help="C[m,n] = A[m,k] @ B[k,n]")
    for f in ("m", "n", "k"):
        g.add_argument(f"--{f}", type=int, required=True)
    g.add_argument("--dtype", default="bf16")
    add_hardware_flags(g)
    a = ksub.add_parser("attention", help="FlashAttention prefill or decode attention over a KV cache")
    a.add_argument("--phase", choices=("prefill", "decode"), required=True)
    for f in ("batch", "heads", "kv-heads", "head-dim", "seq-len"):
        a.add_argument(f"--{f}", type=int, required=True)
    a.add_argument("--dtype", default="bf16")
    add_hardware_flags(a)
    r = ksub.add_parser("allreduce", help="ring all-reduce over the system's GPU interconnect")
    r.add_argument("--bytes", type=int, required=True)
    r.add_argument("--gpus", type=int, required=True)
    add_hardware_flags(r)


def cmd_estimate(args) -> int:
    start_report(args.report)
    scenario = scenario_from_args(args)
    est = scenario.run()
    check_fits(est)
    if args.json:
        print(json.dumps(estimate_dict(est)))
    else:
        print(estimate_text(est, show_ops=not args.no_ops))
    if args.report:
        from ..reports.build import estimate_page
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


def cmd_kernel(args) -> int:
    from ..roofline import kernels
    from ..roofline.efficiency import load_efficiency
    from ..roofline.engines import DEFAULT_ENGINE
    from ..scenario import DEFAULT_HARDWARE
    from ..specs.hardware import load_system
    if args.kernel is None:
        raise WhatifError("whatif kernel: name a kernel; valid: gemm, attention, allreduce")
    hw = args.hardware or DEFAULT_HARDWARE
    system = load_system(hw, args.gpus if args.kernel == "allreduce" else None)   # --gpus <= the system's
    eff = load_efficiency(args.efficiency or "default", system.gpu, args.calibration, args.engine or DEFAULT_ENGINE)
    if args.kernel == "gemm":
        t = kernels.gemm_kernel(system, eff, args.m, args.n, args.k, args.dtype)
    elif args.kernel == "attention":
        t = kernels.attention_kernel(system, eff, args.phase, args.batch, args.heads, args.kv_heads,
                                     args.head_dim, args.seq_len, args.dtype)
    else:
        t = kernels.allreduce_kernel(system, eff, args.bytes, args.gpus)
    print(json.dumps(kernel_dict(t, system.name, eff)) if args.json else kernel_text(t, system.name, eff))
    return 0
