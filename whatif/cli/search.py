"""`whatif search`: which deployment of a model on a pool of GPUs serves the most tokens per GPU within the
TTFT/TPOT targets (Pareto frontier, best configuration, rejection reasons); see whatif/search/."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

from ..errors import WhatifError, check_mapping, shown
from ..specs.checks import MAX_GPUS, MAX_REQUESTS, MAX_TOKENS, flag_int, flag_seconds, implausible_slo, int_list
from .sim_flags import warn
from .progress import ProgressLine, add_progress_flag
from .reporting import add_report_flag, start_report, write_report
from .scenario_flags import spellings

# keys of a search file (--scenario): api.search's arguments, the SLO as a section
FILE_KEYS = {"model", "hardware", "gpus", "nodes", "prompt", "output", "slo", "tp", "pp", "ep", "dp_attention",
             "batches",
             "weight_dtypes",
             "quantizations", "kv_dtypes", "techniques", "modes", "prefill_chunks", "prefill_chunk", "efficiency",
             "kv_link", "objective", "engine", "prefill_recompile_s"}
SLO_KEYS = {"ttft", "tpot", "e2e"}


def _names(text: str, flag: str) -> list[str]:
    parts = [x.strip() for x in text.split(",")]
    if not text.strip() or not all(parts):
        raise WhatifError(f"{flag}: {shown(text)} must be comma-separated names, none empty")
    return parts


def add_search_parser(p) -> None:
    p.description = ("Enumerate deployments of a model on a pool of GPUs, price each with the roofline estimate, and "
                     "report the Pareto frontier of tokens/s per GPU against tokens/s per user, the best "
                     "configuration meeting the SLOs and why the others were rejected.")
    p.add_argument("--scenario", metavar="FILE", help="search YAML (keys: " + ", ".join(sorted(FILE_KEYS)) +
                   "; slo: {ttft, tpot, e2e}); flags override it")
    p.add_argument("--model", help="model profile name or config path")
    p.add_argument("--hardware", help="system or GPU types of the pool, comma-separated (e.g. dgx-h100,hgx-h200)")
    p.add_argument("--gpus", type=flag_int(1, MAX_GPUS, "GPUs"), help="GPU budget: the most GPUs a deployment may use")
    p.add_argument("--nodes", type=flag_int(1, MAX_GPUS, "nodes"),
                   help="each --hardware is N of that node profile (dgx-h100, hgx-h200, dgx-b200, hgx-b300) joined "
                        "by its NICs: the GPU budget a system holds follows, wide-EP layouts may span nodes")
    p.add_argument(*spellings("prompt"), dest="prompt", type=flag_int(1, MAX_TOKENS, "tokens"),
                   help="input tokens per request (default 4000)")
    p.add_argument(*spellings("output"), dest="output", type=flag_int(1, MAX_TOKENS, "tokens"),
                   help="output tokens per request (default 1000)")
    p.add_argument("--slo-ttft", type=flag_seconds, metavar="TIME",
                   help="time to first token target with its unit: 500ms, 0.5s (a bare number is refused)")
    p.add_argument("--slo-tpot", type=flag_seconds, metavar="TIME",
                   help="time per output token target with its unit: 50ms (a bare number is refused)")
    p.add_argument("--slo-e2e", "--slo-e2el", dest="slo_e2e", type=flag_seconds, metavar="TIME",
                   help="end-to-end latency (vLLM's E2EL) target with its unit: 2min, 90s")
    s = p.add_argument_group("space")
    s.add_argument(*spellings("tp"), dest="tp",
                   help="TP sizes to try, comma-separated (default: powers of two up to a node)")
    s.add_argument(*spellings("pp"), dest="pp",
                   help="PP sizes to try (default: powers of two up to a node)")
    s.add_argument(*spellings("ep"), dest="ep",
                   help="MoE: EP sizes to try, comma-separated; each expert split over tp / ep GPUs (default: every "
                        "power of two dividing the TP size)")
    s.add_argument("--dp-attention", dest="dp_attention", metavar="LIST",
                   help="MoE: attention-DP rank counts to try, comma-separated, 1 = off (default: off and one rank per "
                        "GPU at every EP, and every power of two between where EP = TP)")
    s.add_argument("--batches", help="max running sequences per replica to try (default 1,2,4,...,256)")
    s.add_argument("--weight-dtypes", help="weight formats to try, e.g. bf16,fp8 (default bf16)")
    s.add_argument("--quantizations", metavar="LIST",
                   help="quantization schemes to try as the engines name them (fp8, fp8-block, nvfp4, mxfp4, awq, "
                        "gptq, w8a16; none: the --weight-dtypes), e.g. none,fp8 (default: the --weight-dtypes)")
    s.add_argument("--kv-dtypes", help="KV cache formats to try, e.g. bf16,fp8 (default: as estimate prices it, the "
                   "checkpoint's declared KV dtype where --engine reads it, e.g. a ModelOpt kv_cache_quant_algo FP8; "
                   "else bf16)")
    s.add_argument("--technique", action="append", default=None, metavar="SET",
                   help="a technique set to try besides none, e.g. kivi or int4+kivi (repeatable)")
    s.add_argument("--modes", help="aggregated, disaggregated or both (default both)")
    s.add_argument("--prefill-chunks", metavar="LIST",
                   help="tokens per prefill pass to try, comma-separated, e.g. 2048,8192 (default 8192)")
    s.add_argument("--prefill-chunk", type=flag_int(1, MAX_TOKENS, "tokens"), metavar="N",
                   help="one prefill chunk size (the same as --prefill-chunks N)")
    s.add_argument("--efficiency", choices=("ideal", "default", "calibrated"),
                   help="efficiency source (default: default)")
    s.add_argument("--engine", help="the serving engine every replica runs: vllm, sglang, trtllm or a release "
                   "profile (default vllm): its loop, memory accounting, limits and kernels")
    s.add_argument("--kv-link", help="link between disaggregated pools (default: the system's GPU link in a node)")
    s.add_argument("--prefill-recompile-s", type=float, metavar="S",
                   help="host seconds a prefill step pays the first time a server runs its token count (a kernel "
                   "built per count, the simulator's engine setting): --simulate-top runs it; the steady state pays "
                   "none (config_search/recompile.py)")
    s.add_argument("--objective", choices=("tok_s_per_gpu", "tok_s"),
                   help="what best maximizes: tok_s_per_gpu (default) or tok_s")
    r = p.add_argument_group("run and output")
    r.add_argument("--backend", default="process", choices=("process", "ray"),
                   help="process (default) or ray (pip install 'whatif[ray]')")
    r.add_argument("--address", help="Ray cluster address (default: a local Ray)")
    r.add_argument("--jobs", type=flag_int(1, 1024, "processes"), metavar="N",
                   help="worker processes pricing the space with --backend process, and running --simulate-top's "
                        "capacity searches (default: the CPUs this process may use; a small space stays in one "
                        "process)")
    r.add_argument("--prune", action="store_true",
                   help="skip pricing batches whose configurations can be neither on the frontier nor among the "
                        "best (the same frontier and best, fewer rows in --csv; docs/search.md)")
    r.add_argument("--simulate-top", type=flag_int(0, 1000, "configurations"), default=0, metavar="K",
                   help="re-check in the serving simulator the K best of each mode (aggregated, disaggregated) and "
                        "every frontier row shown; the best is then the highest simulated goodput")
    r.add_argument("--sim-requests", type=flag_int(1, MAX_REQUESTS, "requests"), metavar="N",
                   help="requests per re-check run (default 300, and at least 3x the sequences a deployment "
                        "runs at once)")
    r.add_argument("--json", action="store_true", help="print one JSON object (frontier, best, rejections)")
    r.add_argument("--serve-command", action="store_true",
                   help="print the best configuration's launch command(s) for the --engine it priced (vllm "
                        "serve, sglang.launch_server, trtllm-serve; disaggregated pools as one command each) and the "
                        "benchmark command that would check it; with --json, a serve_command object on the best and "
                        "every frontier configuration")
    r.add_argument("--csv", metavar="FILE", help="write every configuration to a CSV file")
    r.add_argument("--parquet", metavar="FILE", help="write every configuration to a Parquet file (pyarrow)")
    add_report_flag(r)
    add_progress_flag(r)


def _file_values(path: str | None) -> dict:
    if path is None:
        return {}
    from pathlib import Path

    from ..specs.profiles import read_yaml
    data = read_yaml(Path(path))
    check_mapping(data, FILE_KEYS, Path(path).name)
    values = {k: v for k, v in data.items() if k != "slo"}
    slo = check_mapping(data.get("slo") or {}, SLO_KEYS, f"{Path(path).name}.slo")
    values.update({k: v for k, v in slo.items() if v is not None})
    for key in ("hardware", "modes", "weight_dtypes", "quantizations", "kv_dtypes", "techniques"):
        if isinstance(values.get(key), str):
            values[key] = _names(values[key], f"{Path(path).name}.{key}")
    for key, high in (("tp", MAX_GPUS), ("pp", MAX_GPUS), ("ep", MAX_GPUS), ("dp_attention", MAX_GPUS),
                      ("batches", MAX_REQUESTS),
                      ("prefill_chunks", MAX_TOKENS)):
        if isinstance(values.get(key), str):       # "2048,8192", as the flag takes it
            values[key] = int_list(values[key], f"{Path(path).name}.{key}", high)
        elif isinstance(values.get(key), int) and not isinstance(values[key], bool):
            values[key] = [values[key]]
    return values


def search_kwargs(args) -> dict:
    """api.search's arguments from the file, then the flags over it."""
    values = _file_values(args.scenario)
    flags = {"model": args.model, "gpus": args.gpus, "nodes": args.nodes, "prompt": args.prompt, "output": args.output,
             "ttft": args.slo_ttft, "tpot": args.slo_tpot, "e2e": args.slo_e2e,
             "efficiency": args.efficiency, "kv_link": args.kv_link, "objective": args.objective,
             "techniques": args.technique, "engine": args.engine, "prefill_recompile_s": args.prefill_recompile_s}
    for name, key in (("TTFT", "ttft"), ("TPOT", "tpot"), ("E2E", "e2e")):
        warn(implausible_slo(name, flags[key], f"--slo-{key}"))
    for key, text, flag in (("hardware", args.hardware, "--hardware"), ("weight_dtypes", args.weight_dtypes,
                            "--weight-dtypes"), ("kv_dtypes", args.kv_dtypes, "--kv-dtypes"),
                            ("quantizations", args.quantizations, "--quantizations"), ("modes", args.modes,
                            "--modes")):
        flags[key] = _names(text, flag) if text is not None else None
    for key, text, flag, high in (("tp", args.tp, "--tp", MAX_GPUS), ("pp", args.pp, "--pp", MAX_GPUS),
                                  ("ep", args.ep, "--ep", MAX_GPUS),
                                  ("dp_attention", args.dp_attention, "--dp-attention", MAX_GPUS),
                                  ("batches", args.batches, "--batches", MAX_REQUESTS),
                                  ("prefill_chunks", args.prefill_chunks, "--prefill-chunks", MAX_TOKENS)):
        flags[key] = int_list(text, flag, high) if text is not None else None
    if args.prefill_chunk is not None:
        if args.prefill_chunks is not None:
            raise WhatifError("--prefill-chunk: give it or --prefill-chunks, not both")
        flags["prefill_chunks"] = [args.prefill_chunk]
    if args.technique is not None and not all(t.strip() for t in args.technique):
        raise WhatifError("--technique: an empty technique set; name one, e.g. kivi or int4+kivi")
    values.update({k: v for k, v in flags.items() if v is not None})
    if "modes" in values:   # `both` (the flag's help and default), from the file or the flag
        from ..config_search.space import expand_modes
        values["modes"] = expand_modes(values["modes"])
    if flags["prefill_chunks"] is not None:
        values.pop("prefill_chunk", None)     # the flags replace the file's chunk, in either form
    for key, flag in (("model", "--model"), ("hardware", "--hardware"), ("gpus", "--gpus")):
        if key not in values:
            raise WhatifError(f"whatif search needs {flag} (or `{key}:` in --scenario)")
    return values


class SearchProgress(ProgressLine):
    """progress(done, total) of the replica setups priced, with an ETA (progress.py draws the line)."""

    def __init__(self, stream=sys.stderr, clock=time.monotonic):
        super().__init__(stream, clock=clock)

    def text(self, done: int, total: int, elapsed: float) -> str:
        eta = elapsed / done * (total - done) if done else float("nan")
        return f"{done}/{total} replica setups, {elapsed:.0f} s, ETA {eta:.0f} s"


def _with_serve(result) -> dict:
    """The result's JSON with each printed configuration's launch and benchmark commands."""
    from ..queries.deployment import from_search
    from ..queries.serve_command import serve_dict
    out = result.to_dict()
    if result.best is not None:
        out["best"]["serve_command"] = serve_dict(*_best_deployment(result))
    for row, config in zip(out["frontier"], result.frontier):
        row["serve_command"] = serve_dict(*from_search(result.space, config))
    return out


def _best_serve_text(result) -> str:
    from ..queries.serve_command import serve_text
    if result.best is None:
        return "\n\n# --serve-command: no configuration meets the SLOs, so none to launch"
    return f"\n\n# the best configuration: {result.best.label()}\n" + serve_text(*_best_deployment(result))


def _best_deployment(result):
    """(Deployment, Load) of the best configuration; its check names the re-check's goodput where one ran (the
    simulator served the same Poisson traffic)."""
    from ..queries.deployment import from_search
    best = result.best
    d, load = from_search(result.space, best)
    top = result.best_recheck() if result.rechecked else None
    if top is not None and top["config"] is best and load.rate is not None:
        load = replace(load, claim=load.claim + f"; the simulator's re-check held the targets up to "
                                                f"{top['goodput_req_s']:.3g} req/s")
    return d, load


def _refuse_an_all_invalid_space(result) -> None:
    """Every configuration invalid (`--tp 3` for 32 heads) is the user's flags ruling the space out, not an
    answer: a one-line error with the commonest reason, exit 2, where it was 'no configuration meets the SLOs'."""
    from collections import Counter

    from ..config_search.configs import INVALID
    if result.configs and all(c.status == INVALID for c in result.configs):
        reason = Counter(c.reason.removeprefix("invalid: ") for c in result.configs).most_common(1)[0][0]
        raise WhatifError(f"search: all {len(result.configs):,} configurations are invalid: {reason}")


def cmd_search(args) -> int:
    from ..api import search
    kwargs = search_kwargs(args)
    start_report(args.report)
    if args.parquet:
        import importlib.util
        if importlib.util.find_spec("pyarrow") is None:
            raise WhatifError("--parquet needs the pyarrow package: pip install 'whatif[parquet]'")
    bar = None if args.no_progress or not sys.stderr.isatty() else SearchProgress()
    try:
        result = search(**kwargs, backend=args.backend, address=args.address, jobs=args.jobs, prune=args.prune,
                        simulate_top=args.simulate_top, sim_requests=args.sim_requests, progress=bar)
    finally:
        if bar is not None:
            bar.clear()
    _refuse_an_all_invalid_space(result)
    if args.csv:
        result.write_csv(args.csv)
    if args.parquet:
        result.write_parquet(args.parquet)
    if args.json:
        print(json.dumps(_with_serve(result) if args.serve_command else result.to_dict(), default=str,
                         allow_nan=False))
    else:
        print(result.text() + (_best_serve_text(result) if args.serve_command else ""))
    for flag, path in (("--csv", args.csv), ("--parquet", args.parquet)):
        if path:
            print(f"{flag}: wrote {path} ({len(result.configs):,} rows, one per configuration)", file=sys.stderr)
    if args.report:
        from ..reports.search import search_page
        write_report(search_page(result), args.report)
    return 0
