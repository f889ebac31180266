"""Dense (non-expert) 128x128 block-scaled fp8 GEMMs at prefill sizes: the speed the public benchmarks measured for the
kernels the engines run, against the per-tensor fp8 and bf16 GEMMs aiconfigurator timed on the same GPU at the same
rows (gemm.parquet; its fp8_block rows were dropped, timed eagerly) and against whatif's per-tensor fp8 price.

    python benchmarks/block_fp8_dense_speed.py

The question (issue 37): does a dense block-scaled GEMM run serially slower than per-tensor fp8 the way the grouped
MoE kernels do (block_promotion.py: x1.5-2.1), or at per-tensor speed as dequant.block_scale_ops prices it? `speed`
is the block-scaled kernel's TFLOPS over the fastest per-tensor fp8 kernel of the table at that (m, n, k); the table
holds n, k up to 16384 (then 51200, 65536), so a wider weight is compared at the nearest tabled (n, k) of the same m
(TFLOPS, not time). Figures are as each source printed them (us a call, or TFLOPS), not refitted.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT.parent / "shared" / "reference" / "aiconfigurator" / "gemm.parquet"
PER_TENSOR = ("sglang_sgl_kernel_fp8_scaled_mm", "CutlassFP8ScaledMMLinearKernel", "torch_flow")   # SGLang, vLLM, TRT
BF16 = "sglang_torch_linear"

# (kernel, source, gpu, m, n, k, measured: ("us", x) a call or ("tflops", x), the table's (n, k) to compare at)
MEASURED = [
    # DeepGEMM README (deepseek-ai/DeepGEMM, "Normal GEMMs for dense models", H800 = H100's SMs and clocks, NVCC 12.8)
    ("DeepGEMM sm90", "DeepGEMM README", "h100_sxm", 4096, 2112, 7168, ("tflops", 1058), (2048, 7168)),
    ("DeepGEMM sm90", "DeepGEMM README", "h100_sxm", 4096, 24576, 1536, ("tflops", 990), (16384, 1536)),
    ("DeepGEMM sm90", "DeepGEMM README", "h100_sxm", 4096, 7168, 16384, ("tflops", 1358), (7168, 16384)),
    ("DeepGEMM sm90", "DeepGEMM README", "h100_sxm", 4096, 4096, 7168, ("tflops", 1304), (4096, 7168)),
    ("DeepGEMM sm90", "DeepGEMM README", "h100_sxm", 4096, 7168, 2048, ("tflops", 1025), (7168, 2048)),
    # vllm-project/vllm PR #13917 (H100 80GB HBM3, DeepGEMM of 2025-02, CUDA 12.4)
    ("DeepGEMM sm90", "vllm#13917", "h100_sxm", 1024, 18432, 7168, ("tflops", 969.8), (16384, 7168)),
    ("DeepGEMM sm90", "vllm#13917", "h100_sxm", 2048, 4096, 7168, ("tflops", 687.0), (4096, 7168)),
    # sgl-project/sglang PR #5820 (Hopper, DeepSeek-V3 N=24576 K=7168, batch 4096: "main" table)
    ("DeepGEMM sm90", "sglang#5820", "h100_sxm", 4096, 24576, 7168, ("us", 1127.4), (16384, 7168)),
    ("CUTLASS blockwise sm90 (vLLM)", "sglang#5820", "h100_sxm", 4096, 24576, 7168, ("us", 1619.6), (16384, 7168)),
    ("Triton w8a8_block_fp8_matmul", "sglang#5820", "h100_sxm", 4096, 24576, 7168, ("us", 2200.2), (16384, 7168)),
    # sgl-project/sglang PR #13528 (B200, benchmark_deepgemm_fp8_gemm_blackwell.py --tp-size 4, 2025-11)
    ("DeepGEMM sm100", "sglang#13528", "b200_sxm", 1024, 24576, 7168, ("us", 146.03), (16384, 7168)),
    ("DeepGEMM sm100", "sglang#13528", "b200_sxm", 2048, 24576, 7168, ("us", 260.38), (16384, 7168)),
    ("FlashInfer groupwise sm100", "sglang#13528", "b200_sxm", 1024, 24576, 7168, ("us", 826.19), (16384, 7168)),
    ("FlashInfer groupwise sm100", "sglang#13528", "b200_sxm", 2048, 24576, 7168, ("us", 1632.54), (16384, 7168)),
]
WHATIF_ENGINE = {"DeepGEMM sm90": "sglang", "DeepGEMM sm100": "sglang", "FlashInfer groupwise sm100": "sglang",
                 "CUTLASS blockwise sm90 (vLLM)": "vllm", "Triton w8a8_block_fp8_matmul": "sglang"}
HW = {"h100_sxm": "h100-sxm", "b200_sxm": "b200"}


def tflops(m: float, n: float, k: float, seconds: float) -> float:
    """Dense GEMM throughput, TFLOPS."""
    return 2.0 * m * n * k / seconds / 1e12


def table_tflops(d, gpu: str, source: str, m: int, n: int, k: int) -> float:
    """aiconfigurator's measured TFLOPS of one kernel source at (m, n, k) on `gpu` (NaN where not timed)."""
    x = d[(d.gpu == gpu) & (d.kernel_source == source) & (d.m == m) & (d.n == n) & (d.k == k)]
    x = x[x.gemm_dtype == ("bfloat16" if source == BF16 else "fp8")]
    return tflops(m, n, k, x.latency_ms.median() * 1e-3) if len(x) else float("nan")


def whatif_tflops(gpu: str, engine: str, m: int, n: int, k: int) -> float:
    """whatif's per-tensor fp8 GEMM price (the fitted dense model; block_scale_ops keeps it for block scales)."""
    from whatif.roofline.kernel_timing import gemm_seconds
    from whatif.roofline.ops import gemm
    from whatif.specs.hardware import load_component
    return tflops(m, n, k, gemm_seconds(gemm("g", m, n, k, 2, 1, "fp8"), load_component(HW[gpu], "gpu"), engine)[0])


def main() -> int:
    import pandas as pd
    d = pd.read_parquet(CORPUS)
    print(f"{'kernel':30s} {'source':16s} {'gpu':8s} {'m':>5s} {'n':>6s} {'k':>6s} | block TF | per-tensor TF "
          f"(SGLang, vLLM, TRT) | bf16 TF | speed | whatif TF")
    for kernel, src, gpu, m, n, k, (unit, v), (tn, tk) in MEASURED:
        block = v if unit == "tflops" else tflops(m, n, k, v * 1e-6)
        pt = [table_tflops(d, gpu, s, m, tn, tk) for s in PER_TENSOR]
        bf = table_tflops(d, gpu, BF16, m, tn, tk)
        wi = whatif_tflops(gpu, WHATIF_ENGINE[kernel], m, n, k)
        print(f"{kernel:30s} {src:16s} {gpu:8s} {m:5d} {n:6d} {k:6d} | {block:8.0f} | "
              f"{pt[0]:6.0f} {pt[1]:6.0f} {pt[2]:6.0f}        | {bf:7.0f} | x{block / max(pt):.2f} | {wi:6.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
