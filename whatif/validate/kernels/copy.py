"""Memory copy: out = x, the achievable HBM bandwidth (bytes read + bytes written over time)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ...roofline.ops import Op, streaming
from .common import ELEMENT_BYTES, poisoned, randn

FAMILY = "copy"
DTYPES = ("bf16", "fp32")
USES_DOT = False
BLOCK = 4096

TEST_SHAPES = [{"elements": 1}, {"elements": 1000}, {"elements": 3 * BLOCK + 17}]
# 8 KB (launch-bound) to 2 GB per buffer: past the 50-60 MB L2 from 64 MB on
SHAPES = [{"elements": 1 << p} for p in range(12, 31, 2)]


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    n = shape["elements"]
    return {"x": randn((n,), dtype, device, gen), "out": poisoned((n,), dtype, device)}


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    return inputs["x"].float()


def launch(inputs: dict, shape: dict) -> None:
    n = shape["elements"]
    _copy_kernel[(triton.cdiv(n, BLOCK),)](inputs["x"], inputs["out"], n, BLOCK=BLOCK)


def whatif_op(shape: dict, dtype: str) -> Op:
    """One read and one write of every element: the elementwise class (as residual adds)."""
    return streaming("copy", "elementwise", shape["elements"], 1, 1, 0, ELEMENT_BYTES[dtype], dtype)


def label(shape: dict) -> str:
    return f"elements={shape['elements']}"
