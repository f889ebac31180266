"""`whatif estimate` (one scenario: TTFT, TPOT, throughput, memory, per-op tables) and `whatif kernel`
(one kernel's prediction)."""
from __future__ import annotations

import sys

from ..errors import WhatifError
from ..specs.checks import MAX_BATCH, MAX_HEADS, MAX_PARALLEL, MAX_TOKENS, MAX_WIDTH, flag_int
from ..specs import units
from .common import add_explain_flag
from .result_rows import ESTIMATE_COLUMNS, KERNEL_COLUMNS, estimate_row, kernel_row
from .reporting import add_report_flag, start_report, write_report
from .scenario_flags import add_hardware_flags, add_scenario_flags, scenario_from_args
from .tables import add_table_flags, start_tables, write_tables


def add_estimate_parser(est) -> None:
    add_scenario_flags(est)
    est.add_argument("--no-ops", action="store_true", help="omit the per-op tables from text output")
    add_serve_command_flag(est, "estimate")
    add_explain_flag(est)
    add_report_flag(est)
    add_table_flags(est)


MAX_GEMM_DIM = 1 << 24            # a GEMM dimension: 16.8 M rows (tokens x batch) is beyond any real pass
MAX_MESSAGE_BYTES = 1 << 44       # 17.6 TB: more than the memory of any node
_ATTENTION_BOUNDS = {"batch": MAX_BATCH, "heads": MAX_HEADS, "kv-heads": MAX_HEADS, "head-dim": MAX_WIDTH,
                     "seq-len": MAX_TOKENS}


def add_kernel_parser(ker) -> None:
    ksub = ker.add_subparsers(dest="kernel", parser_class=type(ker))
    g = ksub.add_parser("gemm", help="C[m,n] = A[m,k] @ B[k,n]")
    for f, text in (("m", "rows of A and C: the tokens in the batch"), ("n", "columns of B and C: output features"),
                    ("k", "inner dimension: input features")):
        g.add_argument(f"--{f}", type=flag_int(1, MAX_GEMM_DIM), required=True, help=f"{text} (<= {MAX_GEMM_DIM:,})")
    g.add_argument("--dtype", default="bf16", help="operand dtype, e.g. bf16, fp16, fp8, int8 (default bf16)")
    add_hardware_flags(g)
    add_explain_flag(g)
    add_table_flags(g)
    a = ksub.add_parser("attention", help="FlashAttention prefill or decode attention over a KV cache")
    a.add_argument("--phase", choices=("prefill", "decode"), required=True)
    for f, text in (("batch", "sequences"), ("heads", "query heads"),
                    ("kv-heads", "KV heads (GQA: fewer than --heads)"), ("head-dim", "dimension of one head"),
                    ("seq-len", "tokens per sequence: the prompt (prefill) or the cached context (decode)")):
        a.add_argument(f"--{f}", type=flag_int(1, _ATTENTION_BOUNDS[f]), required=True, help=text)
    a.add_argument("--dtype", default="bf16", help="activation and KV dtype, e.g. bf16, fp16, fp8 (default bf16)")
    add_hardware_flags(a)
    add_explain_flag(a)
    add_table_flags(a)
    r = ksub.add_parser("allreduce", help="ring all-reduce over the system's GPU interconnect")
    r.add_argument("--bytes", type=flag_int(1, MAX_MESSAGE_BYTES, "bytes"), required=True,
                   help="message size per GPU, bytes")
    r.add_argument("--gpus", type=flag_int(1, MAX_PARALLEL, "GPUs"), required=True,
                   help="GPUs taking part (at most the system's)")
    add_hardware_flags(r)
    add_explain_flag(r)
    add_table_flags(r)


def cmd_estimate(args) -> int:
    start_report(args.report)
    start_tables(args)
    scenario = scenario_from_args(args)
    if args.scenario:   # (the simulator's flag table, sim_flags.py, only for a file's simulator sections)
        from .sim_flags import check_file_sections
        check_file_sections(scenario, args.scenario)
    est = scenario.run()
    warn_stored_format(scenario)   # (before a does-not-fit: the stored format may fit)
    check_fits(est)
    warn_idle_shared_prefix(est.workload.shared_prefix, [est.techniques])
    for line in est.techniques.warnings(est.model, est.workload.prompt, est.workload.output):
        print(f"whatif: warning: {line}", file=sys.stderr)
    from ..reports.output import estimate_dict, estimate_text   # (when run: building the parser stays light)
    serve = None
    if args.serve_command:
        from ..queries.deployment import from_estimate
        serve = serve_command(*from_estimate(scenario), args.json)
    if args.json:
        import json   # (--json alone: a text estimate's cold start skips it)
        print(json.dumps({**estimate_dict(est), **({"serve_command": serve} if serve else {})}, allow_nan=False))
    else:
        text = estimate_text(est, show_ops=not args.no_ops, explain=args.explain, asked=getattr(args, "model", None))
        print(text + (f"\n\n{serve}" if serve else ""))
    write_tables(args, [estimate_row(est)], ESTIMATE_COLUMNS)
    if args.report:
        from ..reports.build import estimate_page
        write_report(estimate_page(scenario, est), args.report)
    return 0


def add_serve_command_flag(p, what: str) -> None:
    p.add_argument("--serve-command", action="store_true",
                   help=f"print the engine's launch command for this {what} (vllm serve, python -m "
                        "sglang.launch_server or trtllm-serve, by --engine; disaggregated pools as one command each) "
                        "and the benchmark command that would check the prediction (vllm bench serve, "
                        "sglang.bench_serving); with --json, a serve_command object")


def serve_command(deployment, load, as_json: bool):
    """The launch and benchmark commands: text, or a dict for --json."""
    from ..queries.serve_command import serve_dict, serve_text
    return serve_dict(deployment, load) if as_json else serve_text(deployment, load)


def warn_stored_format(scenario) -> None:
    """A profile name prices its precision flags (16-bit by default) where the published checkpoint it stands for
    is stored in another format (gpt-oss-120b: MXFP4 experts, 3.6x fewer weight bytes): say so on stderr, as
    --serve-command's '#' line does, so a user who typed the name does not read a 16-bit answer as the model's."""
    from ..specs.stored_format import model_id, stored_format_note
    prec = scenario.precision
    if prec.per_module:
        return
    for line in stored_format_note(scenario.model, model_id(scenario.model), prec.quantization, prec.weight):
        line = line.removeprefix("# ").replace("prices what this launches", "prices the checkpoint as stored")
        print(f"whatif: note: {line}", file=sys.stderr)


def warn_idle_shared_prefix(shared_prefix: int, technique_sets) -> None:
    """--shared-prefix changes nothing unless a technique stores the prefix once: say so on stderr."""
    if not shared_prefix or any(t.shares_prefix for t in technique_sets):
        return
    from ..roofline.techniques.registry import all_techniques
    sharers = ", ".join(name for name, cls in all_techniques().items() if cls.shares_prefix)
    print(f"whatif: warning: --shared-prefix {shared_prefix} changes nothing here: no technique shares the prefix; "
          f"add one ({sharers}), e.g. --technique prefix_caching", file=sys.stderr)


def check_fits(est) -> None:
    """A scenario that overfills tiers is an error naming each tier over, by how much, and what to try."""
    from ..roofline.overflow_text import tiers_over
    m = est.memory
    over = m.overflow()
    if not over:
        return
    raise WhatifError(
        f"{est.model.name} does not fit on {est.system.name} with tp={est.parallel.tp} pp={est.parallel.pp}: "
        f"{tiers_over(over)} (weights {units.nbytes(m.weights_bytes)}, KV {units.nbytes(m.kv_cache_bytes)}, "
        f"activations {units.nbytes(m.activation_bytes)} in all tiers); "
        f"try more GPUs (--tp/--pp), a smaller --weight-dtype/--kv-dtype, a KV technique "
        f"(`whatif list techniques`), offloading (--place) or a smaller --batch (max batch here: {est.max_batch})")


def cmd_kernel(args) -> int:
    from ..roofline import kernels
    from ..roofline.efficiency import efficiency_source, load_efficiency
    from ..roofline.engines import DEFAULT_ENGINE
    from ..scenario import DEFAULT_HARDWARE
    from ..specs.hardware import load_system
    if args.kernel is None:
        raise WhatifError("whatif kernel: name a kernel; valid: gemm, attention, allreduce")
    start_tables(args)
    hw = args.hardware or DEFAULT_HARDWARE
    system = load_system(hw, args.gpus if args.kernel == "allreduce" else None)   # --gpus <= the system's
    eff = load_efficiency(efficiency_source(args.efficiency, args.calibration), system.gpu, args.calibration,
                          args.engine or DEFAULT_ENGINE)
    if args.kernel == "gemm":
        t = kernels.gemm_kernel(system, eff, args.m, args.n, args.k, args.dtype)
    elif args.kernel == "attention":
        t = kernels.attention_kernel(system, eff, args.phase, args.batch, args.heads, args.kv_heads,
                                     args.head_dim, args.seq_len, args.dtype)
    else:
        t = kernels.allreduce_kernel(system, eff, args.bytes, args.gpus)
    from ..reports.output import kernel_dict, kernel_text   # (when run: building the parser stays light)
    import json
    print(json.dumps(kernel_dict(t, system.name, eff), allow_nan=False) if args.json
          else kernel_text(t, system.name, eff, args.explain))
    write_tables(args, [kernel_row(t, system.name, eff)], KERNEL_COLUMNS)
    return 0
