"""Shared cost pieces of technique families: the pass's heads and cached tokens, rebuilt or
replaced decode attention, selection (score + top-k) kernels, accumulated attention importance and
observation-window votes (family C and its merging variants), host-path checks, windowed pair
counts and MInference's vertical-slash prefill pattern (which LServe reuses). Families import from here,
never from each other.
"""
from __future__ import annotations

from dataclasses import replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, attention_op, causal_pairs
from ..context import HostPath, PassContext, PrefillUnit
from ..ops import AttentionShape, Op, OpClass, ScoreShape, StreamShape, gemm, graph_role, is_weight_gemm
from ...specs.op_kinds import LAYER_ATTENTION_ROLES

SOFTMAX_OPS_PER_SCORE = 5.0    # max, subtract, exp, sum, scale per score, CUDA-core ops; assumed
TOPK_OPS_PER_SCORE = 4.0       # radix-select passes + compare per candidate score, CUDA-core ops; assumed
DEQUANT_OPS_PER_ELEMENT = 4.0   # unpack, convert, scale, add zero: CUDA-core ops per cached element read, assumed
# MInference's vertical-slash budget per head and its estimation window (the minference technique's defaults),
# shared with LServe, which runs MInference's prefill sparsity on its dense heads past 128K tokens.
MINFERENCE_VERTICAL = 1000     # vertical lines (key columns) per head
MINFERENCE_SLASH = 6096        # slash lines (diagonals) per head
MINFERENCE_LAST_Q = 64         # last queries whose attention estimates the pattern
SCORE_BYTES = 2.0         # an attention score (probability or logit) emitted by the kernel, 16-bit, assumed
ACCUMULATOR_BYTES = 4.0   # a running per-token, per-head importance score in fp32, assumed
# SnapKV, per score: softmax (max, exp, sum, divide), window sum, pooling max, top-k compare; assumed
VOTE_OPS = 8.0


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


# ---- attention importance and compression at the end of a prompt (families C and its merging variants)

def elementwise(name: str, flops: float, nbytes: float, elements: float, count: int, formula: str) -> Op:
    """A CUDA-core kernel with its FLOPs and HBM bytes given directly."""
    return Op(name, OpClass.ELEMENTWISE, flops, {"hbm": nbytes}, "fp32", StreamShape(elements), count, formula)


def score_update(name: str, ctx: PassContext, kept, ops_per_score: float) -> Op:
    """Accumulated attention importance: the attention kernel also writes each head's score for every
    (query, kept key) pair it computes; a kernel reads them back, spends `ops_per_score` on each,
    adds them into an fp32 accumulator per kept token and head (read, written, and read again to
    find the tokens to evict)."""
    h = max(1, heads(ctx))
    scores = sum(n * causal_pairs(q, kept(c)) for q, c, n in ctx.batch.groups) * h
    tokens = sum(n * (kept(c) + q) for q, c, n in ctx.batch.groups) * h
    nbytes = scores * 2 * SCORE_BYTES + tokens * 3 * ACCUMULATOR_BYTES
    return elementwise(name, scores * ops_per_score + tokens * 2.0, nbytes, tokens, ctx.kv_layers,
                       f"{scores:g} scores written+read x {SCORE_BYTES:g} B, {ops_per_score:g} ops each; "
                       f"{tokens:g} fp32 accumulators read twice, written once")


def full_attention(op: Op, ctx: PassContext, kept, count: int | None = None) -> Op:
    """The attention op rebuilt over the pass's unevicted cached tokens (ctx.batch), for passes that
    read the whole prompt before compressing it (SnapKV's prefill, GemFilter's filter layers). `kept`
    is the eviction the op was built with; the share of pairs it computed (another technique's
    prefill sparsity) is kept."""
    d = ctx.model.head_dim
    built = sum(n * causal_pairs(q, kept(c)) for q, c, n in ctx.batch.groups)
    share = op.shape.pairs / built if built else 1.0
    return attention_op(ctx.batch.groups, int(op.shape.heads), int(op.shape.kv_heads), d, d,
                        ctx.prec.act_bytes, ctx.prec.kv_bytes, ctx.kv_width, op.count if count is None else count,
                        op.dtype, op.name, kv_read=lambda n: ctx.kv.token_bytes(n, ctx.kv_width),
                        pair_fraction=None if share == 1.0 else (lambda q, c: share), role=op.role)


def layer_ops_for(ops: list[Op], ctx: PassContext, tokens: float, layers: int, prefix: str,
                  roles=None) -> list[Op]:
    """The pass's per-layer ops (those run once per layer) priced again for `tokens` other tokens of its
    sequences (summed over them) in `layers` layers, for a technique that runs a few layers over more tokens
    than the rest (CacheBlend's first layers). Weight GEMMs at m = tokens (a separate kernel: the weights are
    read again); streaming ops scaled by `tokens` over the pass's own; attention with those tokens attending
    each other causally per sequence (a lower bound where they sit among the pass's computed tokens).
    `roles`: only the ops of these graph roles (None: all). Written for dense layers: a grouped (MoE expert)
    GEMM is priced as one dense GEMM of its n x k, an over-count."""
    seqs = max(1, sequences(ctx))
    own = sum(n * q for q, _, n in ctx.batch.groups)
    out: list[Op] = []
    for op in ops:
        role = graph_role(op)
        if op.count != ctx.layers or (roles is not None and role not in roles) or tokens <= 0:
            continue
        name = f"{prefix}_{op.name}"
        if is_weight_gemm(op):
            new = gemm(name, tokens, op.shape.n, op.shape.k, ctx.prec.act_bytes, ctx.prec.weight_bytes, op.dtype,
                       layers)
        elif op.op_class is OpClass.ATTENTION_PREFILL and isinstance(op.shape, AttentionShape):
            a = op.shape
            new = attention_op([(tokens / seqs, 0, seqs)], int(a.heads), int(a.kv_heads), a.d_qk, a.d_v,
                               ctx.prec.act_bytes, ctx.prec.kv_bytes, ctx.kv_width, layers, op.dtype, name)
        elif isinstance(op.shape, StreamShape) and own:
            f = tokens / own
            new = replace(op, name=name, flops=op.flops * f, bytes={k: v * f for k, v in op.bytes.items()},
                          shape=replace(op.shape, elements=op.shape.elements * f,
                                        kv_write_bytes=op.shape.kv_write_bytes * f), count=layers, role=None)
        else:
            continue
        out.append(replace(new, part_of=role))
    return out


def vote_ops(prefix: str, ctx: PassContext, window: int, budget: float, vote_layers: int) -> list[Op]:
    """Observation-window voting at the end of prefill (SnapKV, WindowKV) in `vote_layers` layers:
    the last `window` prompt queries against every prompt key (tensor cores; keys read, fp32 scores
    written) and a CUDA-core kernel reading the scores back for softmax, window sum, pooling and
    top-k; then in every layer a gather of the `budget` kept tokens' K/V into the compressed cache
    (read + write). A chunked prompt pays for its own keys in each chunk (summing to the prompt)."""
    if ctx.decode:
        return []
    h, kvh, d = max(1, heads(ctx)), max(1, ctx.model.num_kv_heads // ctx.par.tp), ctx.model.head_dim
    new = sum(n * q for q, _, n in ctx.batch.groups)
    window = min(window, max(q for q, _, _ in ctx.batch.groups))
    scores = new * window * h
    keys = new * kvh * d * ctx.prec.kv_bytes
    vote = Op(f"{prefix}_vote", OpClass.ATTENTION_PREFILL, 2.0 * scores * d, {"hbm": keys + scores * 4.0},
              ctx.prec.activation, AttentionShape(heads=h, kv_heads=kvh, sequences=ctx.batch.sequences),
              vote_layers, f"{window} window queries x {new:g} prompt keys x {h} heads; fp32 scores written")
    select = elementwise(f"{prefix}_select", scores * VOTE_OPS, scores * 4.0 * 2, scores, vote_layers,
                         f"{scores:g} fp32 scores read twice for softmax/sum/pool/top-k")
    first = sum(n for _, c, n in ctx.batch.groups if c == 0)   # sequences whose compression this pass pays
    kept = first * min(budget, max(q for q, _, _ in ctx.batch.groups))
    gather = elementwise(f"{prefix}_gather", 0.0, 2 * ctx.kv.token_bytes(kept, ctx.kv_width),
                         kept * ctx.kv.width(ctx.kv_width), ctx.kv_layers, f"{kept:g} kept tokens' K/V read + written")
    return [vote, select, gather]
