"""In-kernel dequantization of weight-only formats: CUDA-core work beside the tensor cores.

A fused weight-only GEMM (Marlin-style) turns each stored weight back into a 16-bit operand once
per tile of DEQUANT_TILE_M activation rows; the work runs on the CUDA cores (`alu_ops`), free
while the GEMM waits on memory, a cost once it is compute-bound. A named scheme's mechanism is
priced here too: MXFP4 weights with 16-bit activations dequantize the same way; FP8 with block
scales (DeepSeek's 128x128) promotes each K-block's partial sums on the CUDA cores and quantizes
its input per token group in one pass.
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..specs.dtypes import WEIGHT_ONLY
from .config import Precision
from ..specs.op_kinds import OpRole
from ..specs.quantization import MODULE_CLASSES
from .ops import Op, OpClass, graph_role, is_weight_gemm, streaming

DEQUANT_OPS = 4.0    # unpack (shift, mask), convert, scale: integer/fp32 ops per weight element, assumed
DEQUANT_TILE_M = 64  # rows of activations per CTA that share one dequantized weight tile, assumed


PROMOTE_OPS = 2.0      # per output element per K-block: scale the fp32 partial sum and add it (DeepGEMM's promotion)
GROUP_QUANT_SUFFIX = "_group_quant"   # the name of a GEMM's input-quantize op: the GEMM's name + this
GROUP_QUANT_FLOPS = 4.0   # per element of a per-token-group quantize: group absmax, scale, round, convert; assumed


def with_weight_dequant(op: Op, prec: Precision, weights: float, rows: float) -> Op:
    """`op` plus the dequant work for `weights` stored weights, each used by `rows` activation rows (weight-only
    int formats, and a scheme's 4-bit float weights beside 16-bit activations: MXFP4)."""
    s = prec.scheme
    if prec.weight not in WEIGHT_ONLY and not (s is not None and s.weight != s.activation and s.weight == "fp4"):
        return op
    alu = weights * math.ceil(rows / DEQUANT_TILE_M - 1e-9) * DEQUANT_OPS
    return replace(op, alu_ops=op.alu_ops + alu, int_weights=prec.weight in WEIGHT_ONLY,
                   fp4_weights=prec.weight not in WEIGHT_ONLY,
                   formula=op.formula + f"; + {DEQUANT_OPS:g} dequant ops/weight per {DEQUANT_TILE_M}-row tile")



# The module class whose precision a weight GEMM runs at, by its graph role (block_scale_ops reads it).
ROLE_MODULE = {OpRole.QKV_PROJ: "attention", OpRole.Q_PROJ: "attention", OpRole.KV_A_PROJ: "attention",
               OpRole.KV_B_PROJ: "attention", OpRole.Q_ABSORB: "attention", OpRole.V_ABSORB: "attention",
               OpRole.O_PROJ: "attention_out", OpRole.MLP_UP: "dense_mlp", OpRole.MLP_DOWN: "dense_mlp",
               OpRole.EXPERT_UP: "experts", OpRole.EXPERT_DOWN: "experts",
               OpRole.SHARED_EXPERT_UP: "shared_experts", OpRole.SHARED_EXPERT_DOWN: "shared_experts"}


def op_weight_bytes(op: Op, prec: Precision) -> float:
    """Bytes per stored weight of a weight GEMM's module class (the precision's own when nothing differs)."""
    return prec.module(ROLE_MODULE.get(graph_role(op), "_rest")).weight_bytes


def module_precisions(prec: Precision) -> list[Precision]:
    """The distinct precisions a pass's weight GEMMs run at (one unless a module class differs)."""
    return [prec] if not prec.per_module else list({prec.module(c): None for c in (*MODULE_CLASSES, "_rest")})


def block_scale_ops(ops: list[Op], prec: Precision) -> list[Op]:
    """`ops` with each fp8 weight GEMM whose module runs block scales (DeepSeek's 128x128, DeepGEMM-style): a
    one-pass per-token-group quantize of its input (read 2 B, write 1 B and a 4-byte scale per `block_k` elements)
    instead of the fitted per-tensor one, and the scale promotion of every output element once per K-block on the
    CUDA cores. Mechanism, assumed: no block-scale kernel is fitted."""
    out: list[Op] = []
    for op in ops:
        s = prec.module(ROLE_MODULE.get(graph_role(op), "_rest")).scheme if is_weight_gemm(op) else None
        block_k = s.block_k if s is not None else 0
        if not (block_k and op.dtype == "fp8"):
            out.append(op)
            continue
        m, n, k = op.shape.m, op.shape.n, op.shape.k
        quant = streaming(f"{op.name}{GROUP_QUANT_SUFFIX}", OpClass.ELEMENTWISE, m * k, 1, 0, GROUP_QUANT_FLOPS, 2.0,
                          "bf16", op.count, extra_bytes=m * k * (1.0 + 4.0 / block_k))
        out.append(replace(quant, part_of=graph_role(op)))
        out.append(replace(op, alu_ops=op.alu_ops + m * n * math.ceil(k / block_k - 1e-9) * PROMOTE_OPS,
                           input_quantized=True, block_scaled=True,
                           formula=op.formula + f"; {block_k}x{block_k} block scales: {PROMOTE_OPS:g} promotion ops "
                           f"per output per {block_k}-deep K block on the CUDA cores (mechanism, assumed)"))
    return out
