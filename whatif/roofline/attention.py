"""Attention kernels: FlashAttention prefill (IO-aware) and decode attention reading the KV cache.

FLOPs count causal pairs exactly: a sequence with q new tokens after c cached ones attends
q*c + q*(q+1)/2 (query, key) pairs, each costing 2*d_qk (QK^T) + 2*d_v (PV) FLOPs.
HBM bytes follow FlashAttention: Q, K, V read once, O written once; the S x S score matrix never
touches HBM. K/V re-reads per query block are charged to L2 (reported, not timed: the profiles
carry no L2 bandwidth yet).

A pass that mixes prompts (chunked prefill) with decoding sequences runs two kernels: engines split the
batch by request kind (TensorRT-LLM's attention op runs its context FMHA on the context requests and
XQA/MMHA on the generation ones; FlashInfer has a prefill and a decode wrapper). Timing the decode rows
inside the prefill kernel's model (as sequences of a few causal pairs) priced 545 decodes riding with
one 1,000-token prompt at 2.4x their own decode kernel's time. A mixed op keeps both kernels as `parts`,
and is timed as their sum (timing.time_op).
"""
from __future__ import annotations

import math
from dataclasses import replace

from .ops import AttentionShape, Op, OpClass, OpRole

Q_BLOCK = 128  # FlashAttention-2 query tile (Br)
DECODE_MAX_QUERIES = 16  # new tokens per sequence up to which a pass runs the decode kernel (reads KV once)


def causal_pairs(q: int, c: int) -> float:
    return q * c + q * (q + 1) / 2.0


def attention_op(groups, heads: int, kv_heads: int, d_qk: int, d_v: int, act_bytes: float,
                 kv_bytes: float, kv_width: float, count: int, dtype: str, name: str = "attention",
                 kv_read=None, pair_fraction=None, role: OpRole | None = None, gathered: bool = False) -> Op:
    """One attention kernel over sequence groups (q new, c cached, n sequences), per GPU.

    `kv_width` is the cached elements per token per layer this GPU reads (K and V, or MLA latent).
    Techniques may pass `kv_read(tokens) -> bytes` (a compressed cache) and `pair_fraction(q, c)`
    (sparse prefill: the share of causal pairs computed); `gathered`: the selected tokens are gathered by
    index (a decode kernel reading fewer tokens, or a prefill computing fewer pairs: gathered_attention.py).
    """
    kinds = {q <= DECODE_MAX_QUERIES for q, _, _ in groups}
    if len(kinds) == 2:
        return mixed_op(groups, heads, kv_heads, d_qk, d_v, act_bytes, kv_bytes, kv_width, count, dtype, name,
                        kv_read, pair_fraction, role, gathered)
    frac = pair_fraction or (lambda q, c: 1.0)
    read = kv_read or (lambda tokens: tokens * kv_width * kv_bytes)
    full_pairs = sum(n * causal_pairs(q, c) for q, c, n in groups)
    pairs = sum(n * causal_pairs(q, c) * frac(q, c) for q, c, n in groups)
    flops = 2.0 * pairs * heads * (d_qk + d_v)
    q_io = sum(n * q for q, _, n in groups) * heads * (d_qk + d_v) * act_bytes   # Q in, O out
    kv_io = sum(n * read(c + q) for q, c, n in groups)
    l2 = sum(n * math.ceil(q / Q_BLOCK) * read(c + q / 2.0) * frac(q, c) for q, c, n in groups)
    decode = all(q <= DECODE_MAX_QUERIES for q, _, _ in groups)
    blocks = sum(n * math.ceil(q / Q_BLOCK) for q, _, n in groups) * heads
    max_ctx = max(c + q for q, c, _ in groups)
    shape = AttentionShape(pairs=pairs, heads=heads, kv_heads=kv_heads, d_qk=d_qk, d_v=d_v,
                           ctas=blocks if not decode else sum(n for _, _, n in groups) * kv_heads,
                           max_context=max_ctx, sequences=sum(n for _, _, n in groups),
                           kv_bytes=sum(n * read(c) for _, c, n in groups),   # of tokens cached before this pass
                           queries=sum(n * q for q, _, n in groups), kv_element_bytes=kv_bytes,
                           gathered=gathered and (decode or pairs < full_pairs))
    formula = (f"FLOPs = 2*pairs*H*(d_qk+d_v), pairs={pairs:g} (causal), H={heads}; "
               f"bytes = Q+O once + K/V of {kv_width:g} elements/token once (FlashAttention IO)"
               + ("" if pairs == full_pairs else f"; {pairs / full_pairs:.3g} of the causal pairs computed"))
    levels = {"hbm": q_io + kv_io} if decode else {"hbm": q_io + kv_io, "l2": l2}
    return Op(name, OpClass.ATTENTION_DECODE if decode else OpClass.ATTENTION_PREFILL, flops, levels, dtype, shape,
              count, formula, role)


def mixed_op(groups, heads: int, kv_heads: int, d_qk: int, d_v: int, act_bytes: float, kv_bytes: float,
             kv_width: float, count: int, dtype: str, name: str, kv_read, pair_fraction, role, gathered=False) -> Op:
    """attention_op of a pass mixing prompts with decoding sequences: its prefill kernel over the prompt
    groups and its decode kernel over the decoding ones, one op whose FLOPs and bytes are theirs summed and
    whose `parts` are the two kernels (timed each by its own model, summed)."""
    def part(kind_groups, part_name):
        return attention_op(kind_groups, heads, kv_heads, d_qk, d_v, act_bytes, kv_bytes, kv_width, count, dtype,
                            part_name, kv_read, pair_fraction, role, gathered)

    pre = part(tuple(g for g in groups if g[0] > DECODE_MAX_QUERIES), name)
    dec = part(tuple(g for g in groups if g[0] <= DECODE_MAX_QUERIES), f"{name}_decode")
    levels = {k: pre.bytes.get(k, 0.0) + dec.bytes.get(k, 0.0) for k in {*pre.bytes, *dec.bytes}}
    formula = (f"two kernels: prefill over {pre.shape.sequences:g} prompts ({pre.formula}) + decode over "
               f"{dec.shape.sequences:g} sequences ({dec.formula})")
    return Op(name, OpClass.ATTENTION_PREFILL, pre.flops + dec.flops, levels, dtype,
              replace(pre.shape, parts=(pre, dec)), count, formula, role)
