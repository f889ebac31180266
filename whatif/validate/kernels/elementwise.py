"""SwiGLU activation of a gated MLP: out = silu(gate) * up, computed in fp32.

Layout: x [tokens, 2 * inter] row-major, the gate_up projection's output with the gate half in columns
[0, inter) and the up half in [inter, 2 * inter); out [tokens, inter] in x's dtype. Grid: one program per
(row, BLOCK columns).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ...roofline.mlp import ACT_FLOPS
from ...roofline.ops import Op, streaming
from .common import ELEMENT_BYTES, poisoned, randn

FAMILY = "elementwise"
DTYPES = ("bf16", "fp16")
USES_DOT = False
BLOCK = 1024
MAX_INPUT_BYTES = 2 << 30   # one input set (x and out) must fit the runner's 2 GB budget

# inter 7: a partial block; 1000 < BLOCK but not a power of two; 5 rows: several programs along the rows
TEST_SHAPES = [{"tokens": t, "inter": i} for t in (1, 5) for i in (7, 1000)]
# Llama-2-7B / Llama-3-8B / Llama-3-70B intermediate sizes, 1 token (launch-bound) to 16k (memory-bound);
# 16k x 28672 (2.8 GB) is left out
SHAPES = [{"tokens": t, "inter": i} for i in (11008, 14336, 28672) for t in (1, 16, 64, 256, 1024, 4096, 16384)
          if 3 * t * i * 2 <= MAX_INPUT_BYTES]


@triton.jit
def _swiglu_kernel(x_ptr, out_ptr, inter, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < inter
    gate_ptr = x_ptr + row * 2 * inter + cols
    gate = tl.load(gate_ptr, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(gate_ptr + inter, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + row * inter + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    t, i = shape["tokens"], shape["inter"]
    return {"x": randn((t, 2 * i), dtype, device, gen), "out": poisoned((t, i), dtype, device)}


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    gate, up = inputs["x"].float().split(shape["inter"], dim=-1)
    return torch.nn.functional.silu(gate) * up


def launch(inputs: dict, shape: dict) -> None:
    i = shape["inter"]
    _swiglu_kernel[(shape["tokens"], triton.cdiv(i, BLOCK))](inputs["x"], inputs["out"], i, BLOCK=BLOCK)


def whatif_op(shape: dict, dtype: str) -> Op:
    """The estimate's gated-MLP activation (whatif/roofline/graph.py dense_mlp, '{prefix}_act'): tokens x inter
    outputs, each reading a gate and an up element and writing one, ACT_FLOPS each."""
    t, i = shape["tokens"], shape["inter"]
    return streaming("mlp_act", "activation", t * i, 2, 1, ACT_FLOPS, ELEMENT_BYTES[dtype], dtype)


def label(shape: dict) -> str:
    return f"tokens={shape['tokens']} inter={shape['inter']}"
