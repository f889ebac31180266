"""Family E: prefix and shared-context reuse: shared KV computed once, stored once and, with a
shared-prefix attention kernel, read once per batch instead of once per sequence."""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import WhatifError
from ...models import ModelSpec
from ..attention import attention_op
from ..ops import Op, streaming
from .base import PassContext, PrefillUnit, Technique, param, replace_ops
from .registry import register


def require_shared_prefix(name: str, shared_prefix: int) -> None:
    if shared_prefix <= 0:
        raise WhatifError(f"--technique {name}: needs a shared prefix; give --shared-prefix TOKENS "
                          f"(the leading prompt tokens every sequence of the batch shares)")


def share_prefill(units: list[PrefillUnit], prefix: int, computed_once: bool) -> list[PrefillUnit]:
    """Prefill units with the shared prefix computed once (or found cached) and the rest per sequence."""
    out: list[PrefillUnit] = []
    for new, cached, n in units:
        if cached >= prefix or new + cached <= prefix:
            out.append((new, cached, n))
            continue
        head = prefix - cached
        if computed_once:
            out.append((head, cached, 1))
        out.append((new - head, prefix, n))
    return out


@register
@dataclass(frozen=True)
class Hydragen(Technique):
    """Shared-prefix attention: the batch's common prefix is prefilled and stored once, and each
    decode step splits attention in two: the prefix part batches all sequences' queries into one
    matrix-matrix product that reads the prefix KV once (tensor-core bound, not memory bound), the
    suffix part is ordinary per-sequence decode attention, and a small kernel merges the two partial
    softmaxes by their log-sum-exp."""

    name = "hydragen"
    family = "E"
    paper = "Hydragen: High-Throughput LLM Inference with Shared Prefixes"
    slots = ("prefix attention",)
    shares_prefix = True

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_shared_prefix(self.name, shared_prefix)
        if model.mla is not None:
            raise WhatifError(f"--technique {self.name}: {model.name} uses latent attention (MLA); "
                              f"the shared-prefix split is modelled for MHA/GQA/MQA only")

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return share_prefill(units, shared_prefix, computed_once=True)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode or ctx.shared_prefix <= 0:
            return ops
        return replace_ops(ops, {"attention"}, lambda op: self._split(op, ctx))

    def _split(self, op: Op, ctx: PassContext) -> list[Op]:
        p, d, a = ctx.shared_prefix, ctx.model.head_dim, ctx.prec.act_bytes
        heads, kvh = int(op.shape["heads"]), int(op.shape["kv_heads"])
        seqs = sum(n for _, _, n in ctx.batch.groups)
        queries = sum(n * q for q, _, n in ctx.batch.groups)

        def kv_read(tokens: float) -> float:
            return ctx.kv.token_bytes(tokens, ctx.kv_width)

        # Prefix: all queries of the batch against the same p keys, which are read once.
        pairs = queries * p
        prefix = Op("attention_shared_prefix", "attention_prefill", 2.0 * pairs * heads * 2 * d,
                    {"hbm": queries * heads * 2 * d * a + kv_read(p)}, op.dtype,
                    {"pairs": pairs, "heads": heads, "kv_heads": kvh, "d_qk": d, "d_v": d, "ctas": heads,
                     "max_context": p, "sequences": seqs}, op.count,
                    f"{queries} queries x {p} shared-prefix keys as one matrix product; prefix KV read once")
        suffix_groups = tuple((q, max(0.0, c - p), n) for q, c, n in ctx.batch.groups)
        suffix = attention_op(suffix_groups, heads, kvh, d, d, a, ctx.kv.full_bytes, ctx.kv_width, op.count,
                              op.dtype, "attention_suffix", kv_read=kv_read)
        merge = streaming("attention_merge", "elementwise", queries * heads * d, 2, 1, 4, a, ctx.prec.activation,
                          op.count, extra_bytes=queries * heads * 2 * 4.0)
        return [prefix, suffix, merge]


@register
@dataclass(frozen=True)
class PrefixCaching(Technique):
    """Automatic prefix caching (vLLM/SGLang-style): KV blocks of a prefix already computed are
    found by hash and reused. With `hit_rate` of the batch's shared prefix found in the cache, those
    tokens are neither recomputed in prefill (the rest of the prompt attends to them as cached
    context) nor stored twice. Decode attention still reads the prefix once per sequence."""

    name = "prefix_caching"
    family = "E"
    paper = "Efficient Memory Management for Large Language Model Serving with PagedAttention (vLLM prefix caching)"
    slots = ("prefix cache",)
    shares_prefix = True
    hit_rate: float = param(1.0, "share of the shared prefix found in the cache (1: warm cache)")

    def check_params(self) -> None:
        self.require(0 <= self.hit_rate <= 1, "hit_rate", "a share from 0 to 1")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_shared_prefix(self.name, shared_prefix)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return share_prefill(units, round(shared_prefix * self.hit_rate), computed_once=False)
