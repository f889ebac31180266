"""The main-loop cost of 128x128 block-scaled fp8 in a grouped expert GEMM: each output's fp32 partial sum of every
128-deep K block is scaled and promoted on the CUDA cores (DeepSeek-V3 technical report, section 3.3.2; TensorRT-LLM's
CutlassFp8BlockScaleGemmRunner::moeGemm, the TRTLLM-Gen DeepSeek-FP8 MoE), serial with the tensor cores there.

dequant.block_scale_ops counts that promotion (PROMOTE_OPS per output per K block) but lets it overlap the tensor
cores (kernel_timing.gemm_seconds: max), where it never binds. aiconfigurator's fused-MoE layers timed with both
formats say otherwise: on H100 TensorRT-LLM's CUTLASS MoE (the same kernel, grouping, routing, permute and finalize)
runs block-scaled at x1.0 the per-tensor time up to ~16 rows an expert and x1.5-2.1 past 256 (per-tensor ~1,000
TFLOPS at 16k tokens, block-scaled ~420), and on B200 the TRTLLM-Gen MoE x1.9-2.1 (benchmarks/block_fp8_promotion.py).
Read as CUDA-core time added to the tensor-core time, that is PROMOTION_OPS ops per output element per K block at
the fp32 peak: 12.1 on H100 (its 356 compute-bound pairs' median: the constant), 12.6 on B200 (held out, EP 1).
Applied where no fused-MoE fit (fitted on block-scaled rows) prices the experts: kernel_timing.dense_expert_seconds.
Dense (non-grouped) block-scaled GEMMs keep per-tensor speed unless DENSE_SERIAL_PROMOTION names the (engine, GPU
architecture) whose dense kernel promotes serially (none yet: the kernels the rows run measure at per-tensor speed).
"""
from __future__ import annotations

import math

from .ops import Op

BLOCK_K = 128           # DeepSeek's block: scales per 128 K elements of weights (128x128) and activations (1x128)
PROMOTION_OPS = 12.1    # fp32 CUDA-core ops per output element per K block, serial (H100 pairs; B200 12.6 held out)
# True: block-scaled expert GEMMs priced by the dense GEMM fit add the promotion (above); False: as before
SERIAL_PROMOTION = True
# (engine, GPU architecture) whose DENSE block-scaled fp8 GEMMs promote serially too. Empty: no dense kernel a row runs
# is shown to (docs/accuracy.md "Session 75 A": DeepGEMM runs block scales at x0.98-1.05 of per-tensor fp8 on B200,
# x0.82-1.21 on H100 at 4k rows; benchmarks/block_fp8_dense_speed.py). The open lead is TensorRT-LLM's dense
# fp8_block_scaling_gemm, the grouped kernels' own family (thop/fp8BlockScalingGemm.cpp: on SM90 the
# CutlassFp8BlockScaleGemmRunner, its default there; on SM100 TRTLLM-Gen deepSeekFp8, taken only where DeepGEMM is
# disabled): ("trtllm", "hopper") once a table of it says so.
DENSE_SERIAL_PROMOTION: frozenset = frozenset()


def promotion_seconds(op: Op, gpu, rows: float) -> float:
    """Seconds of the serial K-block promotion of a block-scaled fp8 GEMM of `rows` (tile-padded) rows; 0 otherwise."""
    if not (SERIAL_PROMOTION and op.block_scaled and op.dtype == "fp8"):
        return 0.0
    s = op.shape
    return rows * s.n * math.ceil(s.k / BLOCK_K - 1e-9) * PROMOTION_OPS / gpu.peak_flops("fp32")


def dense_promotion_seconds(op: Op, gpu, engine: str) -> float:
    """Seconds of the serial promotion of a dense (non-grouped) block-scaled fp8 GEMM where `engine` on `gpu`'s
    architecture runs a kernel that promotes serially (DENSE_SERIAL_PROMOTION); 0 elsewhere (per-tensor speed)."""
    if (engine, gpu.arch) not in DENSE_SERIAL_PROMOTION:
        return 0.0
    return promotion_seconds(op, gpu, op.shape.m)
