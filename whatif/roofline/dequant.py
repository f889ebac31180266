"""In-kernel dequantization of weight-only formats: CUDA-core work beside the tensor cores.

A fused weight-only GEMM (Marlin-style) turns each stored weight back into a 16-bit operand once
per tile of DEQUANT_TILE_M activation rows; the work runs on the CUDA cores (`alu_ops`), free
while the GEMM waits on memory, a cost once it is compute-bound.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..specs.dtypes import WEIGHT_ONLY
from .ops import Op

DEQUANT_OPS = 4.0    # unpack (shift, mask), convert, scale: integer/fp32 ops per weight element, assumed
DEQUANT_TILE_M = 64  # rows of activations per CTA that share one dequantized weight tile, assumed


def with_weight_dequant(op: Op, weight_dtype: str, weights: float, rows: float) -> Op:
    """`op` plus the dequant work for `weights` stored weights, each used by `rows` activation rows."""
    if weight_dtype not in WEIGHT_ONLY:
        return op
    alu = weights * math.ceil(rows / DEQUANT_TILE_M - 1e-9) * DEQUANT_OPS
    return replace(op, alu_ops=op.alu_ops + alu,
                   formula=op.formula + f"; + {DEQUANT_OPS:g} dequant ops/weight per {DEQUANT_TILE_M}-row tile")
