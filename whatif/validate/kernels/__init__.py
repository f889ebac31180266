"""Kernel families: each module holds a Triton kernel, its torch reference and whatif's op for it.

Every module exposes the same interface (kernels/copy.py is the plainest example):
    FAMILY: str                      the family name in measurement tables
    DTYPES: tuple[str, ...]          dtypes it runs in ('fp8' only where the GPU has fp8 tensor cores)
    USES_DOT: bool                   uses tl.dot (Triton's CPU interpreter cannot multiply bf16 operands)
    TEST_SHAPES: list[dict]          small shapes the CPU test suite checks under TRITON_INTERPRET=1
    SHAPES: list[dict]               the GPU sweep, covering the regimes (launch-bound, memory, ridge, compute)
    make_inputs(shape, dtype, device, gen) -> dict   random inputs; 'out' poisoned with NaN
    reference(inputs, shape) -> Tensor               torch, in float32 or float64
    launch(inputs, shape) -> None                    runs the Triton kernel(s), writing inputs['out']
    whatif_op(shape, dtype) -> Op                    the roofline op of the same work
    label(shape) -> str                              the shape in a few words, e.g. 'm=16 n=4096 k=4096'
"""
from __future__ import annotations

import importlib
import os

from ...errors import WhatifError

FAMILIES = ("gemm", "quant_gemm", "flash_prefill", "decode_attention", "quant_kv_attention",
            "sparse_attention", "rmsnorm", "elementwise", "copy")


def interpreting() -> bool:
    """True under Triton's CPU interpreter (TRITON_INTERPRET=1)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def load(family: str):
    if family not in FAMILIES:
        raise WhatifError(f"--families: '{family}' is not a kernel family; valid: {', '.join(FAMILIES)}")
    return importlib.import_module(f"{__name__}.{family}")
