"""Family D: sparse attention: the full KV stays (on the GPU or the CPU) but each step reads or
computes only a selected part, at the price of a selection step. This file: decode selection with
the KV on the GPU.

Decode selection works through `read_tokens` (the tokens every attention layer reads) plus
`rewrite_ops` where some layers differ (layers kept dense, KV fetched from the host, attention on the
CPU) and `extra_ops` for the selection itself (scores over page summaries, labels, codes or keys;
top-k; reconstruction; transfers).

Where the full KV lives is stated by every technique. Techniques that keep it on the CPU shrink the
GPU's KV bytes through `transform_kv` (what stays on the GPU); the host-resident part is described in
the docstring but not yet checked against the host tier's capacity (memory tiers are issue 5).
Selection costs are charged on passes whose attention reads the selected tokens (steps of at most
16 new tokens per sequence, as `graph.attended_groups` decides).

Family D lives in three files by where the work happens: sparse_attention.py (decode selection, KV
on the GPU), sparse_attention_host.py (decode selection, full KV on the CPU) and
sparse_attention_prefill.py (prefill sparsity); their shared cost pieces are in kit.py.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, causal_pairs
from ..context import KVFormat, PassContext
from ..ops import Op, OpClass, streaming, transfer
from .base import Technique, param, register
from .kit import (DEQUANT_OPS_PER_ELEMENT, MINFERENCE_LAST_Q, MINFERENCE_SLASH, MINFERENCE_VERTICAL,
                  SOFTMAX_OPS_PER_SCORE, cache_element_bytes, cached, dense_first_layers, heads, key_dim, kv_heads,
                  pattern_estimate_op, rebuilt_attention, replace_attention, require_host, require_separate_keys,
                  score_op, stepping, vertical_slash_pairs, window_pairs)


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
        return [streaming("quest_page_scores", OpClass.ELEMENTWISE, meta, 1, 0, 2.0 * heads(ctx) / kvh,
                          ctx.prec.act_bytes, ctx.prec.activation, sparse, extra_bytes=pages * heads(ctx) * 4.0)]


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
    gathers = ("decode",)   # token-level selection: its kernel gathers the chosen keys by index
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
    gathers = ("prefill", "decode")   # token-level selection: its kernel gathers the chosen keys by index
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
    gathers = ("decode",)   # token-level selection: its kernel gathers the chosen keys by index
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
    heads compute only their Lambda-shaped (`prefill_sink` + `prefill_local`) pairs, a wider window than decode's
    (the release's context attention: mit-han-lab/omniserve omniserve/engine/arg_utils.py, ctx_sink_token 128,
    ctx_local_token 8192 against dec_sink_token 128, dec_local_token 256); dense heads stay dense up to
    `minference_after` keys, beyond which they run MInference's vertical-slash prefill sparsity (LServe
    section 4.3: 'LServe is also compatible with the prefilling dynamic sparsity in MInference, which we
    activated after 128K sequence length'), with its pattern estimate on the dense heads."""

    name = "lserve"
    family = "D"
    paper = "LServe: Efficient Long-sequence LLM Serving with Unified Sparse Attention"
    slots = ("decode selection", "prefill sparsity", "kv budget")
    budget_param = "budget"
    streaming_share: float = param(0.5, "share of heads converted to streaming heads")
    sink: int = param(128, "first tokens a streaming head keeps and decodes with (the release's dec_sink_token)",
                      "tokens")
    local: int = param(256, "newest tokens a streaming head keeps and decodes with (the release's dec_local_token)",
                       "tokens")
    prefill_sink: int = param(128, "first tokens a streaming head attends in prefill (the release's ctx_sink_token)",
                              "tokens")
    prefill_local: int = param(8192, "newest tokens a streaming head attends in prefill (the release's "
                                     "ctx_local_token)", "tokens")
    budget: int = param(4096, "tokens a dense head reads per decode step (constant page budget)", "tokens")
    page_size: int = param(16, "tokens per logical page scored by its min/max keys", "tokens")
    reuse: int = param(4, "consecutive decode steps that share one page selection", "steps")
    minference_after: int = param(131072, "keys past which dense heads prefill with MInference's vertical-slash "
                                          "sparsity (the paper's 128K; 0: never)", "tokens")

    def check_params(self) -> None:
        self.require(0 <= self.streaming_share < 1, "streaming_share", "a share from 0 to below 1")
        self.require(self.sink >= 0, "sink", "a non-negative integer")
        self.require(self.local >= 1, "local", "a positive integer")
        self.require(self.prefill_sink >= 0, "prefill_sink", "a non-negative integer")
        self.require(self.prefill_local >= 1, "prefill_local", "a positive integer")
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.page_size >= 1, "page_size", "a positive integer")
        self.require(self.reuse >= 1, "reuse", "a positive integer")
        self.require(self.minference_after >= 0, "minference_after", "a non-negative number of tokens (0: never)")

    @property
    def window(self) -> int:
        return self.sink + self.local

    def _vertical_slash(self, q: float, n: float) -> bool:
        """Whether a prefill pass of q queries after n keys runs its dense heads vertical-slash sparse."""
        return q > DECODE_MAX_QUERIES and 0 < self.minference_after < n + q

    def gathers_tokens(self, q: int, c: int) -> bool:
        """Only the dense heads' prefill past `minference_after` gathers (MInference's vertical-slash kernel); the
        streaming heads' Lambda blocks and decode's whole pages are read as a dense kernel reads them."""
        return self._vertical_slash(q, c)

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
        dense = (vertical_slash_pairs(q, n, MINFERENCE_VERTICAL, MINFERENCE_SLASH) if self._vertical_slash(q, n)
                 else causal_pairs(q, n))
        wanted = (1 - s) * dense + s * window_pairs(q, n, self.prefill_sink + self.prefill_local)
        return wanted / causal_pairs(q, c) if causal_pairs(q, c) else 1.0

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            sparse = any(self._vertical_slash(q, c) for q, c, _ in ctx.batch.groups)   # c: cached, before eviction
            return ([pattern_estimate_op(ctx, MINFERENCE_LAST_Q, 1 - self.streaming_share,
                                         "lserve_dense_pattern_estimate")] if sparse else [])
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
