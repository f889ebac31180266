"""Shared cost pieces of technique families: the pass's heads and cached tokens, rebuilt or
replaced decode attention, selection (score + top-k) kernels, host-path checks, windowed pair
counts and MInference's vertical-slash prefill pattern (which LServe reuses). Families import from here,
never from each other.
"""
from __future__ import annotations

from dataclasses import replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, attention_op
from ..context import HostPath, PassContext, PrefillUnit
from ..ops import AttentionShape, Op, OpClass, ScoreShape
from ...specs.op_kinds import LAYER_ATTENTION_ROLES

SOFTMAX_OPS_PER_SCORE = 5.0    # max, subtract, exp, sum, scale per score, CUDA-core ops; assumed
TOPK_OPS_PER_SCORE = 4.0       # radix-select passes + compare per candidate score, CUDA-core ops; assumed
DEQUANT_OPS_PER_ELEMENT = 4.0   # unpack, convert, scale, add zero: CUDA-core ops per cached element read, assumed
# MInference's vertical-slash budget per head and its estimation window (the minference technique's defaults),
# shared with LServe, which runs MInference's prefill sparsity on its dense heads past 128K tokens.
MINFERENCE_VERTICAL = 1000     # vertical lines (key columns) per head
MINFERENCE_SLASH = 6096        # slash lines (diagonals) per head
MINFERENCE_LAST_Q = 64         # last queries whose attention estimates the pattern


def stepping(ctx: PassContext) -> bool:
    """A pass whose attention reads the selected tokens (decode, or a short verify step)."""
    return all(q <= DECODE_MAX_QUERIES for q, _, _ in ctx.batch.groups)


def heads(ctx: PassContext) -> int:
    return ctx.model.num_heads // ctx.par.tp


def kv_heads(ctx: PassContext) -> int:
    """KV heads per GPU (split by TP, replicated once TP exceeds them); MLA's latent counts as one."""
    return 1 if ctx.model.mla is not None else max(1, ctx.model.num_kv_heads // ctx.par.tp)


def key_dim(ctx: PassContext) -> float:
    """Elements of one cached key per KV head (MLA: the whole latent serves as the key)."""
    return ctx.kv_width if ctx.model.mla is not None else ctx.model.head_dim


def cached(ctx: PassContext) -> float:
    """Cached tokens summed over the pass's sequences."""
    return sum(n * c for _, c, n in ctx.batch.groups)


def sequences(ctx: PassContext) -> int:
    return sum(n for _, _, n in ctx.batch.groups)


def cache_element_bytes(ctx: PassContext) -> float:
    """Average bytes per cached K/V element of this pass's sequences in the cache format (compressed or not)."""
    elements = sum(n * c for _, c, n in ctx.batch.groups) * ctx.kv_width
    stored = sum(n * ctx.kv.token_bytes(c, ctx.kv_width) for _, c, n in ctx.batch.groups)
    return stored / elements if elements else ctx.kv.full_bytes


def require_separate_keys(name: str, model: ModelSpec) -> None:
    if model.mla is not None:
        raise WhatifError(f"--technique {name}: {model.name} uses latent attention (MLA), which caches no "
                          f"per-head keys to select with; valid: models with MHA/GQA/MQA attention")


def require_host(name: str, ctx: PassContext) -> HostPath:
    if ctx.host is None:
        raise WhatifError(f"--technique {name}: needs host memory behind the GPU's link, but the system has none")
    return ctx.host


def window_pairs(q: float, c: float, w: float) -> float:
    """(query, key) pairs of q queries at positions c .. c+q-1 when each attends at most w keys
    (itself included); with w >= c + q this is the full causal count."""
    lo, hi = c, c + q - 1
    top = min(hi, w - 1)                     # last position still inside its first w keys
    below = (top + 1) * (top + 2) / 2 - lo * (lo + 1) / 2 if top >= lo else 0.0
    capped = hi - max(lo, top + 1) + 1
    return below + max(0.0, capped) * w


def rebuilt_attention(op: Op, ctx: PassContext, read, kv_bytes: float | None = None, count: int | None = None,
                      name: str | None = None) -> Op:
    """`op` again with each sequence reading read(c) of its c cached tokens (from ctx.batch, before any
    eviction), at kv_bytes per element (default: the cache format's bytes). Extra cost modifiers of
    `op` (in-kernel dequantization, bandwidth share) carry over in proportion to the bytes read."""
    s = op.shape
    groups = tuple((q, min(c, read(c)), n) for q, c, n in ctx.batch.groups)
    if kv_bytes is None:
        def kv_read(tokens):
            return ctx.kv.token_bytes(tokens, ctx.kv_width)
    else:
        def kv_read(tokens):
            return tokens * ctx.kv_width * kv_bytes
    new = attention_op(groups, int(s.heads), int(s.kv_heads), int(s.d_qk), int(s.d_v),
                       ctx.prec.act_bytes, ctx.prec.kv_bytes, ctx.kv_width, count or op.count, op.dtype,
                       name or op.name, kv_read=kv_read, role=op.role if name is None else None)
    alu = op.alu_ops * new.hbm_bytes / op.hbm_bytes if op.hbm_bytes else op.alu_ops
    return replace(new, alu_ops=alu, bandwidth_share=op.bandwidth_share)


def dense_first_layers(ops: list[Op], ctx: PassContext, dense: int, label: str) -> list[Op]:
    """Decode attention ops whose first `dense` layer instances attend the whole cached context (in
    layer order across the dense/MoE op groups; every pipeline stage is treated as holding them)."""
    left = min(dense, ctx.kv_layers)
    out: list[Op] = []
    for op in ops:
        if left > 0 and op.role in LAYER_ATTENTION_ROLES and op.op_class == OpClass.ATTENTION_DECODE:
            k = min(left, op.count)
            left -= k
            full = rebuilt_attention(op, ctx, lambda c: c, count=k)
            out.append(replace(full, formula=full.formula + f"; {label}"))
            if op.count > k:
                out.append(replace(op, count=op.count - k))
        else:
            out.append(op)
    return out


def replace_attention(ops: list[Op], build) -> list[Op]:
    """Decode attention ops replaced by build(op) (an Op or a list of ops)."""
    out: list[Op] = []
    for op in ops:
        if op.role in LAYER_ATTENTION_ROLES and op.op_class == OpClass.ATTENTION_DECODE:
            new = build(op)
            out.extend(new if isinstance(new, list) else [new])
        else:
            out.append(op)
    return out


def score_op(name: str, ctx: PassContext, summaries: float, summary_bytes: float, scores: float, count: int,
             flops_per_summary: float, alu_ops: float = 0.0, note: str = "") -> Op:
    """A selection kernel: `summaries` elements (page min/max, labels, codes, keys, landmarks) read at
    `summary_bytes` each and multiplied by the query, `scores` fp32 scores written and read back by a
    softmax/top-k (CUDA-core work in `alu_ops`, plus TOPK_OPS_PER_SCORE per score)."""
    alu = alu_ops + scores * TOPK_OPS_PER_SCORE
    hbm = summaries * summary_bytes + scores * 4.0 * 2
    return Op(name, OpClass.ATTENTION_DECODE, summaries * flops_per_summary, {"hbm": hbm}, ctx.prec.activation,
              ScoreShape(summaries, scores), count,
              f"{summaries:g} summary elements x {summary_bytes:g} B scored against the query; "
              f"{scores:g} fp32 scores written and read by top-k" + (f"; {note}" if note else ""), alu_ops=alu)


class PromptPositions:
    """Mixin of the front ends that hand the decoder fewer positions than the prompt has tokens (REFRAG,
    CoLoR, visual-token pruning): the subclass gives `positions(tokens)` for a prompt prefix and its
    `prompt` (0: the workload's); generated tokens stay one position each."""

    def stored_tokens(self, n: float) -> float:
        prompt = self.prompt or n
        if n <= prompt:
            return self.positions(n)
        return self.positions(prompt) + (n - prompt)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return [(max(1, round(self.positions(new))), round(self.stored_tokens(cached)), n)
                for new, cached, n in units]


def vertical_slash_pairs(q: float, c: float, vertical: int, slash: int) -> float:
    """Pairs a vertical-slash head computes for q queries after c keys: each query about vertical + slash keys."""
    return window_pairs(q, c, vertical + slash)


def pattern_estimate_op(ctx: PassContext, last_q: int, head_share: float, name: str) -> Op:
    """MInference's online index build for `head_share` of the heads: the last `last_q` queries of each
    sequence in the pass times all its keys (fp32 scores, written and read back), then summed along
    columns and diagonals to pick the vertical and slash lines."""
    h, kvh, d = heads(ctx) * head_share, kv_heads(ctx) * head_share, key_dim(ctx)
    groups = [(min(q, last_q), c + q, n) for q, c, n in ctx.batch.groups]
    pairs = sum(n * lq * keys for lq, keys, n in groups)
    keys = sum(n * keys for _, keys, n in groups)
    scores = pairs * h
    return Op(name, OpClass.ATTENTION_PREFILL, 2.0 * scores * d,
              {"hbm": keys * kvh * d * ctx.prec.kv_bytes + scores * 4.0 * 2}, ctx.prec.activation,
              AttentionShape(pairs=pairs), ctx.kv_layers,
              f"last {last_q} queries x all keys, fp32 scores summed along columns and diagonals",
              alu_ops=scores * (SOFTMAX_OPS_PER_SCORE + TOPK_OPS_PER_SCORE))
