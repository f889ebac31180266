"""RMSNorm: out[t, :] = x[t, :] * rsqrt(mean(x[t, :]^2) + eps) * weight, statistics in fp32.

Layout: x [tokens, hidden] row-major, weight [hidden], out [tokens, hidden] in x's dtype. One program per row:
a row up to MAX_BLOCK wide is loaded once and kept in registers; a wider row is walked in MAX_BLOCK chunks
twice (sum of squares, then scale), the second pass hitting L2.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ...roofline.graph import NORM_FLOPS
from ...roofline.ops import Op, streaming
from .common import ELEMENT_BYTES, next_pow2, poisoned, randn

FAMILY = "rmsnorm"
DTYPES = ("bf16", "fp16")
USES_DOT = False
EPS = 1e-6
MAX_BLOCK = 8192   # widest row held in registers at once (16 warps x 32 lanes x 16 fp32 each)

# hidden 7/100/300: not powers of two, so the column mask matters; 17 rows: several programs
TEST_SHAPES = [{"tokens": t, "hidden": h} for t in (1, 3, 17) for h in (7, 100, 300)]
# 1 row (launch-bound) to 32k rows x 8192 (512 MB per buffer, memory-bound); Llama/Qwen hidden sizes
SHAPES = [{"tokens": t, "hidden": h} for h in (4096, 5120, 8192) for t in (1, 16, 128, 512, 2048, 8192, 32768)]


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, out_ptr, hidden, eps, BLOCK: tl.constexpr, ONE_CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * hidden
    cols = tl.arange(0, BLOCK)
    if ONE_CHUNK:
        mask = cols < hidden
        x = tl.load(x_ptr + row + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = tl.rsqrt(tl.sum(x * x, axis=0) / hidden + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row + cols, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)
    else:
        squares = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            x = tl.load(x_ptr + row + start + cols, mask=mask, other=0.0).to(tl.float32)
            squares += x * x
        rstd = tl.rsqrt(tl.sum(squares, axis=0) / hidden + eps)
        for start in range(0, hidden, BLOCK):
            mask = start + cols < hidden
            x = tl.load(x_ptr + row + start + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + start + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_ptr + row + start + cols, (x * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def block_size(hidden: int, max_block: int = MAX_BLOCK) -> int:
    """The whole row rounded up to a power of two, capped at `max_block` (wider rows loop over chunks)."""
    return min(next_pow2(hidden), max_block)


def num_warps(block: int) -> int:
    """Enough warps that each thread holds at most 16 fp32 values of the row."""
    return max(1, min(16, block // 512))


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    t, h = shape["tokens"], shape["hidden"]
    return {"x": randn((t, h), dtype, device, gen), "weight": randn((h,), dtype, device, gen),
            "out": poisoned((t, h), dtype, device)}


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    x = inputs["x"].float()
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + EPS) * inputs["weight"].float()


def launch(inputs: dict, shape: dict, max_block: int = MAX_BLOCK) -> None:
    h = shape["hidden"]
    block = block_size(h, max_block)
    _rmsnorm_kernel[(shape["tokens"],)](inputs["x"], inputs["weight"], inputs["out"], h, EPS, BLOCK=block,
                                        ONE_CHUNK=h <= block, num_warps=num_warps(block))


def whatif_op(shape: dict, dtype: str) -> Op:
    """The estimate's norm op (whatif/roofline/graph.py layer_ops.norm): every element read and written once,
    NORM_FLOPS each, plus the weight vector read once."""
    t, d, a = shape["tokens"], shape["hidden"], ELEMENT_BYTES[dtype]
    return streaming("rmsnorm", "norm", t * d, 1, 1, NORM_FLOPS, a, dtype, 1, extra_bytes=d * a)


def label(shape: dict) -> str:
    return f"tokens={shape['tokens']} hidden={shape['hidden']}"
