"""A disaggregated row's full prefill step, op group by op group, against aiconfigurator's B200 tables (diagnostic).

    python benchmarks/prefill_step_tables.py [--filter TEXT] [--parts]

prefill_pool_rate.py prices the step one prefill worker runs when its pool is saturated (the prompts its limits pack,
`prompts_per_step`) with whatif's `estimate`; prefill_vs_kernels.py checks one prompt of a row's own layout against the
tables. This prices that full step of the row's prefill layout part by part both ways:
- the MLA module: TensorRT-LLM's whole-module context table (one prompt of the mean length, 128 / attention-TP heads,
  fp8 KV, the row's GEMM format) times the prompts each attention-DP rank runs (prefill_vs_kernels.measured_mla_ms);
- the routed MoE: `moe.parquet`'s flashinfer_trtllm fused layer (the TRTLLM-Gen kernels both engines run) at the
  step's tokens: under attention DP every rank's tokens gathered to every expert rank (TensorRT-LLM's
  AllGatherReduceScatter when moe_tp > 1 or EP <= top-k; SGLang's ScatterMode.FULL), moe_tp = tp / ep; balanced
  and power-law 1.01 routings as a range (the collector's routings, docs/accuracy.md session 65 N: its "balanced"
  puts DeepSeek's grouped top-k picks on half the experts, so an EP range is wide); beyond the table's 16,384 tokens
  extended along its last two points (the kernel is compute-bound there: 8,192 -> 16,384 tokens doubles its time);
- the MoE's collectives: NCCL's measured all-gather + reduce-scatter of the 16-bit hidden states (TensorRT-LLM
  under attention DP), two all-reduces of the gathered tokens (SGLang's SUM_LEN dp_gather and combine in a prefill
  step, dp_attention.py get_dp_padding_mode), or the engine's two all-reduces a layer without attention DP;
- the rest (norms, dense layers, shared experts, head) at whatif's price;
next to the step the measured served rate implies where the pool saturated: k / X (X per prefill worker, Little's
law, serving_signatures.served_per_s), and the requests in the prefill stage, X x measured TTFT (>> k: saturated).
Nothing here feeds a prediction. `--parts` prints each row's groups.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from prefill_pool_rate import TABLE, prompts_per_step   # noqa: E402
from prefill_vs_kernels import (DEFAULT_ROOT, GEMM_TYPES, HIDDEN, interp, measured_allreduce_ms,  # noqa: E402
                                measured_mla_ms, measured_moe_ms, op_group)
from serving_signatures import SA_BENCH_MEAN_OUTPUT, served_per_s   # noqa: E402

MOE_LAYERS, LAYERS = 58, 61   # DeepSeek-V3/R1: 3 dense layers, then MoE
COMM_OPS = ("moe_gather", "moe_scatter", "moe_dispatch", "moe_combine", "attn_allreduce", "mlp_allreduce")
PARTS = ("mla module", "routed moe", "moe comm", "shared expert", "rest")


def step_tokens(prompts: int, prompt: int) -> int:
    """Rows the routed experts see in a step: every prompt's tokens (attention DP gathers all ranks' tokens to every
    expert rank; without it the TP group holds them all)."""
    return prompts * prompt


def moe_table_ms(root: Path, tokens: int, moe_tp: int, ep: int, dtype: str) -> tuple[float, float]:
    """(lower, upper) of the fused MoE layer's measured ms at `tokens` over the balanced and power-law routings,
    extended past the table's last rows along its last two."""
    out = measured_moe_ms(root, tokens, moe_tp, ep, dtype, extend=True).values()
    return min(out), max(out)


def nccl_ms(root: Path, op: str, gpus: int, nbytes: float) -> float:
    """NCCL's measured `op` (all_gather, reduce_scatter, all_reduce) over `gpus` B200s at `nbytes` of 16-bit data,
    log-log interpolated (message_size counts elements)."""
    import pandas as pd
    d = pd.read_parquet(root / "comm.parquet")
    d = d[(d.gpu == "b200_sxm") & (d.framework == "nccl") & (d.op_name == op) & (d.num_gpus == gpus)
          & (d.nccl_dtype == "half")]
    med = d.groupby("message_size").latency_ms.median()
    return math.exp(interp([(math.log(m * 2.0), math.log(t)) for m, t in med.items()], math.log(nbytes),
                           extend=True))


def comm_table_ms(root: Path, engine: str, tp: int, ranks: int, tokens: int) -> float:
    """One MoE layer's collectives at `tokens` gathered rows (see the module docstring)."""
    nbytes = tokens * HIDDEN * 2.0
    if ranks > 1 and engine == "sglang":
        return 2 * nccl_ms(root, "all_reduce", tp, nbytes)
    if ranks > 1:
        return nccl_ms(root, "all_gather", tp, nbytes) + nccl_ms(root, "reduce_scatter", tp, nbytes)
    return 2 * (measured_allreduce_ms(root, engine, tp, nbytes) or nccl_ms(root, "all_reduce", tp, nbytes))


def whatif_parts(row: dict, lay: dict, prompts: int, prompt: int, budget: int) -> tuple[dict, float]:
    """whatif's step of `prompts` prompts on the prefill layout: seconds by part (all passes) and its launches."""
    from step_ops import row_estimate, summed
    gpus = lay["tp"] * lay["pp"]
    est = row_estimate(row, batch=prompts, prompt=prompt, output=2, prefill_chunk=budget, tp=lay["tp"], pp=lay["pp"],
                       ep=lay.get("ep", 1), attention_dp=lay.get("attention_dp", 1), gpus=gpus, nodes=-(-gpus // 8))
    parts = dict.fromkeys(PARTS, 0.0)
    for p, n in est.prefill:
        for name, s in summed(p.op_times).items():
            group = "moe comm" if name in COMM_OPS else op_group(name)
            parts[group if group in parts else "rest"] += s.total_s * n
    return parts, sum(p.launch_s * n for p, n in est.prefill)


def table_parts(root: Path, row: dict, lay: dict, prompts: int, prompt: int, whatif: dict) -> dict:
    """(lower, upper) seconds by part from the tables; whatif's price where no table measures the part."""
    ranks, tp, ep = lay.get("attention_dp", 1), lay["tp"], lay.get("ep", 1)
    gemm = GEMM_TYPES.get(row["gemm_quant_mode"], "fp8_block")
    tokens = step_tokens(prompts, prompt)
    mla = measured_mla_ms(root, 128 // (tp // ranks), prompt, gemm)
    per_rank = max(1, prompts // ranks)
    lo, hi = moe_table_ms(root, tokens, tp // ep, ep, GEMM_TYPES.get(row["moe_quant_mode"], gemm))
    comm = comm_table_ms(root, row["backend"], tp, ranks, tokens)
    out = {g: (s, s) for g, s in whatif.items()}
    if mla is not None:
        out["mla module"] = (mla * per_rank * LAYERS / 1e3,) * 2
    out["routed moe"] = (lo * MOE_LAYERS / 1e3, hi * MOE_LAYERS / 1e3)
    out["moe comm"] = (comm * MOE_LAYERS / 1e3,) * 2
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="_disagg_", help="rows whose id contains this text (default: _disagg_)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    ap.add_argument("--parts", action="store_true", help="print each row's parts, whatif vs the tables")
    args = ap.parse_args(argv)
    import serving_reference as sr
    rows = {r["id"]: r for r in sr.load()}
    with open(TABLE, newline="") as f:
        scored = [t for t in csv.DictReader(f) if args.filter in t["id"] and t["mode"] == "disagg"
                  and t["predicted_ttft_ms"] not in ("", "nan") and t["scored"] == "1"
                  and t["system"] == "b200_sxm" and "deepseek" in t["model"].lower()]
    print(f"{'row':50} {'prefill':>10} {'k':>3} {'whatif ms':>9} {'tables ms':>11} {'implied':>8} {'in pool':>7}")
    for t in sorted(scored, key=lambda t: (t["engine"], t["gemm_quant"], int(t["isl"]), t["id"])):
        row = rows[t["id"]]
        lay, pool = sr._layout(row, "prefill_"), sr.prefill_pool(row)
        ranks = lay.get("attention_dp", 1)
        prompt = round(int(row["isl"]) * SA_BENCH_MEAN_OUTPUT)   # db-dump rows: lengths uniform in [0.8 L, L]
        k = prompts_per_step(ranks, pool["prefill_max_batch"], pool["prefill_token_budget"], prompt,
                             row["backend"] == "sglang")
        whatif, launch = whatif_parts(row, lay, k, prompt, pool["prefill_token_budget"])
        tables = table_parts(args.root, row, lay, k, prompt, whatif)
        x = served_per_s(sr.concurrency(row), float(t["measured_ttft_ms"]), float(t["measured_tpot_ms"]),
                         int(row["osl"]) * SA_BENCH_MEAN_OUTPUT) / int(float(row["prefill_num_workers"]))
        lo, hi = (sum(v[i] for v in tables.values()) * 1e3 for i in (0, 1))
        shown = f"{lo:.0f}" if hi - lo < 0.5 else f"{lo:.0f}-{hi:.0f}"
        name = f"tp{lay['tp']}/a{ranks}/e{lay.get('ep', 1)}"
        print(f"{t['id'][:50]:50} {name:>10} {k:3d} {sum(whatif.values()) * 1e3:9.0f} {shown:>11} "
              f"{k / x * 1e3:8.0f} {x * float(t['measured_ttft_ms']) / 1e3:7.1f}", flush=True)
        if args.parts:
            for g in PARTS:
                a, b = tables[g]
                print(f"    {g:14} whatif {whatif[g] * 1e3:7.1f}  tables {a * 1e3:7.1f}"
                      + (f"-{b * 1e3:.1f}" if b - a > 5e-4 else ""))
            print(f"    (whatif's host launches {launch * 1e3:.1f} ms, hidden behind its GPU time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
