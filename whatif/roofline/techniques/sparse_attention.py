"""Family D: sparse attention: the full KV stays (on the GPU or the CPU) but each step reads or
computes only a selected part, at the price of a selection step.

Decode selection works through `read_tokens` (the tokens every attention layer reads) plus
`rewrite_ops` where some layers differ (layers kept dense, KV fetched from the host, attention on the
CPU) and `extra_ops` for the selection itself (scores over page summaries, labels, codes or keys;
top-k; reconstruction; transfers). Prefill sparsity works through `pair_fraction` (the share of the
causal (query, key) pairs computed) plus the cost of finding the pattern.

Where the full KV lives is stated by every technique. Techniques that keep it on the CPU shrink the
GPU's KV bytes through `transform_kv` (what stays on the GPU); the host-resident part is described in
the docstring but not yet checked against the host tier's capacity (memory tiers are issue 5).
Selection costs are charged on passes whose attention reads the selected tokens (steps of at most
16 new tokens per sequence, as `graph.attended_groups` decides).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, attention_op, causal_pairs
from ..ops import Op, streaming, transfer
from .base import HostPath, KVFormat, PassContext, Technique, param
from .kv_compression import DEQUANT_OPS_PER_ELEMENT
from .registry import register

ATTENTION_OPS = ("attention", "attention_mla")
TOPK_OPS_PER_SCORE = 4.0       # radix-select passes + compare per candidate score, CUDA-core ops; assumed
SOFTMAX_OPS_PER_SCORE = 5.0    # max, subtract, exp, sum, scale per score, CUDA-core ops; assumed
ROPE_OPS_PER_ELEMENT = 6.0     # rotary embedding of a reconstructed key element (as graph.py's rope op); assumed


# ---------------------------------------------------------------- shared cost pieces
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
    new = attention_op(groups, int(s["heads"]), int(s["kv_heads"]), int(s["d_qk"]), int(s["d_v"]),
                       ctx.prec.act_bytes, ctx.prec.kv_bytes, ctx.kv_width, count or op.count, op.dtype,
                       name or op.name, kv_read=kv_read)
    extra = {k: v for k, v in s.items() if k not in new.shape}
    if "alu_ops" in extra and op.hbm_bytes:
        extra["alu_ops"] *= new.hbm_bytes / op.hbm_bytes
    return replace(new, shape={**new.shape, **extra})


def dense_first_layers(ops: list[Op], ctx: PassContext, dense: int, label: str) -> list[Op]:
    """Decode attention ops whose first `dense` layer instances attend the whole cached context (in
    layer order across the dense/MoE op groups; every pipeline stage is treated as holding them)."""
    left = min(dense, ctx.layers)
    out: list[Op] = []
    for op in ops:
        if left > 0 and op.name in ATTENTION_OPS and op.op_class == "attention_decode":
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
        if op.name in ATTENTION_OPS and op.op_class == "attention_decode":
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
    return Op(name, "attention_decode", summaries * flops_per_summary, {"hbm": hbm}, ctx.prec.activation,
              {"elements": summaries, "scores": scores, "alu_ops": alu}, count,
              f"{summaries:g} summary elements x {summary_bytes:g} B scored against the query; "
              f"{scores:g} fp32 scores written and read by top-k" + (f"; {note}" if note else ""))


# ---------------------------------------------------------------- decode selection, KV on the GPU
@register
@dataclass(frozen=True)
class Quest(Technique):
    """Query-aware page selection; the full KV stays on the GPU. Each decode step reads only the
    `budget` tokens of the pages whose stored per-channel min/max keys promise the highest scores,
    except in the first `dense_layers` layers, which Quest leaves dense (their attention is not sparse)
    and which read the whole context. Costs: per page, the min and max key vectors (2 x head_dim per
    KV head) are read and scored against the query, and a top-k picks the pages, in every sparse layer.
    Prefill is unchanged. The page summaries (1/page_size of the key cache) are not charged to memory."""

    name = "quest"
    family = "D"
    paper = "Quest: Query-Aware Sparsity for Efficient Long-Context LLM Inference"
    slots = ("decode selection",)
    budget_param = "budget"
    budget: int = param(4096, "tokens read per decode step", "tokens")
    page_size: int = param(16, "tokens per page", "tokens")
    dense_layers: int = param(2, "first layers kept dense (the paper does not apply Quest to the first two)",
                              "layers")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.page_size >= 1, "page_size", "a positive integer")
        self.require(self.dense_layers >= 0, "dense_layers", "a non-negative integer")

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.budget)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx) or not self.dense_layers:
            return ops
        return dense_first_layers(ops, ctx, self.dense_layers, "dense layer (Quest skips it)")

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        sparse = ctx.layers - min(self.dense_layers, ctx.layers)
        if not stepping(ctx) or sparse <= 0:
            return []
        kvh = kv_heads(ctx)
        pages = cached(ctx) / self.page_size
        meta = pages * 2 * kvh * key_dim(ctx)        # min and max key per page
        return [streaming("quest_page_scores", "elementwise", meta, 1, 0, 2.0 * heads(ctx) / kvh, ctx.prec.act_bytes,
                          ctx.prec.activation, sparse, extra_bytes=pages * heads(ctx) * 4.0)]


@register
@dataclass(frozen=True)
class TidalDecode(Technique):
    """Position-persistent sparse attention; the full KV stays on the GPU. The first `dense_layers`
    layers attend the whole context; `selection_layers` token-selection layers (the third layer and
    one re-selection layer midway) also run full attention, write every head's scores and pick the
    top `budget` tokens; every other layer reuses that selection and reads only `budget` tokens. So
    dense_layers + selection_layers layers read the whole KV and pay a top-k over heads x context
    scores; the rest read `budget` tokens with no selection cost at all. Prefill is unchanged."""

    name = "tidaldecode"
    family = "D"
    paper = "TidalDecode: Fast and Accurate LLM Decoding with Position Persistent Sparse Attention"
    slots = ("decode selection",)
    budget_param = "budget"
    budget: int = param(256, "tokens read by the sparse layers (the paper's efficiency benchmark default)",
                        "tokens")
    dense_layers: int = param(2, "first layers with plain full attention", "layers")
    selection_layers: int = param(2, "layers that run full attention and select tokens (layer 2 and a "
                                     "re-selection layer)", "layers")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.dense_layers >= 0, "dense_layers", "a non-negative integer")
        self.require(self.selection_layers >= 1, "selection_layers", "a positive integer")

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.budget)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return ops
        return dense_first_layers(ops, ctx, self.dense_layers + self.selection_layers,
                                  "full-attention or token-selection layer")

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return []
        count = max(0, min(self.selection_layers, ctx.layers - min(self.dense_layers, ctx.layers)))
        if not count:
            return []
        scores = cached(ctx) * heads(ctx)
        return [score_op("tidal_topk", ctx, 0.0, 0.0, scores, count, 0.0,
                         note="scores emitted by the selection layer's full attention")]


@register
@dataclass(frozen=True)
class TokenSelect(Technique):
    """Dynamic token-level KV selection; the full KV stays on the GPU. Every layer scores all cached
    keys against the query per head (Q.K dot products over the whole key cache: it reads every key),
    softmaxes each head's scores and sums them (soft voting), and keeps the top `budget` tokens plus
    `sink` first and `local` newest ones; attention then reads only those. The Selection Cache reuses
    the previous step's selection when consecutive queries are similar, so the selection is paid on
    (1 - reuse) of the decode steps. Chunked prefill selects the same way once per chunk (with the
    chunk's mean query), so a chunk's queries attend the selected tokens plus the chunk itself."""

    name = "tokenselect"
    family = "D"
    paper = ("TokenSelect: Efficient Long-Context Inference and Length Extrapolation for LLMs via Dynamic "
             "Token-Level KV Cache Selection")
    slots = ("decode selection", "prefill sparsity")
    budget_param = "budget"
    budget: int = param(2048, "tokens selected per layer (top-k)", "tokens")
    sink: int = param(128, "first tokens always attended", "tokens")
    local: int = param(512, "newest tokens always attended", "tokens")
    reuse: float = param(0.5, "share of decode steps that reuse the previous selection (Selection Cache hit "
                              "rate; assumed, not from the paper)")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.sink >= 0, "sink", "a non-negative integer")
        self.require(self.local >= 0, "local", "a non-negative integer")
        self.require(0 <= self.reuse < 1, "reuse", "a share from 0 to below 1")

    @property
    def attended(self) -> int:
        return self.sink + self.budget + self.local

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.attended)

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES or c <= self.attended:
            return 1.0
        return (q * self.attended + q * (q + 1) / 2) / causal_pairs(q, c)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        h, kvh, d = heads(ctx), kv_heads(ctx), key_dim(ctx)
        key_bytes = cache_element_bytes(ctx)
        if stepping(ctx):
            share, what = 1 - self.reuse, f"paid on {1 - self.reuse:.2g} of the steps (Selection Cache)"
            tokens = sum(n * c for _, c, n in ctx.batch.groups if c > self.attended)
        else:   # one selection per prefill chunk (its mean query) over the chunk's cached tokens
            share, what = 1.0, "once per prefill chunk, with the chunk's mean query"
            tokens = sum(n * c for q, c, n in ctx.batch.groups if q > DECODE_MAX_QUERIES and c > self.attended)
        if not tokens:
            return []
        keys = tokens * kvh * d * share
        scores = tokens * h * share
        return [score_op("tokenselect_scores", ctx, keys, key_bytes, scores, ctx.layers, 2.0 * h / kvh,
                         alu_ops=scores * SOFTMAX_OPS_PER_SCORE, note=f"every cached key read; {what}")]


@register
@dataclass(frozen=True)
class DoubleSparsity(Technique):
    """Token sparsity chosen by channel sparsity. Offline calibration finds each head's outlier
    channels; a label cache holds those `channel_share` of the key channels at `label_bits` bits. Each
    decode step scores every cached token from the labels only (reads channel_share x label_bits/16 of
    the key bytes), takes the top `token_share` tokens per head and attends only to them, reading their
    full K and V. Memory: the full KV stays on the GPU and the label cache is added. With `offload`,
    the full KV lives in CPU memory and only the label cache stays on the GPU; each layer's selected
    tokens (token_share of K and V) cross the host link into a double buffer, prefetched while the
    previous layer computes (an overlapped transfer), and prefill copies the prompt's KV to the CPU.
    The double buffer (two layers' selected tokens) is not charged to GPU memory; the host copy is not
    yet checked against the host tier's capacity (issue 5)."""

    name = "double_sparsity"
    family = "D"
    paper = "Post-Training Sparse Attention with Double Sparsity"
    slots = ("decode selection",)
    budget_param = "token_share"
    token_share: float = param(1 / 16, "share of cached tokens each step attends (token sparsity)")
    channel_share: float = param(1 / 16, "share of key channels in the label cache (channel sparsity)")
    label_bits: int = param(4, "bits per label-cache element (the paper's quantized label cache; assumed)")
    offload: bool = param(False, "keep the full KV in CPU memory and fetch the selected tokens each step")

    def check_params(self) -> None:
        self.require(0 < self.token_share <= 1, "token_share", "a share above 0 and at most 1")
        self.require(0 < self.channel_share <= 1, "channel_share", "a share above 0 and at most 1")
        self.require(self.label_bits in (2, 3, 4, 8, 16), "label_bits", "one of 2, 3, 4, 8, 16")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    @property
    def label_bytes(self) -> float:
        """Label-cache bytes per cached K+V element (labels cover channel_share of the keys only)."""
        return self.channel_share * self.label_bits / 8 / 2

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        if self.offload:
            return replace(kv, element_bytes=self.label_bytes, residual_tokens=0)
        return replace(kv, element_bytes=kv.element_bytes + self.label_bytes)

    def read_tokens(self, stored: float) -> float:
        return min(stored, max(1.0, stored * self.token_share))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not (self.offload and stepping(ctx)):
            return ops
        return replace_attention(ops, lambda op: rebuilt_attention(op, ctx, self.read_tokens, ctx.kv.full_bytes))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        kvh, h, d = kv_heads(ctx), heads(ctx), key_dim(ctx)
        if not stepping(ctx):
            if not self.offload:
                return []
            host = require_host(self.name, ctx)
            new = ctx.batch.tokens * ctx.kv_width * ctx.kv.full_bytes
            return [transfer("double_sparsity_kv_offload", new, host, ctx.layers, overlap=True, direction="d2h")]
        labels = cached(ctx) * kvh * d * self.channel_share
        scores = cached(ctx) * h
        ops = [score_op("double_sparsity_label_scores", ctx, labels, self.label_bits / 8, scores, ctx.layers,
                        2.0 * h / kvh, alu_ops=labels * DEQUANT_OPS_PER_ELEMENT,
                        note=f"{self.channel_share:.3g} of the key channels at {self.label_bits} bits")]
        if self.offload:
            host = require_host(self.name, ctx)
            fetched = sum(n * self.read_tokens(c) for _, c, n in ctx.batch.groups) * ctx.kv_width * ctx.kv.full_bytes
            ops.append(transfer("double_sparsity_kv_fetch", fetched, host, ctx.layers, overlap=True))
        return ops


@register
@dataclass(frozen=True)
class LServe(Technique):
    """Unified sparse attention. A `streaming_share` of the heads become streaming heads that keep and
    attend only `sink` + `local` tokens (their KV beyond that is dropped, so memory per sequence is
    (1 - s) x n + s x window tokens); the other (dense) heads keep the full KV on the GPU. In decode a
    dense head reads a constant `budget` tokens: pages chosen hierarchically by scoring each logical
    page's min/max keys (Quest-style summaries of `page_size` tokens), the selection reused for `reuse`
    consecutive steps, so the page scoring is paid once every `reuse` steps. In prefill the streaming
    heads compute only their Lambda-shaped (sink + local) block pairs; dense heads stay dense."""

    name = "lserve"
    family = "D"
    paper = "LServe: Efficient Long-sequence LLM Serving with Unified Sparse Attention"
    slots = ("decode selection", "prefill sparsity", "kv budget")
    budget_param = "budget"
    streaming_share: float = param(0.5, "share of heads converted to streaming heads")
    sink: int = param(64, "first tokens a streaming head keeps (DuoAttention's setting; assumed)", "tokens")
    local: int = param(256, "newest tokens a streaming head keeps (DuoAttention's setting; assumed)", "tokens")
    budget: int = param(4096, "tokens a dense head reads per decode step (constant page budget)", "tokens")
    page_size: int = param(16, "tokens per logical page scored by its min/max keys", "tokens")
    reuse: int = param(4, "consecutive decode steps that share one page selection", "steps")

    def check_params(self) -> None:
        self.require(0 <= self.streaming_share < 1, "streaming_share", "a share from 0 to below 1")
        self.require(self.sink >= 0, "sink", "a non-negative integer")
        self.require(self.local >= 1, "local", "a positive integer")
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.page_size >= 1, "page_size", "a positive integer")
        self.require(self.reuse >= 1, "reuse", "a positive integer")

    @property
    def window(self) -> int:
        return self.sink + self.local

    def stored_tokens(self, n: float) -> float:
        s = self.streaming_share
        return (1 - s) * n + s * min(n, self.window)

    def _context(self, stored: float) -> float:
        """The sequence length whose stored (head-averaged) tokens are `stored`."""
        s, w = self.streaming_share, self.window
        return stored if stored <= w else (stored - s * w) / (1 - s)

    def read_tokens(self, stored: float) -> float:
        n, s = self._context(stored), self.streaming_share
        return (1 - s) * min(n, self.budget) + s * min(n, self.window)

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES:
            return 1.0
        n, s = self._context(c), self.streaming_share          # c arrives as stored tokens
        full = causal_pairs(q, n)
        wanted = (1 - s) * full + s * window_pairs(q, n, self.window)
        return wanted / causal_pairs(q, c) if causal_pairs(q, c) else 1.0

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return []
        kvh = kv_heads(ctx)
        dense_kvh = kvh * (1 - self.streaming_share)
        pages = sum(n * c for _, c, n in ctx.batch.groups if c > self.budget) / self.page_size / self.reuse
        if not pages:
            return []
        meta = pages * 2 * dense_kvh * key_dim(ctx)
        scores = pages * heads(ctx) * (1 - self.streaming_share)
        return [score_op("lserve_page_scores", ctx, meta, ctx.prec.act_bytes, scores, ctx.layers,
                         2.0 * heads(ctx) / kvh,
                         note=f"dense heads' logical-page min/max keys, once every {self.reuse} steps")]


@register
@dataclass(frozen=True)
class LMInfinite(Technique):
    """Lambda-shaped attention with a distance limit: every query attends only the first `n_global`
    tokens and the `n_local` most recent ones. Decode reads n_global + n_local tokens whatever the
    context; prefill computes only the Lambda-shaped pairs. The full KV stays on the GPU (the
    implementation keeps the cache; nothing is evicted), so memory is unchanged. No selection cost."""

    name = "lm_infinite"
    family = "D"
    paper = "LM-Infinite: Simple On-the-Fly Length Generalization for Large Language Models"
    slots = ("decode selection", "prefill sparsity")
    budget_param = "n_local"
    n_global: int = param(10, "first tokens every query attends", "tokens")
    n_local: int = param(4096, "most recent tokens every query attends (Llama-2's pre-training length)", "tokens")

    def check_params(self) -> None:
        self.require(self.n_global >= 0, "n_global", "a non-negative integer")
        self.require(self.n_local >= 1, "n_local", "a positive integer")

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.n_global + self.n_local)

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES:
            return 1.0
        return window_pairs(q, c, self.n_global + self.n_local) / causal_pairs(q, c)


# ---------------------------------------------------------------- decode selection, full KV on the CPU
SHADOWKV_BUFFER_SLACK = 128   # extra tokens of the GPU staging buffer for generated tokens (ShadowKV code)
SVD_FLOPS_PER_ROW = 4.0       # x D^2 FLOPs per key row of a tall n x D SVD (Householder QR + thin U), fp32; assumed


@register
@dataclass(frozen=True)
class ShadowKV(Technique):
    """Low-rank keys on the GPU, values on the CPU. Prefill takes an SVD of each layer's pre-RoPE key
    matrix (n tokens x D = KV heads x head_dim, fp32 on the CUDA cores) and keeps on the GPU only the
    rank-`rank` factor U (rank elements per token), the rank x D factor, one landmark (mean post-RoPE
    key) per `chunk_size` tokens, `outlier_chunks` + `local_chunks` chunks of full KV and a staging
    buffer of `budget` tokens; the values are copied to CPU memory (an overlapped transfer) and the
    full KV lives there. Each decode step and layer scores the query against all landmarks, keeps the
    top budget / chunk_size chunks, rebuilds their keys (a batched GEMM U[selected] x factor, plus
    RoPE) and fetches their values over the host link; `reuse` of the selected tokens are still in
    the buffer from the previous step (temporal locality), so only the rest are rebuilt and fetched.
    The fetch overlaps only that layer's key rebuild, which is far shorter, so it is charged in line.
    Attention then reads budget + outlier + local tokens at full precision. The values in host memory
    (n x D elements per layer) are not yet checked against the host tier's capacity (issue 5)."""

    name = "shadowkv"
    family = "D"
    paper = "ShadowKV: KV Cache in Shadows for High-Throughput Long-Context LLM Inference"
    slots = ("decode selection", "kv format")
    budget_param = "budget"
    budget: int = param(2048, "sparse KV budget: tokens rebuilt/fetched per KV head and layer", "tokens")
    chunk_size: int = param(8, "tokens per chunk (one landmark each)", "tokens")
    rank: int = param(160, "rank of the pre-RoPE key factor U (per token and layer)")
    outlier_chunks: int = param(48, "chunks kept as full KV on the GPU (24 per 1024 budget tokens)", "chunks")
    local_chunks: int = param(4, "newest chunks kept as full KV on the GPU", "chunks")
    reuse: float = param(0.6, "share of selected tokens still in the GPU buffer from the last step (the paper's "
                              "cache cuts rebuild and fetch by 60%)")

    def check_params(self) -> None:
        for key in ("budget", "chunk_size", "rank"):
            self.require(getattr(self, key) >= 1, key, "a positive integer")
        self.require(self.outlier_chunks >= 0, "outlier_chunks", "a non-negative integer")
        self.require(self.local_chunks >= 0, "local_chunks", "a non-negative integer")
        self.require(0 <= self.reuse < 1, "reuse", "a share from 0 to below 1")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    @property
    def static_tokens(self) -> int:
        return (self.outlier_chunks + self.local_chunks) * self.chunk_size

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        # Per layer and sequence the GPU holds: full KV for the staging buffer, outliers and local
        # chunks (+ slack), the rank x D factor (rank x D elements = rank/2 tokens of K+V), per token
        # the U row (rank elements) and per chunk one landmark key (1/chunk of the key half).
        full = self.budget + self.static_tokens + SHADOWKV_BUFFER_SLACK + self.rank // 2
        return replace(kv, element_bytes=kv.full_bytes / (2 * self.chunk_size), residual_tokens=full,
                       token_overhead_bytes=kv.token_overhead_bytes + self.rank * kv.full_bytes)

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.budget + self.static_tokens)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return ops
        return replace_attention(ops, lambda op: rebuilt_attention(op, ctx, self.read_tokens, ctx.kv.full_bytes))

    def _selected(self, c: float) -> float:
        """Tokens per KV head chosen from the landmarks (beyond the static outlier and local chunks)."""
        return min(self.budget, max(0.0, c - self.static_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        kvh, h, d, a = kv_heads(ctx), heads(ctx), ctx.model.head_dim, ctx.prec.act_bytes
        host = require_host(self.name, ctx)
        width = kvh * d                           # key (or value) elements per token on this GPU
        if not stepping(ctx):
            tokens = ctx.batch.tokens
            svd = Op("shadowkv_key_svd", "gemm", SVD_FLOPS_PER_ROW * tokens * width ** 2,
                     {"hbm": tokens * width * 4.0 + tokens * self.rank * a}, "fp32",
                     {"m": tokens, "n": width, "k": SVD_FLOPS_PER_ROW / 2 * width}, ctx.layers,
                     f"SVD of the {width}-wide pre-RoPE keys: {SVD_FLOPS_PER_ROW:g} x D^2 fp32 FLOPs per token "
                     f"(assumed)")
            return [svd, transfer("shadowkv_value_offload", tokens * width * ctx.kv.full_bytes, host, ctx.layers,
                                  overlap=True, direction="d2h")]
        chunks = cached(ctx) / self.chunk_size
        landmarks = score_op("shadowkv_landmark_scores", ctx, chunks * width, ctx.kv.full_bytes, chunks * h,
                             ctx.layers, 2.0 * h / kvh, alu_ops=chunks * h * SOFTMAX_OPS_PER_SCORE,
                             note=f"one landmark per {self.chunk_size} tokens")
        rows = sum(n * self._selected(c) for _, c, n in ctx.batch.groups) * kvh * (1 - self.reuse)
        if rows <= 0:
            return [landmarks]
        groups = sequences(ctx) * kvh
        rebuild = Op("shadowkv_key_rebuild", "gemm", 2.0 * rows * d * self.rank,
                     {"hbm": rows * self.rank * a + groups * self.rank * d * a + rows * d * ctx.kv.full_bytes},
                     ctx.prec.activation, {"m": rows, "n": d, "k": self.rank, "groups": groups,
                                           "alu_ops": rows * d * ROPE_OPS_PER_ELEMENT}, ctx.layers,
                     f"{rows:g} key rows rebuilt as U[selected] x factor (rank {self.rank}) plus RoPE")
        fetch = transfer("shadowkv_value_fetch", rows * d * ctx.kv.full_bytes, host, ctx.layers)
        return [landmarks, rebuild, fetch]


A2ATS_CPU_BANDWIDTH = 300e9   # B/s the CPU attention streams KV from DRAM: 8 x DDR5-4800 channels (~307 GB/s); assumed


@register
@dataclass(frozen=True)
class A2ATS(Technique):
    """Retrieval-based KV reduction with vector-quantized keys; the full KV lives in CPU memory.
    Prefill encodes each key (after windowed RoPE) to its nearest codebook centroid (a GEMM against
    the codebook plus an argmin) and copies K and V to the CPU (an overlapped transfer); the GPU keeps
    only the codes (`code_bits` per key channel) and the newest `window` tokens' full KV. Each decode
    step and layer scores every token from its code (one query x codebook product, then a lookup per
    token and head), takes the top `topk` share of the tokens, and attends to them where the KV is:
    with `cpu_attention` (the paper's heterogeneous design) the CPU streams the selected K and V from
    DRAM at the CPU's memory bandwidth and returns a partial result merged with the GPU's window
    attention; otherwise the selected K and V cross the host link and the GPU attends. The host copy is
    not yet checked against the host tier's capacity (issue 5)."""

    name = "a2ats"
    family = "D"
    paper = ("A^2ATS: Retrieval-Based KV Cache Reduction via Windowed Rotary Position Embedding and "
             "Query-Aware Vector Quantization")
    slots = ("decode selection", "kv format")
    budget_param = "topk"
    topk: float = param(0.03, "share of cached tokens retrieved per step (the released code's default)")
    code_bits: float = param(12 / 128, "bits of VQ code per key channel on the GPU (a 12-bit, 4096-centroid code "
                                       "per 128-channel head; assumed)")
    window: int = param(256, "newest tokens kept as full KV on the GPU (assumed)", "tokens")
    cpu_attention: bool = param(True, "attend to the retrieved tokens on the CPU (else fetch them to the GPU)")
    cpu_bandwidth: float = param(A2ATS_CPU_BANDWIDTH / 1e9, "CPU memory bandwidth for CPU attention (8-channel "
                                                            "DDR5-4800; assumed)", "GB/s")

    def check_params(self) -> None:
        self.require(0 < self.topk <= 1, "topk", "a share above 0 and at most 1")
        self.require(0 < self.code_bits <= 16, "code_bits", "bits per key channel above 0 and at most 16")
        self.require(self.window >= 0, "window", "a non-negative integer")
        self.require(self.cpu_bandwidth > 0, "cpu_bandwidth", "a positive bandwidth in GB/s")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, element_bytes=self.code_bits / 8 / 2, residual_tokens=self.window)

    def _retrieved(self, c: float) -> float:
        return min(max(0.0, c - self.window), self.topk * c)

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.window + self._retrieved(stored))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return ops
        if self.cpu_attention:   # the GPU attends only its window; the CPU attends the retrieved tokens
            return replace_attention(ops, lambda op: rebuilt_attention(
                op, ctx, lambda c: min(c, self.window), ctx.kv.full_bytes, name=op.name + "_window"))
        return replace_attention(ops, lambda op: rebuilt_attention(op, ctx, self.read_tokens, ctx.kv.full_bytes))

    def _centroids(self, ctx: PassContext) -> float:
        return 2.0 ** min(24.0, self.code_bits * ctx.model.head_dim)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        kvh, h, d, a = kv_heads(ctx), heads(ctx), ctx.model.head_dim, ctx.prec.act_bytes
        host = require_host(self.name, ctx)
        cents = self._centroids(ctx)
        if not stepping(ctx):
            tokens = ctx.batch.tokens
            encode = Op("a2ats_key_encode", "gemm", 2.0 * tokens * kvh * cents * d,
                        {"hbm": tokens * kvh * d * a + kvh * cents * d * a + tokens * kvh * self.code_bits * d / 8},
                        ctx.prec.activation, {"m": tokens * kvh, "n": cents, "k": d,
                                              "alu_ops": tokens * kvh * cents}, ctx.layers,
                        f"each key against {cents:g} centroids, then an argmin")
            return [encode, transfer("a2ats_kv_offload", tokens * ctx.kv_width * ctx.kv.full_bytes, host, ctx.layers,
                                     overlap=True, direction="d2h")]
        seqs = sequences(ctx)
        codes = cached(ctx) * kvh * d                  # key elements the codes stand for
        table = seqs * h * cents * d * 2.0             # query x codebook products
        scores = score_op("a2ats_code_scores", ctx, codes, self.code_bits / 8, cached(ctx) * h, ctx.layers,
                          (table + cached(ctx) * h) / max(codes, 1.0),
                          note=f"query x {cents:g}-centroid codebook, then one lookup per token and head")
        retrieved = sum(n * self._retrieved(c) for _, c, n in ctx.batch.groups) * ctx.kv_width * ctx.kv.full_bytes
        if self.cpu_attention:
            dram = HostPath("host DRAM (attention on the CPU)", self.cpu_bandwidth * 1e9, 2 * host.latency)
            queries = sum(n * q for q, _, n in ctx.batch.groups)
            merge = streaming("a2ats_merge", "elementwise", queries * h * d, 2, 1, 4, a, ctx.prec.activation,
                              ctx.layers, extra_bytes=queries * h * 2 * 4.0)
            return [scores, transfer("a2ats_cpu_attention", retrieved, dram, ctx.layers), merge]
        return [scores, transfer("a2ats_kv_fetch", retrieved, host, ctx.layers)]


# ---------------------------------------------------------------- prefill sparsity
@register
@dataclass(frozen=True)
class MInference(Technique):
    """Dynamic sparse prefill: each head has an offline-chosen pattern (A-shape, vertical-slash or
    block-sparse) whose indices are built online, so a query attends about `vertical` + `slash` keys
    instead of its whole prefix (or, with `density` > 0, that share of the causal pairs). The index
    build multiplies the last `last_q` queries of the pass by all its keys (a small attention over
    every key, scores written in fp32) and sums them along columns and diagonals to pick the
    vertical and slash lines. KV stays on the GPU; decode is unchanged."""

    name = "minference"
    family = "D"
    paper = "MInference 1.0: Accelerating Pre-filling for Long-Context LLMs via Dynamic Sparse Attention"
    slots = ("prefill sparsity",)
    vertical: int = param(1000, "vertical lines (key columns) per head", "tokens")
    slash: int = param(6096, "slash lines (diagonals) per head", "tokens")
    last_q: int = param(64, "last queries whose attention estimates the pattern", "tokens")
    density: float = param(0.0, "share of causal pairs computed; 0 derives it from vertical + slash")

    def check_params(self) -> None:
        self.require(self.vertical >= 0, "vertical", "a non-negative integer")
        self.require(self.slash >= 1, "slash", "a positive integer")
        self.require(self.last_q >= 1, "last_q", "a positive integer")
        self.require(0 <= self.density <= 1, "density", "a share from 0 to 1 (0: from vertical + slash)")

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES:
            return 1.0
        if self.density > 0:
            return self.density
        return window_pairs(q, c, self.vertical + self.slash) / causal_pairs(q, c)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            return []
        h, kvh, d = heads(ctx), kv_heads(ctx), key_dim(ctx)
        groups = [(min(q, self.last_q), c + q, n) for q, c, n in ctx.batch.groups]
        pairs = sum(n * lq * keys for lq, keys, n in groups)
        keys = sum(n * keys for _, keys, n in groups)
        scores = pairs * h
        return [Op("minference_pattern_estimate", "attention_prefill", 2.0 * scores * d,
                   {"hbm": keys * kvh * d * ctx.prec.kv_bytes + scores * 4.0 * 2}, ctx.prec.activation,
                   {"pairs": pairs, "alu_ops": scores * (SOFTMAX_OPS_PER_SCORE + TOPK_OPS_PER_SCORE)}, ctx.layers,
                   f"last {self.last_q} queries x all keys, fp32 scores summed along columns and diagonals")]


SALE_SCORE_OPS_PER_PAIR = 3.0   # dequant scale, subtract row max, compare with the threshold per pair; assumed


@register
@dataclass(frozen=True)
class SALE(Technique):
    """Low-bit estimation then block-sparse prefill. Queries and keys are quantized to `bits` bits,
    every causal (query, key) pair's score is estimated by a low-bit tensor-core product (charged as
    int8 work scaled by bits/8: int4 MMA runs at twice the int8 rate where it exists) and compared
    against a per-head Relative Attention Score threshold on the CUDA cores, and the resulting block
    mask keeps `density` of the blocks, which the block-sparse attention computes. KV stays on the GPU;
    decode is unchanged. On GPUs without int4 tensor cores (Hopper) the 4-bit pass is under-charged."""

    name = "sale"
    family = "D"
    paper = "SALE : Low-bit Estimation for Efficient Sparse Attention in Long-context LLM Prefilling"
    slots = ("prefill sparsity",)
    density: float = param(0.15, "share of attention blocks computed after selection (assumed, not from the paper)")
    bits: int = param(4, "bits of the quantized queries and keys in the estimation pass")

    def check_params(self) -> None:
        self.require(0 < self.density <= 1, "density", "a share above 0 and at most 1")
        self.require(self.bits in (4, 8), "bits", "4 or 8")

    def pair_fraction(self, q: int, c: int) -> float:
        return 1.0 if q <= DECODE_MAX_QUERIES else self.density

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            return []
        h, kvh, d = heads(ctx), kv_heads(ctx), key_dim(ctx)
        pairs = sum(n * causal_pairs(q, c) for q, c, n in ctx.batch.groups)
        queries = ctx.batch.tokens
        keys = sum(n * (c + q) for q, c, n in ctx.batch.groups)
        low = self.bits / 8
        quant = streaming("sale_quantize_qk", "elementwise", queries * (h + kvh) * d, 1, 0, 6.0, ctx.prec.act_bytes,
                          ctx.prec.activation, ctx.layers, extra_bytes=queries * (h + kvh) * d * low)
        estimate = Op("sale_score_estimate", "attention_prefill", 2.0 * pairs * h * d * low,
                      {"hbm": (queries * h + keys * kvh) * d * low + pairs * h / 64 ** 2},
                      "int8", {"pairs": pairs, "alu_ops": pairs * h * SALE_SCORE_OPS_PER_PAIR}, ctx.layers,
                      f"{self.bits}-bit QK^T over every causal pair (as int8 work x {low:g}); "
                      f"{SALE_SCORE_OPS_PER_PAIR:g} CUDA-core ops per score; 64x64 block mask written")
        return [quant, estimate]


@register
@dataclass(frozen=True)
class HyperAttention(Technique):
    """Near-linear approximate prefill attention. The causal score matrix is split recursively: the
    two diagonal (causal) halves recurse and the off-diagonal (non-causal) block is approximated, each
    query there computing only the `block_size` keys of its sortLSH bucket block plus `sample_size`
    sampled key columns; below `min_seq_len` tokens attention is exact. Costs: hashing every query and
    key with `lsh_projections` random projections, sorting and permuting Q, K and V by hash. A chunk
    of q new tokens after c cached is charged the pairs the recursion adds from c to c + q. KV stays on
    the GPU; decode is unchanged."""

    name = "hyperattention"
    family = "D"
    paper = "HyperAttention: Long-context Attention in Near-Linear Time"
    slots = ("prefill sparsity",)
    block_size: int = param(256, "keys per LSH bucket block each query attends (the released code's default)",
                            "tokens")
    sample_size: int = param(256, "sampled key columns per query (the released code's default)", "tokens")
    min_seq_len: int = param(4096, "length below which attention stays exact (assumed)", "tokens")
    lsh_projections: int = param(7, "random projections per hash (the released code's default)")

    def check_params(self) -> None:
        for key in ("block_size", "sample_size", "min_seq_len", "lsh_projections"):
            self.require(getattr(self, key) >= 1, key, "a positive integer")

    def pairs(self, n: float) -> float:
        """(query, key) pairs the causal recursion computes for a sequence of n tokens."""
        if n <= self.min_seq_len:
            return n * (n + 1) / 2
        half = n / 2
        return 2 * self.pairs(half) + half * min(half, self.block_size + self.sample_size)

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES:
            return 1.0
        return min(1.0, (self.pairs(c + q) - self.pairs(c)) / causal_pairs(q, c))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            return []
        h, kvh, d, a = heads(ctx), kv_heads(ctx), key_dim(ctx), ctx.prec.act_bytes
        tokens = ctx.batch.tokens
        rows = tokens * (h + kvh)                           # query and key rows hashed and sorted
        moved = tokens * (h + 2 * kvh) * d                  # Q, K and V elements permuted into hash order
        sort_ops = rows * TOPK_OPS_PER_SCORE * math.log2(max(tokens, 2))
        return [Op("hyperattention_lsh_sort", "attention_prefill", 2.0 * self.lsh_projections * rows * d,
                   {"hbm": 2 * moved * a}, ctx.prec.activation, {"elements": moved, "alu_ops": sort_ops}, ctx.layers,
                   f"{self.lsh_projections} projections per hashed row, a sort of {rows:g} rows, "
                   f"Q/K/V permuted (read + write)")]
