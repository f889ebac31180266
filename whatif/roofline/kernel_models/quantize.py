"""Activation quantization kernels (bf16 -> fp8) an fp8 GEMM's input runs through.

- quantize_scale: scale a m x k bf16 matrix by a known scale and write fp8 (3 bytes per element moved).
- quantize_compute_scale: the extra pass that finds the scale (an absmax reduction reading 2 bytes per
  element): vLLM's rows are its dynamic per-token quantizer minus its static one; SGLang fuses it (its
  rows are 0 and are not fitted).
The tables replay each kernel back to back, so a matrix that fits in L2 stays there: its bytes are served by
L2 in the fraction L2 / bytes at the SMs' own L2 rate (linear_attention.sm_l2_times: SMs x clock x B, which
holds across GPUs where an HBM multiple does not: ~4 TB/s L2-resident on L40S, H100 and B200 alike, 5.4x,
1.2x and 0.5x their HBM). A fixed cost per row of m.
Parameters: data/modern_fit.yaml, families quantize_scale, quantize_compute_scale.
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds
from .linear_attention import sm_l2_times
from .params import ceilings

BYTES = {"quantize_scale": 3.0, "quantize_compute_scale": 2.0}


def quantize_work(kind: str, m, k, c):
    moved = BYTES[kind] * m * k
    return [(0.0 * m, *sm_l2_times(moved, moved, c))], m


def quantize_seconds(m: int, k: int, gpu, engine: str = "vllm", compute_scale: bool = True) -> float:
    """Seconds to quantize an m x k bf16 activation to fp8 on one GPU: the scaling kernel, plus the scale's
    reduction when `compute_scale` (dynamic quantization); gpu: a GPU profile or Ceilings."""
    c = ceilings(gpu)
    total = 0.0
    for kind in ("quantize_scale", "quantize_compute_scale")[: 2 if compute_scale else 1]:
        if kind == "quantize_compute_scale" and engine == "sglang":
            continue   # SGLang's quantizer computes the scale in the same kernel (its rows measure 0)
        parts, items = quantize_work(kind, m, k, c)
        total += float(fitted_seconds(parts, items, c.sms, family_params(kind, engine, c.arch)))
    return total
