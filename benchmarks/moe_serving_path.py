"""The serving path's MoE layer (roofline/moe.py's expert ops as `estimate` prices them) against aiconfigurator's
measured fused-MoE layers at decode sizes (1-64 tokens, moe_tp 1, EP 1-16), by GPU x engine x EP x token band.

    python benchmarks/moe_serving_path.py [--out CSV]

Not a fit (nothing here is fitted): the check of the graph's expert ops (touched experts, grouped GEMMs, activation,
top-k) at the shapes of DeepSeek-V3 and Qwen3-235B in fp8 block scales, every measured routing (balanced, power-law
1.01 / 1.2). The measured rank's routing is the collector's, the graph's is uniform: a check of the form, not a row
match. Ratio = predicted / measured.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator" / "moe.parquet"
EXPERT_OPS = ("experts_gate_up_group_quant", "experts_gate_up", "experts_act", "experts_down_group_quant",
              "experts_down", "router_topk")   # the fused MoE's kernels (the router GEMM is outside the measured op)
SHAPES = (("deepseek-ai/DeepSeek-V3", 7168, 2048, 256, 8), ("Qwen/Qwen3-235B-A22B-FP8", 4096, 1536, 128, 8))
CASES = (("h100_sxm", "dgx-h100", "trtllm", "moe_torch_flow_cutlass"), ("h100_sxm", "dgx-h100", "sglang", "triton"),
         ("b200_sxm", "dgx-b200", "sglang", "flashinfer"))


def corpus_slice(d, gpu: str, framework: str, dtype: str, kernel: str):
    """The fused-MoE corpus rows of one GPU, engine, MoE dtype and kernel (a substring of kernel_source)."""
    return d[(d.gpu == gpu) & (d.framework == framework) & (d.moe_dtype == dtype)
             & d.kernel_source.str.contains(kernel)]


def of_shape(s, hidden: int, inter: int, experts: int, topk: int):
    """Rows of one MoE shape (hidden, expert inter size, experts, top-k), experts unsplit by TP (moe_tp 1)."""
    return s[(s.hidden_size == hidden) & (s.inter_size == inter) & (s.num_experts == experts) & (s.topk == topk)
             & (s.moe_tp_size == 1)]


def layer_us(model: str, hardware: str, engine: str, ep: int, tokens: int, problem_cost: bool = False) -> float:
    """Microseconds of one MoE layer's expert ops in a decode step of `tokens` sequences at TP = EP = ep
    (`problem_cost`: the scenario's moe_problem_cost, grouped_problems.py)."""
    from whatif.api import estimate
    # the serving rows' precision: both checkpoints' 128x128 block scales (an explicit dtype would drop them)
    kw = dict(tp=ep, ep=ep, gpus=ep, batch=tokens, prompt=1024, output=2, quantization="fp8-block", kv_dtype="fp8",
              kernel_engine=engine, with_max_batch=False, moe_problem_cost=problem_cost)
    if ep > 8:
        kw["nodes"] = 2
    e = estimate(model, hardware, **kw).estimate
    return sum(t.total_s / t.op.count for t in e.decode.op_times if t.op.name in EXPERT_OPS) * 1e6


def rows(problem_cost: bool = False):
    import pandas as pd
    d = pd.read_parquet(CORPUS)
    out = []
    for gpu, hardware, engine, kernel in CASES:
        for model, h, inter, experts, k in SHAPES:
            s = of_shape(corpus_slice(d, gpu, engine, "fp8_block", kernel), h, inter, experts, k)
            s = s[(s.num_tokens <= 64) & (s.moe_ep_size <= 16)]
            for (ep, tokens), g in s.groupby(["moe_ep_size", "num_tokens"]):
                pred = layer_us(model, hardware, engine, int(ep), int(tokens), problem_cost)
                for dist, m in g.groupby("distribution")["latency_ms"].mean().items():
                    out.append(dict(gpu=gpu, engine=engine, model=model, ep=int(ep), tokens=int(tokens),
                                    distribution=dist, predicted_us=pred, measured_us=m * 1e3))
    return pd.DataFrame(out)


def problem_fit(lo: int = 1, hi: int = 16, shapes=SHAPES):
    """(fixed s, s per local expert) of grouped_problems.BLOCK_FP8_PROBLEM_COST[("trtllm", "hopper")]: least squares of
    (measured - the layer priced without the term) on aiconfigurator's H100 TensorRT-LLM fp8_block balanced rows at
    lo-hi tokens, EP 1-16, both SHAPES, each priced at the rows' own rank-0 touched experts (routing_stats'
    'balanced': one row each), so that only the per-expert pricing is fitted, not the routing."""
    import numpy as np
    import pandas as pd
    from whatif.roofline import moe
    from whatif.roofline.kernel_models.moe import routing_stats
    saved = moe.busiest_rank_touched
    moe.busiest_rank_touched = lambda local, k, tokens, experts, ep: routing_stats(int(tokens), int(k), int(experts),
                                                                                  int(ep), "balanced")[0]
    try:
        d = pd.read_parquet(CORPUS)
        x, y = [], []
        for model, h, inter, experts, k in shapes:
            s = corpus_slice(d, "h100_sxm", "trtllm", "fp8_block", "moe_torch_flow_cutlass")
            s = of_shape(s, h, inter, experts, k)
            s = s[s.num_tokens.between(lo, hi) & (s.moe_ep_size <= 16) & (s.distribution == "balanced")]
            for (ep, tokens), g in s.groupby(["moe_ep_size", "num_tokens"]):
                pred = layer_us(model, "dgx-h100", "trtllm", int(ep), int(tokens))
                x.append(experts / ep)
                y.append(g.latency_ms.mean() * 1e3 - pred)
    finally:
        moe.busiest_rank_touched = saved
    coef, *_ = np.linalg.lstsq(np.c_[np.ones(len(x)), x], np.asarray(y), rcond=None)
    return float(coef[0]) * 1e-6, float(coef[1]) * 1e-6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="per-point csv")
    ap.add_argument("--problem-fit", action="store_true",
                    help="print the fit of grouped_problems.BLOCK_FP8_PROBLEM_COST (TensorRT-LLM, Hopper) and stop")
    ap.add_argument("--moe-problem-cost", action="store_true", help="price with the scenario's moe_problem_cost on")
    args = ap.parse_args(argv)
    if args.problem_fit:
        fixed, per_local = problem_fit()
        print(f"trtllm/hopper block-fp8 grouped problems: fixed {fixed * 1e6:.2f} us, {per_local * 1e6:.4f} us a local "
              "expert (grouped_problems.BLOCK_FP8_PROBLEM_COST)")
        return 0
    import pandas as pd
    f = rows(args.moe_problem_cost)
    f["ratio"] = f.predicted_us / f.measured_us
    f["ape"] = (f.ratio - 1).abs() * 100
    f["band"] = pd.cut(f.tokens, [0, 4, 16, 64], labels=["1-4", "8-16", "32-64"])
    f["eps"] = f.ep.map(lambda e: "ep1" if e == 1 else "ep2-4" if e <= 4 else "ep8-16")
    by = f.groupby(["gpu", "engine", "eps", "band"], observed=True)
    print(by.agg(n=("ape", "size"), median_ratio=("ratio", "median"), mape=("ape", "mean")).round(2).to_string())
    print(f.groupby(["gpu", "engine"]).agg(median_ratio=("ratio", "median"), mape=("ape", "mean")).round(2).to_string())
    # balanced rows time the collector's mean rank (picks spread, rank 0 average); power-law rows its busiest rank
    # (the most loaded EP group swapped onto rank 0): the graph's busiest-rank experts belong beside the latter
    ep = f[f.ep > 1].groupby(["gpu", "engine", "distribution"])
    print(ep.agg(median_ratio=("ratio", "median"), mape=("ape", "mean")).round(2).unstack("distribution").to_string())
    print(f"all: MAPE {f.ape.mean():.1f}%, median ratio x{f.ratio.median():.2f} ({len(f)} points)")
    if args.out:
        f.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
