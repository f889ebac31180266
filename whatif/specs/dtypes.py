"""Data types: bytes per element and which tensor-core peak a GEMM in that dtype runs at."""
from __future__ import annotations

from ..errors import WhatifError

BYTES = {"fp64": 8.0, "fp32": 4.0, "tf32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0,
         "int8": 1.0, "int4": 0.5, "fp4": 0.5,
         # sub-4-bit weight codes: only weight-format techniques set them (with their own bytes per
         # weight, scales included), so --weight-dtype does not accept them
         "int3": 0.375, "int2": 0.25, "int1": 0.125}

# Weight-only quantized formats keep 16-bit activations: the GEMM runs on the 16-bit tensor cores
# after dequantization, so its compute peak is the activation dtype's, not the weight dtype's.
WEIGHT_ONLY = {"int8", "int4", "int3", "int2", "int1"}


def dtype_bytes(dtype: str, where: str = "dtype") -> float:
    if dtype not in BYTES:
        raise WhatifError(f"{where}: unknown dtype '{dtype}'; valid: {', '.join(BYTES)}")
    return BYTES[dtype]


def check_dtype(dtype: str, where: str, valid=tuple(BYTES)) -> str:
    if dtype not in valid:
        raise WhatifError(f"{where}: unknown dtype '{dtype}'; valid: {', '.join(valid)}")
    return dtype


def gemm_compute_dtype(weight_dtype: str, act_dtype: str) -> str:
    """Tensor-core dtype a GEMM with these operands uses (W8A8 int8 -> int8, W4A16 -> act dtype)."""
    if weight_dtype == act_dtype:
        return act_dtype
    if weight_dtype in WEIGHT_ONLY or BYTES[weight_dtype] < BYTES[act_dtype]:
        return act_dtype
    return weight_dtype
