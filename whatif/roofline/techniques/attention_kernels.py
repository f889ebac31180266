"""Family K: attention kernels and IO: how the decode attention kernel spreads over the GPU and how
the cache is laid out in memory."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..ops import Op
from .base import PassContext, Technique, replace_ops
from .registry import register

@register
@dataclass(frozen=True)
class NoSplitDecode(Technique):
    """FlashAttention-2 decode without split-K (the baseline flash-decoding / Lean Attention improve
    on): one thread block per (sequence, KV head), each streaming its whole context alone. When
    sequences x KV heads is below the GPU's SM count, the idle SMs leave HBM bandwidth unused: the
    kernel draws only that share of it. whatif's default decode kernel splits the context (full
    bandwidth); this technique models the older kernel."""

    name = "no_split_decode"
    family = "K"
    paper = "Flash-Decoding for long-context inference (baseline: FlashAttention-2 decode)"
    slots = ("decode kernel",)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode or not ctx.sm_count:
            return ops

        def occupancy(op: Op) -> Op:
            share = min(1.0, op.shape["ctas"] / ctx.sm_count)
            return replace(op, shape={**op.shape, "bandwidth_share": share},
                           formula=op.formula + f"; {op.shape['ctas']:g} CTAs on {ctx.sm_count} SMs")
        return replace_ops(ops, {"attention", "attention_mla"}, occupancy)
