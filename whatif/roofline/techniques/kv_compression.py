"""Family B: KV cache quantization and compression: fewer bytes per cached token, paid for by
(de)quantization or reconstruction work."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..ops import Op, streaming
from .base import KVFormat, PassContext, Technique, param, replace_ops
from .registry import register

DEQUANT_OPS_PER_ELEMENT = 4.0   # unpack, convert, scale, add zero: CUDA-core ops per cached element read, assumed
QUANT_FLOPS_PER_ELEMENT = 6.0   # min/max reduction, scale, round, pack per element quantized, assumed


def with_dequant(op: Op, elements: float) -> Op:
    """An attention op that dequantizes `elements` cached values in-kernel (CUDA cores, beside the MMA)."""
    alu = op.shape.get("alu_ops", 0.0) + elements * DEQUANT_OPS_PER_ELEMENT
    return replace(op, shape={**op.shape, "alu_ops": alu},
                   formula=op.formula + f"; + {DEQUANT_OPS_PER_ELEMENT:g} dequant ops per cached element")


def cached_elements(ctx: PassContext, op: Op) -> float:
    """K/V elements one instance of attention op `op` reads from the compressed cache."""
    per_seq = op.shape["max_context"]
    return op.shape["sequences"] * per_seq * ctx.kv.width(ctx.kv_width)


@register
@dataclass(frozen=True)
class KIVI(Technique):
    """Keys quantized per channel and values per token to `bits` bits, in groups of `group_size`
    elements with a 16-bit scale and zero point each; the newest `residual` tokens stay 16-bit until
    they fill a group. A cached element costs bits/8 + 4/group_size bytes instead of 2, so the cache
    holds several times more tokens and a decode step reads that many fewer bytes. Costs: the
    attention kernel dequantizes every element it reads (CUDA-core ops beside the memory stream), and
    each full residual block is quantized by a streaming kernel (amortized per token)."""

    name = "kivi"
    family = "B"
    paper = "KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache"
    slots = ("kv format",)
    bits: int = param(2, "bits per quantized key/value element")
    group_size: int = param(32, "elements sharing one 16-bit scale and zero point")
    residual: int = param(128, "most recent tokens kept in 16 bits", "tokens")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")
        self.require(self.residual >= 0, "residual", "a non-negative integer")

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, element_bytes=self.bits / 8 + 4.0 / self.group_size, residual_tokens=self.residual)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        return replace_ops(ops, {"attention", "attention_mla"}, lambda op: with_dequant(op, cached_elements(ctx, op)))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        # Every token is quantized once: in prefill all prompt tokens, in decode one token per sequence.
        elements = ctx.batch.tokens * ctx.kv.width(ctx.kv_width)
        return [streaming("kv_quantize", "elementwise", elements, 1, 0, QUANT_FLOPS_PER_ELEMENT, ctx.kv.full_bytes,
                          ctx.prec.kv, ctx.layers, extra_bytes=elements * ctx.kv.element_bytes)]
