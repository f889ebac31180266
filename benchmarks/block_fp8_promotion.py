"""The cost of 128x128 block scales in a grouped fp8 GEMM, from aiconfigurator's measured fused-MoE layers where the
same shape was timed with per-tensor and with block-scaled fp8 experts (moe.parquet: balanced routing, moe_tp 1).

    python benchmarks/block_fp8_promotion.py

H100: TensorRT-LLM's CUTLASS fused MoE (moe_torch_flow_cutlass) timed in both formats, the grouping, routing, permute
and finalize held equal, so what differs is the block-scaled main loop alone. B200: the TRTLLM-Gen MoE, per-tensor as
vLLM's ModelOpt path runs it, block-scaled as SGLang's flashinfer_trtllm runner does (two collectors; EP > 1 carries
SGLang's grouped routing and launch grid, so EP 1 only). For each pair, the extra time per FLOP of the layer's expert
GEMMs, as a fraction of the fp8 tensor peak: f = FLOPs / ((t_block - t_per_tensor) x peak), and as CUDA-core (fp32)
ops per output element per 128-deep K block (`ops`, the promotion's unit). Printed by rows per expert (compute-bound
past ~64). roofline/block_promotion.py takes H100's median `ops` (one GPU); B200's is its held-out check.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator" / "moe.parquet"
KEY = ["num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "moe_ep_size", "distribution"]
PAIRS = {"h100_sxm": (("moe_torch_flow_cutlass", "fp8"), ("moe_torch_flow_cutlass", "fp8_block"), (1, 2, 4, 8)),
         "b200_sxm": (("vllm_modeloptfp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic", "fp8"),
                      ("sglang_flashinfer_trtllm_moe", "fp8_block"), (1,))}
BLOCK_K = 128
COMPUTE_ROWS = 64   # routed rows per expert past which the layers are compute-bound (the ratio leaves 1 there)


def pairs(gpu: str):
    """The paired rows of `gpu`: per-tensor and block-scaled latency (ms) of the same shape, with f."""
    import pandas as pd
    from whatif.specs.hardware import load_component
    d = pd.read_parquet(CORPUS)
    d = d[(d.gpu == gpu) & (d.distribution == "balanced") & (d.moe_tp_size == 1)]
    pt, blk, eps = PAIRS[gpu]
    a = d[(d.kernel_source == pt[0]) & (d.moe_dtype == pt[1])].set_index(KEY).latency_ms.rename("per_tensor")
    b = d[(d.kernel_source == blk[0]) & (d.moe_dtype == blk[1])].set_index(KEY).latency_ms.rename("block")
    j = pd.concat([a, b], axis=1).dropna().reset_index()
    j = j[j.moe_ep_size.isin(eps)]
    hw = load_component({"h100_sxm": "h100-sxm", "b200_sxm": "b200"}[gpu], "gpu")
    peak, fp32 = hw.peak_flops("fp8"), hw.peak_flops("fp32")
    j["flops"] = 6.0 * j.num_tokens * j.topk * j.hidden_size * j.inter_size / j.moe_ep_size   # gate+up and down
    j["rows_per_expert"] = j.num_tokens * j.topk / j.num_experts
    j["ratio"] = j.block / j.per_tensor
    j["f"] = j.flops / ((j.block - j.per_tensor) * 1e-3 * peak)
    # the same extra time as CUDA-core ops per output element per 128-deep K block (2 x 128 tensor FLOPs each)
    j["ops"] = (j.block - j.per_tensor) * 1e-3 * fp32 / (j.flops / (2.0 * BLOCK_K))
    return j


def main() -> int:
    import pandas as pd
    pd.set_option("display.width", 200)
    for gpu in PAIRS:
        j = pairs(gpu)
        j["band"] = pd.cut(j.rows_per_expert, [0, 16, 64, 256, 1024, 1e9])
        print(gpu, len(j), "paired rows")
        print(j.groupby(["moe_ep_size", "band"], observed=True)[["ratio", "f", "ops"]].median().unstack().round(2))
        c = j[j.rows_per_expert > COMPUTE_ROWS]
        print(f"{gpu}: median f past {COMPUTE_ROWS} rows an expert = {c.f.median():.3f} ({len(c)} rows), "
              f"block / per-tensor x{c.ratio.median():.2f}, CUDA-core ops per output per K block {c.ops.median():.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
