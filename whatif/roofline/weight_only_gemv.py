"""TensorRT-LLM's weight-only GEMM at a few rows: a CUDA-core batched GEMV instead of the CUTLASS tensor-core kernel.

Source: TensorRT-LLM weightOnlyQuantMatmulPlugin.h (`SMALL_M_FAST_PATH = 5`) and .cpp (`use_cuda_kernel = m <
SMALL_M_FAST_PATH && mCudaKernelEnabled`): below 5 activation rows the plugin runs
kernels/weightOnlyBatchedGemv/kernel.h, where each CTA reads its int4/int8 weight tile once from HBM, dequantizes
it on the CUDA cores (converter.h) and accumulates every row with packed 16-bit FMAs (`pack_to_vec2`, `mma` over
half2/bfloat162, 16-bit accumulators): no tensor-core tile, so no 16-row tile minimum in its compute term.
"""
from __future__ import annotations

GEMV_MAX_ROWS = 4              # rows m < SMALL_M_FAST_PATH (5) take the CUDA-core kernel
GEMV_ENGINES = ("trtllm",)     # engines whose weight-only linear is that plugin (vLLM runs Marlin/Machete at every m)
# Measured: the median of TensorRT-LLM 1.0.0's WeightOnlyQuantMatmul rows with m <= 4 and n*k <= 2^16 (int4_wo and
# int8_wo on the A100, 36 rows of /work/shared/reference/aiconfigurator/gemm.parquet, CUDA-graph replays): the GEMV's
# fixed time where its weights are too few to cost anything. A100 is the only GPU measured: used on every GPU.
GEMV_FLOOR_S = 10.24e-6
PACKED_FMA_PER_FP32 = 2.0      # a packed half2 FMA does two per FFMA issue slot: 2x the fp32 FLOP rate (assumed floor:
                               # GA100's datasheet gives 4x, GH100's and GA102's 2x)


def runs_gemv(engine: str, m: float, int_weights: bool) -> bool:
    """Whether `engine` runs this weight-only GEMM of `m` rows as the CUDA-core batched GEMV."""
    return int_weights and m <= GEMV_MAX_ROWS and engine.split("-")[0] in GEMV_ENGINES


def gemv_compute_seconds(m: float, n: float, k: float, dequant_ops: float, fp32_flops: float) -> float:
    """CUDA-core seconds of the GEMV: 2mnk FLOPs as packed 16-bit FMAs plus the in-kernel dequant work (each
    weight once per CTA: dequant.with_weight_dequant's alu_ops) at the fp32 rate."""
    return 2.0 * m * n * k / (PACKED_FMA_PER_FP32 * fp32_flops) + dequant_ops / fp32_flops
