"""Data types: bytes per element and which tensor-core peak a GEMM in that dtype runs at."""
from __future__ import annotations

from ..errors import WhatifError

BYTES = {"fp64": 8.0, "fp32": 4.0, "tf32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0,
         "int8": 1.0, "int4": 0.5, "fp4": 0.5,
         # sub-4-bit weight codes: only weight-format techniques set them (with their own bytes per
         # weight, scales included), so --weight-dtype does not accept them
         "int3": 0.375, "int2": 0.25, "int1": 0.125}

# What each precision flag accepts. fp4 is NVFP4, the format of Blackwell's FP4 tensor-core peak: 4-bit E2M1
# values with one FP8 (E4M3) scale per 16 values (NVIDIA, "Introducing NVFP4 for Efficient and Accurate
# Low-Precision Inference", 2025), so it stores 0.5 + 1/16 bytes per element.
WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
ACTIVATION_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "fp4")
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")
BLOCK_SCALE_BYTES = {"fp4": 1 / 16}     # scale bytes per element that the format itself carries

# Weight-only quantized formats keep 16-bit activations: the GEMM runs on the 16-bit tensor cores
# after dequantization, so its compute peak is the activation dtype's, not the weight dtype's.
WEIGHT_ONLY = {"int8", "int4", "int3", "int2", "int1"}


def stored_bytes(dtype: str) -> float:
    """Bytes per element in memory, with the block scales the format itself carries (NVFP4's)."""
    return BYTES[dtype] + BLOCK_SCALE_BYTES.get(dtype, 0.0)


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
