"""Expert GEMMs no fused-MoE fit covers, as `estimate` prices them, against aiconfigurator's measured fused-MoE layers
(moe.parquet: balanced routing, moe_tp 1, EP 1-8, 1-16,384 tokens, DeepSeek-V3's and Qwen3-235B's shapes; B200 SGLang
flashinfer_trtllm fp8_block / NVFP4, H100 TensorRT-LLM CUTLASS and SGLang Triton fp8_block). Nothing here is fitted.

    python benchmarks/moe_dense_fit_experts.py [--per-class] [--no-promotion] [--out CSV]

Each layer is priced under kernel_engine trtllm, which has no fused-MoE fit of these dtypes on either GPU, so the
experts take kernel_timing.dense_expert_seconds past SMALL_M rows an expert (`--per-class`: the per-class model,
DENSE_FIT_EXPERTS off; `--no-promotion`: block-scaled fp8 without block_promotion.py).
Prints the median predicted / measured by GPU x kernel x EP x token band.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator" / "moe.parquet"
OPS = ("experts_gate_up_group_quant", "experts_gate_up", "experts_act", "experts_down_group_quant", "experts_down",
       "router_topk")   # the fused layer's kernels (the router GEMM is outside the measured op)
SHAPES = {(7168, 2048, 256, 8): "deepseek-ai/DeepSeek-V3", (4096, 1536, 128, 8): "Qwen/Qwen3-235B-A22B-FP8"}
CASES = (("b200_sxm", "dgx-b200", "sglang", "fp8_block", "sglang_flashinfer_trtllm_moe", "fp8-block"),
         ("b200_sxm", "dgx-b200", "sglang", "nvfp4", "sglang_flashinfer_trtllm_moe", "nvfp4"),
         ("h100_sxm", "dgx-h100", "trtllm", "fp8_block", "moe_torch_flow_cutlass", "fp8-block"),
         ("h100_sxm", "dgx-h100", "sglang", "fp8_block", "sglang_fused_moe_triton", "fp8-block"))


def layer_us(model: str, hardware: str, ep: int, tokens: int, quantization: str) -> float:
    """Microseconds of one MoE layer's fused-layer ops in a step of `tokens` tokens at TP = EP = ep."""
    from whatif.api import estimate
    e = estimate(model, hardware, tp=ep, ep=ep, gpus=ep, batch=tokens, prompt=128, output=2,
                 quantization=quantization, kv_dtype="fp8", kernel_engine="trtllm", with_max_batch=False).estimate
    return sum(t.total_s / t.op.count for t in e.decode.op_times if t.op.name in OPS) * 1e6


def rows():
    import pandas as pd
    d = pd.read_parquet(CORPUS)
    out = []
    for gpu, hardware, framework, dtype, kernel, quantization in CASES:
        s = d[(d.gpu == gpu) & (d.framework == framework) & (d.moe_dtype == dtype) & (d.kernel_source == kernel)
              & (d.moe_tp_size == 1) & (d.distribution == "balanced") & d.moe_ep_size.isin([1, 2, 4, 8])]
        for (h, inter, experts, k), model in SHAPES.items():
            for r in s[(s.hidden_size == h) & (s.inter_size == inter) & (s.num_experts == experts)
                       & (s.topk == k)].itertuples():
                pred = layer_us(model, hardware, int(r.moe_ep_size), int(r.num_tokens), quantization)
                out.append(dict(gpu=gpu, kernel=kernel, dtype=dtype, model=model, ep=r.moe_ep_size,
                                tokens=r.num_tokens, measured_us=r.latency_ms * 1e3, predicted_us=pred))
    o = pd.DataFrame(out)
    o["ratio"] = o.predicted_us / o.measured_us
    return o


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-class", action="store_true", help="the per-class model (DENSE_FIT_EXPERTS off)")
    ap.add_argument("--no-promotion", action="store_true",
                    help="block-scaled fp8 without its serial K-block promotion (block_promotion.SERIAL_PROMOTION off)")
    ap.add_argument("--out", type=Path, default=None, help="per-row csv")
    args = ap.parse_args(argv)
    import pandas as pd
    from whatif.roofline import kernel_timing
    from whatif.roofline import block_promotion
    kernel_timing.DENSE_FIT_EXPERTS = not args.per_class
    block_promotion.SERIAL_PROMOTION = not args.no_promotion
    o = rows()
    o["band"] = pd.cut(o.tokens, [0, 16, 128, 1024, 4096, 1 << 20],
                       labels=["1-16", "32-128", "256-1k", "2k-4k", "8k-16k"])
    pd.set_option("display.width", 200)
    print(o.groupby(["gpu", "kernel", "dtype", "ep", "band"], observed=True).ratio.median().unstack().round(2))
    o["ape"] = (o.ratio - 1).abs() * 100
    print(o.groupby(["gpu", "kernel", "dtype"]).agg(mape=("ape", "mean"), median_ratio=("ratio", "median")).round(2))
    if args.out:
        o.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
