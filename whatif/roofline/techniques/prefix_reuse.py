"""Family E: prefix and shared-context reuse: shared KV computed once, stored once and, with a
shared-prefix attention kernel, read once per batch instead of once per sequence; or cached chunks
of a prompt loaded from a slower tier (or a network) instead of recomputed.

How the chunk-reuse techniques express a prompt: `prefill_units` says which prompt tokens are
computed (and after how many cached tokens they attend), and `extra_ops` adds the load of the
cached tokens' KV (a `transfer` overlapped with the computation, as these systems pipeline loading
layer by layer) plus any selection, decoding or re-rotation kernels. The hooks see one pass at a
time, never the whole prompt, so each technique marks its own passes in a way it documents.

Long because: family E's 7 techniques sit side by side over the prefill-unit and KV-load helpers
only they use; a split would scatter one catalogue family. Shared cost pieces live in kit.py.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, attention_op
from ..ops import AttentionShape, Op, OpClass, OpRole, streaming, transfer
from ..context import HostPath, PassContext, PrefillUnit
from .base import Technique, param, register, replace_ops
from .kit import DEQUANT_OPS_PER_ELEMENT, layer_ops_for

CHECK_LAYER_ROLES = (OpRole.INPUT_NORM, OpRole.QKV_PROJ, OpRole.ROPE)   # CacheBlend's check layer on all tokens
KV_DEVIATION_FLOPS = 3.0          # subtract, square, accumulate per K/V element compared (CacheBlend), assumed
ARITH_DECODE_OPS_PER_ELEMENT = 40.0  # CDF lookup, range update, renormalise, dequantize per KV element of an
#                                   arithmetic-coded bitstream on the CUDA cores, assumed (not in the abstract)
NETWORK_LATENCY_S = 1e-3          # one round trip to the KV store before the stream starts, assumed
ROTATE_FLOPS = 6.0                # 4 multiplies + 2 adds per rotated key element pair member (RoPE), textbook


def require_shared_prefix(name: str, shared_prefix: int) -> None:
    if shared_prefix <= 0:
        raise WhatifError(f"--technique {name}: needs a shared prefix; give --shared-prefix TOKENS "
                          f"(the leading prompt tokens every sequence of the batch shares)")


def share_prefill(units: list[PrefillUnit], prefix: int, computed_once: bool) -> list[PrefillUnit]:
    """Prefill units with the shared prefix computed once (or found cached) and the rest per sequence.

    A unit computes tokens [cached, cached + new) of each of its n sequences; the part of it inside
    [0, prefix) is computed once for all of them (`computed_once`) or not at all (found in a cache).
    When a cache holds the whole unit, its last token is still computed per sequence: the first
    output token needs its logits (vLLM recomputes the last prompt token on a full hit)."""
    out: list[PrefillUnit] = []
    for new, cached, n in units:
        if cached >= prefix or new <= 0:
            out.append((new, cached, n))
            continue
        head = min(prefix, cached + new) - cached
        if computed_once:
            out.append((head, cached, 1))
        if new > head:
            out.append((new - head, cached + head, n))
        elif not computed_once:
            out.append((1, cached + new - 1, n))
    return out


def kv_bytes(ctx: PassContext, tokens: float) -> float:
    """Bytes of the KV of `tokens` tokens of one sequence, all layers of this GPU, in the cache's format."""
    return ctx.kv.token_bytes(tokens, ctx.kv_width) * ctx.kv_layers * ctx.kv.layer_share


def require_rope(name: str, model: ModelSpec) -> None:
    if model.mla is not None:
        raise WhatifError(f"--technique {name}: {model.name} uses latent attention (MLA); reusing its cached "
                          f"latents out of position is not modelled; use a MHA/GQA/MQA model")
    if model.position != "rope":
        raise WhatifError(f"--technique {name}: {model.name} uses {model.position} positions; the technique "
                          f"needs rotary (RoPE) keys")


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
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: self._split(op, ctx))

    def _split(self, op: Op, ctx: PassContext) -> list[Op]:
        p, d, a = ctx.shared_prefix, ctx.model.head_dim, ctx.prec.act_bytes
        heads, kvh = int(op.shape.heads), int(op.shape.kv_heads)
        queries = sum(n * q for q, _, n in ctx.batch.groups)

        def kv_read(tokens: float) -> float:
            return ctx.kv.token_bytes(tokens, ctx.kv_width)

        # Prefix: all queries of the batch against the same p keys, which are read once. Hydragen runs it as
        # ONE attention problem per head whose query rows are the whole batch's (inter-sequence batching), so
        # the kernel sees one sequence of `queries` rows, not one per sequence (which would price ~1000 tiny
        # causal prefills, each paying whole-tile and per-CTA costs). The fitted kernel is causal: the
        # non-causal queries x p product is priced as one causal problem of equal pairs, the same tile pairs
        # in more, shorter CTAs; FlashAttention-2's forward splits the key range when its few query tiles
        # leave SMs idle (split-KV), so the occupancy is comparable.
        pairs = queries * p
        prefix = Op("attention_shared_prefix", OpClass.ATTENTION_PREFILL, 2.0 * pairs * heads * 2 * d,
                    {"hbm": queries * heads * 2 * d * a + kv_read(p)}, op.dtype,
                    AttentionShape(pairs=pairs, heads=heads, kv_heads=kvh, d_qk=d, d_v=d, ctas=heads,
                                   max_context=p, sequences=1), op.count,
                    f"{queries} queries x {p} shared-prefix keys as one matrix product; prefix KV read once",
                    OpRole.SHARED_PREFIX_ATTENTION)
        suffix_groups = tuple((q, max(0.0, c - p), n) for q, c, n in ctx.batch.groups)
        suffix = attention_op(suffix_groups, heads, kvh, d, d, a, ctx.kv.full_bytes, ctx.kv_width, op.count,
                              op.dtype, "attention_suffix", kv_read=kv_read, role=OpRole.SUFFIX_ATTENTION)
        merge = streaming("attention_merge", OpClass.ELEMENTWISE, queries * heads * d, 2, 1, 4, a, ctx.prec.activation,
                          op.count, extra_bytes=queries * heads * 2 * 4.0)
        return [prefix, suffix, merge]


@register
@dataclass(frozen=True)
class PrefixCaching(Technique):
    """Automatic prefix caching (vLLM/SGLang-style): KV blocks of a prefix already computed are
    found by hash and reused. With `hit_rate` of the batch's shared prefix found in the cache, those
    tokens are neither recomputed in prefill (the rest of the prompt attends to them as cached
    context) nor stored twice. Decode attention still reads the prefix once per sequence. On a full
    hit the last prompt token is still computed per sequence, for its logits."""

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


# ---------------------------------------------------------------- chunk caches with selective recompute

class ChunkReuse(Technique):
    """Shared mechanism of CacheBlend and Cache-Craft (not registered itself).

    Of each prompt, the `reused` share is retrieved chunks whose KV was computed earlier (in another
    context) and is loaded; the rest (the question, chunks not cached) sits after them and is
    computed. Of the reused tokens, the `recompute` share is computed again so that the reused KV
    sees its new context. Prefill therefore computes q = (1 - reused + reused*recompute) x P tokens.

    Their attention: the computed suffix attends to the whole prompt; the recomputed tokens, spread
    over the reused chunks, attend on average to half of them. Both are folded into one prefill unit
    of q tokens after an effective number of cached tokens chosen so that the unit has the same
    causal pairs (its K/V read is then slightly under-counted: c_eff + q instead of P tokens).

    Loading: every prefill pass loads `reused / computed-share` tokens of KV per token it computes,
    from the system's host tier (tier=host) layer by layer, overlapped with the computation; with
    tier=gpu the chunk caches already sit in HBM (their pool is not in the memory plan).
    """

    reused: float
    recompute: float
    tier: str

    def check_params(self) -> None:
        self.require(0 <= self.reused <= 1, "reused", "a share from 0 to 1")
        self.require(0 <= self.recompute <= 1, "recompute", "a share from 0 to 1")
        self.require(self.reused < 1 or self.recompute > 0, "reused",
                     "below 1 when recompute is 0 (some prompt tokens must be computed)")
        self.require(self.tier in ("host", "gpu"), "tier", "host or gpu")

    @property
    def computed_share(self) -> float:
        return 1.0 - self.reused + self.reused * self.recompute

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        out: list[PrefillUnit] = []
        for new, cached, n in units:
            reused = round(self.reused * new)
            redo = round(self.recompute * reused)
            suffix = new - reused
            q = max(1, redo + suffix)
            # pairs: redo tokens attend to half the reused chunks, the suffix to all of them
            c_eff = cached + (reused - redo) * (redo / 2.0 + suffix) / q
            out.append((q, round(c_eff), n))
        return out

    def loaded_tokens(self, ctx: PassContext) -> float:
        """Tokens of KV (summed over the pass's sequences) loaded for the tokens this pass computes."""
        if ctx.decode:
            return 0.0
        return ctx.batch.tokens * self.reused / self.computed_share

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        tokens = self.loaded_tokens(ctx)
        if tokens <= 0 or self.tier != "host" or ctx.host is None:
            return []
        nbytes = kv_bytes(ctx, tokens) / max(1, ctx.kv_layers)
        return [transfer(f"{self.name}_kv_load", nbytes, ctx.host, ctx.kv_layers, overlap=True)]


@register
@dataclass(frozen=True)
class CacheBlend(ChunkReuse):
    """Non-prefix chunk KV reuse with selective recompute (RAG): the `reused` share of the prompt is
    retrieved chunks whose KV is loaded from a tier instead of computed; `recompute` of those
    tokens (the ones whose KV deviates most, ~15% in the paper) are recomputed so the chunks attend
    to each other; the rest of the prompt (the query) is computed. Costs beyond the recompute, as the
    release runs it (YaoJiayi/CacheBlend vllm_blend/vllm/model_executor/models/llama.py, LlamaModel.forward:
    check_layers=[1]): layer 0 is a full prefill of every prompt token (status 0), and the check layer 1
    projects Q, K and V of every token (qkv_proj on all hidden states) and compares the new K/V with the
    loaded ones to pick the tokens to recompute; only later layers run on the selected tokens. So the
    loaded tokens not recomputed pay one whole layer plus layer 1's norm, QKV projection and rotary, and
    one compare of every loaded token's K/V. From the check layer on, every layer re-rotates the loaded keys
    to their positions in the new prompt (LlamaAttention.forward, status 1 and 2: rotary_emb over a
    random query of every token's width, fake_q, and the loaded keys of every token). The KV load runs
    over the host path overlapped with the recompute (CacheBlend pipelines it layer by layer).
    Baseline: full recompute of the prompt."""

    name = "cacheblend"
    family = "E"
    paper = "CacheBlend: Fast Large Language Model Serving for RAG with Cached Knowledge Fusion"
    slots = ("prefix cache",)
    reused: float = param(0.9, "share of prompt tokens that come from cached chunks (assumed; RAG inputs are "
                               "mostly retrieved chunks before a short question)")
    recompute: float = param(0.15, "share of the reused tokens recomputed (paper: ~15%)")
    tier: str = param("host", "where the chunk caches are loaded from: host (the system's host tier, over its "
                              "link) or gpu (already in HBM)")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_rope(self.name, model)

    def _kept(self, ctx: PassContext) -> float:
        """Loaded tokens this prefill pass does not recompute (summed over its sequences)."""
        return 0.0 if ctx.decode else ctx.batch.tokens * self.reused * (1.0 - self.recompute) / self.computed_share

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        kept = self._kept(ctx)
        if kept <= 0:
            return ops
        prompt = ctx.batch.tokens / self.computed_share
        # layer 0 over every token (status 0), then the check layer's norm, QKV projection and rotary over them;
        # from the check layer on, the rotary of every prompt token's loaded key (and fake query) in each layer
        return (ops + layer_ops_for(ops, ctx, kept, 1, "cacheblend_layer0")
                + layer_ops_for(ops, ctx, kept, 1, "cacheblend_check", CHECK_LAYER_ROLES)
                + layer_ops_for(ops, ctx, prompt, max(0, ctx.layers - 1), "cacheblend_rerotate", (OpRole.ROPE,)))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        ops = super().extra_ops(ctx)
        loaded = self._kept(ctx) / max(1e-9, 1.0 - self.recompute)     # every loaded token, recomputed or not
        if loaded > 0:
            # the check layer compares each loaded token's new K/V with its loaded K/V (one layer)
            elements = loaded * ctx.kv.width(ctx.kv_width)
            ops.append(streaming("cacheblend_kv_deviation", OpClass.ELEMENTWISE, elements, 1, 0, KV_DEVIATION_FLOPS,
                                 ctx.prec.act_bytes, ctx.prec.activation, 1,
                                 extra_bytes=elements * ctx.kv.element_bytes + loaded * 4.0))
        return ops


@register
@dataclass(frozen=True)
class CacheCraft(ChunkReuse):
    """Chunk caches for RAG (Cache-Craft): retrieved chunks whose KV was computed in other requests
    are reused wherever they appear in the prompt, and only a small share of their tokens, chosen
    from metadata stored with each chunk cache, is recomputed to fix their cross-chunk attention.
    Costs: prefill computes the non-reused tokens plus `recompute` of the reused ones; the chunk
    KV is preloaded layer by layer from the host tier, overlapped with computation. Token selection
    reads precomputed per-chunk metadata (negligible, not modelled). The paper reports 75% less
    computation than full recompute; the defaults split that into an assumed `reused` share and the
    recompute share it implies: (1 - 0.9) + 0.9 x 0.17 = 0.25 of the prompt computed."""

    name = "cache_craft"
    family = "E"
    paper = "Cache-Craft: Managing Chunk-Caches for Efficient Retrieval-Augmented Generation"
    slots = ("prefix cache",)
    reused: float = param(0.9, "share of prompt tokens that come from chunk caches (assumed)")
    recompute: float = param(0.17, "share of reused tokens recomputed: implied by the paper's 75% less "
                                   "computation than full recompute with reused=0.9 (derived)")
    tier: str = param("host", "where chunk caches are preloaded from: host or gpu")


# ---------------------------------------------------------------- contexts encoded or loaded independently

def block_pairs(start: float, end: float, block: int) -> float:
    """(query, key) pairs of positions [start, end) when each attends causally within its block only."""
    def upto(x: float) -> float:
        whole, rest = divmod(x, block)
        return whole * block * (block + 1) / 2.0 + rest * (rest + 1) / 2.0
    return upto(end) - upto(start)


@register
@dataclass(frozen=True)
class APE(Technique):
    """Adaptive Parallel Encoding: the retrieved contexts of a prompt are encoded independently of
    each other (each attends only to itself: block-diagonal attention in blocks of `context` tokens,
    positions reused across contexts), so each context's KV can be precomputed and cached. The
    `loaded` share of the contexts is loaded from the host tier instead of prefilled; the rest is
    prefilled with block-diagonal attention (pair_fraction); the `query` attends to all contexts.
    The attention-temperature and scaling changes are free. Costs: the KV load over the host path,
    overlapped with the query's prefill. Baseline: sequential prefill of the whole prompt.

    The query is prefilled in its own pass of exactly `query` tokens per sequence after every
    context token; that is how pair_fraction (full attention for it) and extra_ops (the load of its
    cached count) recognise it, so a prefill chunk remainder of exactly `query` tokens would be
    mistaken for it."""

    name = "ape"
    family = "E"
    paper = "APE: Faster and Longer Context-Augmented Generation via Adaptive Parallel Encoding"
    slots = ("prefix cache",)
    context: int = param(4096, "tokens per independently encoded context (assumed)", "tokens")
    query: int = param(64, "tokens of the query after the contexts, attending to all of them (assumed)", "tokens")
    loaded: float = param(1.0, "share of context tokens whose KV is loaded from a cache (1: all precomputed)")
    tier: str = param("host", "where cached contexts are loaded from: host or gpu")

    def check_params(self) -> None:
        self.require(self.context >= 1, "context", "a positive integer")
        self.require(self.query >= 2, "query", "an integer of at least 2 (the query pass must not look like decode)")
        self.require(0 <= self.loaded <= 1, "loaded", "a share from 0 to 1")
        self.require(self.tier in ("host", "gpu"), "tier", "host or gpu")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_rope(self.name, model)

    def is_query_pass(self, q: int) -> bool:
        return q == self.query

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        out: list[PrefillUnit] = []
        for new, cached, n in units:
            query = min(self.query, new)
            contexts = new - query
            encoded = round((1.0 - self.loaded) * contexts)
            if encoded > 0:
                out.append((encoded, cached, n))
            out.append((query, cached + contexts, n))
        return out

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES or self.is_query_pass(q):
            return 1.0
        full = q * c + q * (q + 1) / 2.0
        return block_pairs(c, c + q, self.context) / full

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if ctx.decode or self.tier != "host" or ctx.host is None or self.loaded <= 0:
            return []
        tokens = sum(n * self.loaded * c for q, c, n in ctx.batch.groups if self.is_query_pass(q))
        if tokens <= 0:
            return []
        return [transfer("ape_kv_load", kv_bytes(ctx, tokens) / max(1, ctx.kv_layers), ctx.host, ctx.kv_layers,
                         overlap=True)]


@register
@dataclass(frozen=True)
class CacheGen(Technique):
    """KV fetched over a network as a compressed bitstream: the context's KV (every token before
    the `query`) was computed elsewhere and is streamed at `bandwidth` Gbit/s into this server
    instead of being recomputed from text. CacheGen quantizes it per layer and arithmetic-codes it
    to `bits` bits per element; the GPU decodes the bitstream back into the cache's format (CUDA-
    core work per element, beside the stream) and prefills only the query. With codec=none the KV
    travels as plain `bits`-bit quantized values (the paper's 8-bit quantization baseline is
    bits=8,codec=none), dequantized by a cheap kernel. CacheGen chunks the context by tokens (its
    streaming adaptation picks each chunk's encoding level as the bandwidth varies), every chunk
    holding all layers, and decodes chunk i while chunk i+1 arrives; the query's prefill needs every
    chunk's KV at its first layer already, so it runs after the stream, not beside it (the stream is
    in line; the decode, ~1 ms, is charged whole where only the last chunk's shows). A TP group
    shares one network link, so it carries all of the group's shards. Metric: TTFT."""

    name = "cachegen"
    family = "B"
    paper = "CacheGen: Fast Context Loading for Language Model Applications"
    slots = ("prefix cache",)
    bandwidth: float = param(3.0, "network bandwidth to the KV store (assumed; the paper sweeps 0.4-400)", "Gbit/s")
    bits: float = param(2.0, "bits per KV element on the wire: ~1/4 of 8-bit quantization, as the paper "
                             "reports 3.7-4.3x less bandwidth than 8-bit (derived)")
    codec: str = param("arithmetic", "arithmetic (CacheGen's coder, decoded on the GPU) or none (plain "
                                     "quantized values)")
    query: int = param(64, "tokens after the fetched context that are prefilled (assumed)", "tokens")

    def check_params(self) -> None:
        self.require(self.bandwidth > 0, "bandwidth", "a positive number of Gbit/s")
        self.require(0 < self.bits <= 16, "bits", "a number of bits in (0, 16]")
        self.require(self.codec in ("arithmetic", "none"), "codec", "arithmetic or none")
        self.require(self.query >= 2, "query", "an integer of at least 2 (the query pass must not look like decode)")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if model.mla is not None:
            raise WhatifError(f"--technique {self.name}: {model.name} uses latent attention (MLA); its latent "
                              f"cache coding is not modelled; use a MHA/GQA/MQA model")

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return [(min(self.query, new), cached + new - min(self.query, new), n) for new, cached, n in units]

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return []
        # the query pass (exactly `query` new tokens per sequence) fetches the context it follows
        tokens = sum(n * c for q, c, n in ctx.batch.groups if q == self.query)
        if tokens <= 0:
            return []
        elements = tokens * ctx.kv.width(ctx.kv_width)            # per layer, this GPU's shard
        wire = elements * self.bits / 8.0
        link = HostPath(f"network at {self.bandwidth:g} Gbit/s", self.bandwidth * 1e9 / 8.0, NETWORK_LATENCY_S)
        coded = self.codec == "arithmetic"
        ops_per_element = ARITH_DECODE_OPS_PER_ELEMENT if coded else DEQUANT_OPS_PER_ELEMENT
        decode = streaming("cachegen_decode" if coded else "kv_dequantize", OpClass.ELEMENTWISE, elements, 0, 1,
                           ops_per_element, ctx.kv.full_bytes, ctx.prec.kv, ctx.kv_layers, extra_bytes=wire)
        layers = ctx.kv_layers * ctx.kv.layer_share
        # in line: the query's first layer waits for the last token chunk (chunks span all layers)
        return [transfer("cachegen_kv_stream", wire * layers * ctx.par.tp, link, 1, overlap=False), decode]


# ---------------------------------------------------------------- editing inside a cached sequence

@register
@dataclass(frozen=True)
class PIE(Technique):
    """Positional Integrity Encoding: after a code edit, the cached KV of the unchanged tokens is
    kept; only the `edited` tokens (and the last prompt token, whose logits give the next token) are
    recomputed, and the keys of every token after the edit (`1 - position` of the prompt) are
    re-rotated to their new positions: their old rotary matrix removed and the new one applied,
    one elementwise rotation of each such key per layer (read and write the key cache). The
    recomputed tokens are charged attention over the whole prompt (an upper bound: they see only
    the tokens before them). Baseline: full recompute of the edited prompt."""

    name = "pie"
    family = "E"
    paper = "Let the Code LLM Edit Itself When You Edit the Code (Positional Integrity Encoding)"
    slots = ("prefix cache",)
    edited: int = param(32, "tokens inserted or changed by the edit (assumed: a line or two of code)", "tokens")
    position: float = param(0.5, "share of the prompt before the edit (assumed: edits fall anywhere)")

    def check_params(self) -> None:
        self.require(self.edited >= 1, "edited", "a positive integer")
        self.require(0 <= self.position <= 1, "position", "a share from 0 to 1")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_rope(self.name, model)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        out: list[PrefillUnit] = []
        for new, cached, n in units:
            q = min(new, self.edited + 1)
            out.append((q, cached + new - q, n))
        return out

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return []
        shifted = sum(n * (1.0 - self.position) * (c + q) for q, c, n in ctx.batch.groups)
        kvh = max(1, ctx.model.num_kv_heads // ctx.par.tp)
        keys = shifted * kvh * ctx.model.head_dim * ctx.kv.key_share
        if keys <= 0:
            return []
        return [streaming("pie_rerotate_keys", OpClass.ROPE, keys, 1, 1, ROTATE_FLOPS, ctx.kv.full_bytes, ctx.prec.kv,
                          ctx.kv_layers, extra_bytes=ctx.model.head_dim * 4.0)]

