"""Family B: KV cache quantization and compression: fewer bytes per cached token (fewer bits, key
channels, layers, heads, or a latent instead of K and V), paid for by (de)quantization,
reconstruction, scoring or merging work.

Long because: family B's 9 KV formats (quantization, fewer channels or layers, fewer heads or a
latent) sit side by side over the quantize/dequantize helpers they share; a split would scatter one
catalogue family. Shared cost pieces live in kit.py.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.model_sections import MLASpec
from ...specs.models import ModelSpec
from ..config import Precision
from ...specs.op_kinds import LAYER_ATTENTION_ROLES
from ..ops import Op, OpClass, OpRole, streaming
from ..context import KVFormat, PassContext
from .base import Technique, param, register, replace_ops
from .kit import DEQUANT_OPS_PER_ELEMENT

QUANT_FLOPS_PER_ELEMENT = 6.0   # min/max reduction, scale, round, pack per element quantized, assumed
FP8_CONVERT_OPS = 2.0           # scale and convert between bf16 and e4m3, per element, assumed
SCALE_BYTES = 2.0               # one fp16 scale or zero point per quantization group
INDEX_BYTES = 4.0               # int32 position of a sparse outlier or a retained token, assumed
OUTLIER_SELECT_OPS = 8.0        # per element: threshold/top-k over a token's row to find outliers, assumed
MERGE_FLOPS_PER_ELEMENT = 12.0  # MiniCache SLERP: two norms, a dot for the angle, two weights, a blend; assumed
RESTORE_OPS_PER_ELEMENT = 1.0   # MiniCache: scale the shared direction by the layer's own magnitude, assumed
CHANNEL_SCORE_FLOPS = 3.0       # ThinK: square, accumulate, scale by the query norm per key element, assumed

# Attention ops that read the cache (graph.py; hydragen's split also reads a shared prefix once).
CACHE_ATTENTION_ROLES = LAYER_ATTENTION_ROLES | {OpRole.SUFFIX_ATTENTION, OpRole.SHARED_PREFIX_ATTENTION}


def with_alu(op: Op, ops_per_element: float, elements: float, what: str) -> Op:
    """`op` plus CUDA-core work on `elements` cached values (in-kernel, beside the MMA and the loads)."""
    return replace(op, alu_ops=op.alu_ops + elements * ops_per_element,
                   formula=op.formula + f"; + {ops_per_element:g} {what} ops per element of {elements:g}")


def with_dequant(op: Op, elements: float) -> Op:
    """An attention op that dequantizes `elements` cached values in-kernel (CUDA cores, beside the MMA)."""
    return with_alu(op, DEQUANT_OPS_PER_ELEMENT, elements, "dequant")


def compressed_elements(ctx: PassContext, op: Op, full_tokens: int = 0) -> float:
    """K/V elements one instance of attention op `op` reads from the compressed part of the cache.

    The newest `full_tokens` of each sequence are read uncompressed; in prefill the new tokens are
    attended in 16 bits before they are compressed, so only already-cached tokens count."""
    width = ctx.kv.width(ctx.kv_width)
    if op.role == OpRole.SHARED_PREFIX_ATTENTION:     # the shared prefix, read once for the batch
        return op.shape.max_context * width
    if ctx.decode:
        return op.shape.sequences * max(0.0, op.shape.max_context - full_tokens) * width
    return sum(n * max(0.0, c - full_tokens) for _, c, n in ctx.batch.groups) * width


def quantize_op(name: str, ctx: PassContext, elements: float, flops_per_element: float, reads: float = 1.0) -> Op:
    """A streaming kernel that reads `elements` 16-bit K/V values `reads` times and writes them compressed."""
    return streaming(name, OpClass.ELEMENTWISE, elements, reads, 0, flops_per_element, ctx.prec.act_bytes,
                     ctx.prec.kv, ctx.kv_layers, extra_bytes=elements * ctx.kv.element_bytes)


def head_width(model: ModelSpec, kv_width: float) -> float:
    """Elements of one cached vector: a head's K or V, or MLA's whole latent."""
    return kv_width if model.mla is not None else float(model.head_dim)


def attention_ops(ops: list[Op], build) -> list[Op]:
    """`ops` with every attention op that reads the cache replaced by `build(op)`."""
    return replace_ops(ops, CACHE_ATTENTION_ROLES, build)


def reject_mla(t: Technique, model: ModelSpec, why: str) -> None:
    if model.mla is not None:
        raise WhatifError(f"--technique {t.name}: {model.name} already uses multi-head latent attention (MLA); "
                          f"{why}")


# ----------------------------------------------------------------------------- quantization

@register
@dataclass(frozen=True)
class KIVI(Technique):
    """Keys quantized per channel and values per token to `bits` bits, in groups of `group_size`
    elements with a 16-bit scale and zero point each, so a quantized element costs bits/8 +
    4/group_size bytes instead of 2. Full-precision residual: values keep exactly the newest
    `residual` tokens in 16 bits, keys collect up to `residual` tokens and quantize them as one block,
    so on average (3/4) x residual tokens per sequence stay 16-bit. The cache holds several times more
    tokens and a decode step reads that many fewer bytes. Costs: the attention kernel dequantizes
    every quantized element it reads (CUDA-core ops beside the memory stream; the residual is read
    as is), and every token is quantized once by a streaming kernel (amortized per token)."""

    name = "kivi"
    family = "B"
    paper = "KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache"
    slots = ("kv format",)
    splits = True   # attention ops read fewer bytes and dequantize; kv_quantize scales with the tokens
    bits: int = param(2, "bits per quantized key/value element")
    group_size: int = param(32, "elements sharing one 16-bit scale and zero point")
    residual: int = param(128, "residual length R: newest values kept in 16 bits (keys: up to R)", "tokens")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")
        self.require(self.residual >= 0, "residual", "a non-negative integer")

    def held_residual(self) -> int:
        """Average 16-bit tokens per sequence: values hold R, keys 0..R-1 (mean about R/2)."""
        return (3 * self.residual) // 4

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, element_bytes=self.bits / 8 + 2 * SCALE_BYTES / self.group_size,
                       residual_tokens=self.held_residual())

    def kv_format_label(self, kv: str) -> str:
        return f"{self.bits}-bit kivi (groups of {self.group_size}; the newest {self.residual} tokens {kv})"

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        full = ctx.kv.residual_tokens
        return attention_ops(ops, lambda op: with_dequant(op, compressed_elements(ctx, op, full)))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        # Every token is quantized once: in prefill all prompt tokens, in decode one token per sequence.
        elements = ctx.batch.tokens * ctx.kv.width(ctx.kv_width)
        return [streaming("kv_quantize", OpClass.ELEMENTWISE, elements, 1, 0, QUANT_FLOPS_PER_ELEMENT,
                          ctx.kv.full_bytes, ctx.prec.kv, ctx.kv_layers, extra_bytes=elements * ctx.kv.element_bytes)]


@register
@dataclass(frozen=True)
class KVQuant(Technique):
    """Plain group-wise KV quantization (FlexGen-style): every key and value is quantized per token
    to `bits` bits in groups of `group_size` elements with a 16-bit scale and minimum, as it is
    written to the cache (no full-precision window), so each cached element costs bits/8 +
    4/group_size bytes. Costs: the cache-write kernel quantizes each new element (CUDA-core ops) and
    writes it packed; the attention kernel dequantizes every element it reads. Use bits=8 for an
    int8 cache with per-group scales."""

    name = "kv_quant"
    family = "B"
    paper = "FlexGen: High-Throughput Generative Inference of Large Language Models with a Single GPU"
    slots = ("kv format",)
    splits = True   # the cache write quantizes its tokens' K/V; attention ops dequantize
    bits: int = param(4, "bits per key/value element (FlexGen quantizes the cache to 4 bits)")
    group_size: int = param(64, "elements sharing one 16-bit scale and minimum (FlexGen: 64)")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, element_bytes=self.bits / 8 + 2 * SCALE_BYTES / self.group_size, residual_tokens=0)

    def kv_format_label(self, kv: str) -> str:
        return f"{self.bits}-bit kv_quant (groups of {self.group_size})"

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        def write(op: Op) -> Op:
            n = op.shape.elements
            return streaming("kv_cache_write", OpClass.ELEMENTWISE, n, 0, 1, QUANT_FLOPS_PER_ELEMENT,
                             ctx.kv.element_bytes, ctx.prec.kv, op.count, extra_bytes=n * ctx.prec.act_bytes,
                             role=OpRole.KV_WRITE)
        ops = replace_ops(ops, {OpRole.KV_WRITE}, write)
        return attention_ops(ops, lambda op: with_dequant(op, compressed_elements(ctx, op)))


@register
@dataclass(frozen=True)
class KVFP8(Technique):
    """FP8 (e4m3) KV cache with one scale per tensor: the cache dtype becomes fp8, so each cached
    element costs 1 byte instead of 2 and nothing per group. Costs: the cache-write kernel scales
    and converts each new element, and the attention kernel converts every element it reads back
    to 16 bits before the MMA (CUDA-core ops beside the memory stream)."""

    name = "kv_fp8"
    family = "B"
    paper = "FP8 Formats for Deep Learning (E4M3 KV cache with a per-tensor scale, as vLLM serves it)"
    slots = ("kv format",)
    splits = True   # the cache write converts its tokens' K/V; attention ops convert back

    def transform_precision(self, prec: Precision) -> Precision:
        return replace(prec, kv="fp8")

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        def write(op: Op) -> Op:
            return replace(op, flops=op.flops + FP8_CONVERT_OPS * op.shape.elements,
                           formula=op.formula + f"; {FP8_CONVERT_OPS:g} fp8 convert ops per element")
        ops = replace_ops(ops, {OpRole.KV_WRITE}, write)
        return attention_ops(ops, lambda op: with_alu(op, FP8_CONVERT_OPS, compressed_elements(ctx, op),
                                                           "fp8 convert"))


@register
@dataclass(frozen=True)
class GEAR(Technique):
    """Quantization plus error correction: each K/V entry is quantized to `bits` bits per token in
    groups of `group_size` (16-bit scale and minimum); the `outliers` share of entries with the
    largest magnitude is kept exactly as a sparse matrix (16-bit value + int32 index, 6 bytes each);
    the remaining quantization error of each head is approximated by a low-rank product A B^T whose
    per-token factor A holds rank_ratio x head_dim 16-bit values per head vector (2 x rank_ratio
    bytes per element; B, shared by all tokens, is neglected). The newest `buffer` tokens stay 16-bit
    until a block is compressed (buffer/2 on average). Costs: reading an element dequantizes it, adds
    its low-rank term (2 x rank FLOPs) and scatters the outliers, all in-kernel; compressing a token
    quantizes it, finds its outliers and runs `loops` power-iteration steps (4 x rank FLOPs per
    element each), reading the 16-bit input three times."""

    name = "gear"
    family = "B"
    paper = "GEAR: An Efficient KV Cache Compression Recipe for Near-Lossless Generative Inference of LLM"
    slots = ("kv format",)
    splits = True   # attention ops dequantize and correct; gear_compress scales with the tokens
    bits: int = param(4, "bits per quantized key/value element")
    group_size: int = param(64, "elements per quantization group with one 16-bit scale and minimum; assumed")
    rank_ratio: float = param(0.02, "rank of the low-rank error term as a share of the head dimension; assumed 2%")
    outliers: float = param(0.02, "share of entries kept exactly as sparse outliers (s = 2%)")
    buffer: int = param(20, "newest tokens kept in 16 bits until a block is compressed (streaming buffer); "
                            "assumed", "tokens")
    loops: int = param(1, "power-iteration steps per compressed block (single-step power iteration)")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")
        self.require(0 <= self.rank_ratio <= 1, "rank_ratio", "a share from 0 to 1")
        self.require(0 <= self.outliers < 1, "outliers", "a share from 0 to below 1")
        self.require(self.buffer >= 0, "buffer", "a non-negative integer")
        self.require(self.loops >= 0, "loops", "a non-negative integer")

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        quantized = self.bits / 8 + 2 * SCALE_BYTES / self.group_size
        sparse = self.outliers * (kv.full_bytes + INDEX_BYTES)
        low_rank = self.rank_ratio * kv.full_bytes       # A: rank_ratio x head_dim 16-bit values per head vector
        return replace(kv, element_bytes=quantized + sparse + low_rank, residual_tokens=self.buffer // 2)

    def kv_format_label(self, kv: str) -> str:
        return (f"{self.bits}-bit gear (+ low-rank error and {self.outliers:.0%} outliers; the newest {self.buffer} "
                f"tokens {kv})")

    def rank(self, ctx: PassContext) -> float:
        return self.rank_ratio * head_width(ctx.model, ctx.kv_width)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        per_element = DEQUANT_OPS_PER_ELEMENT + 2.0 * self.rank(ctx) + self.outliers
        return attention_ops(ops, lambda op: with_alu(op, per_element,
                                                           compressed_elements(ctx, op, ctx.kv.residual_tokens),
                                                           "dequant + low-rank + outlier"))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        elements = ctx.batch.tokens * ctx.kv.width(ctx.kv_width)
        flops = QUANT_FLOPS_PER_ELEMENT + OUTLIER_SELECT_OPS + self.loops * 4.0 * self.rank(ctx)
        return [quantize_op("gear_compress", ctx, elements, flops, reads=3)]


@register
@dataclass(frozen=True)
class MiKV(Technique):
    """Importance-aware mixed precision: instead of evicting unimportant tokens, their K/V are kept
    at `low_bits` (per token, groups of `group_size` with a 16-bit scale and zero point), while the
    `important` share chosen by accumulated attention (as H2O chooses heavy hitters and recent
    tokens) stays at `high_bits`. A cached element costs important x high + (1 - important) x low
    bytes on average, and every token stays readable. Costs: the attention kernel dequantizes the
    low-precision part; its probabilities are written so that the per-token fp32 importance
    accumulators can be read, updated and written every step; one demoted token per sequence and
    layer is quantized each step (all low-precision prompt tokens at prefill)."""

    name = "mikv"
    family = "B"
    paper = "No Token Left Behind: Reliable KV Cache Compression via Importance-Aware Mixed Precision Quantization"
    slots = ("kv format",)
    important: float = param(0.2, "share of tokens kept at high precision (H2O's 20% of heavy + recent); assumed")
    high_bits: int = param(16, "bits of the important tokens' keys and values (16: unquantized); assumed")
    low_bits: int = param(2, "bits of the other tokens' keys and values; assumed")
    group_size: int = param(128, "elements per low-precision group (one per token and head); assumed")

    def check_params(self) -> None:
        self.require(0 <= self.important <= 1, "important", "a share from 0 to 1")
        self.require(1 <= self.high_bits <= 16, "high_bits", "an integer from 1 to 16")
        self.require(1 <= self.low_bits <= self.high_bits, "low_bits",
                     f"an integer from 1 to high_bits ({self.high_bits})")
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    def _bytes(self, bits: int, full: float) -> float:
        return full if bits >= 16 else bits / 8 + 2 * SCALE_BYTES / self.group_size

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        high, low = self._bytes(self.high_bits, kv.full_bytes), self._bytes(self.low_bits, kv.full_bytes)
        mixed = self.important * high + (1 - self.important) * low
        return replace(kv, element_bytes=mixed, residual_tokens=0)

    def kv_format_label(self, kv: str) -> str:
        high = kv if self.high_bits >= 16 else f"{self.high_bits}-bit"
        return f"{self.low_bits}-bit mikv ({self.important:.0%} of tokens {high})"

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        quantized = (1 - self.important) + (self.important if self.high_bits < 16 else 0.0)
        return attention_ops(ops, lambda op: with_dequant(op, quantized * compressed_elements(ctx, op)))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        heads = ctx.model.num_heads // ctx.par.tp
        scores = sum(n * q * (c + q) for q, c, n in ctx.batch.groups) * heads
        kept = sum(n * (c + q) for q, c, n in ctx.batch.groups) * heads
        width = ctx.kv.width(ctx.kv_width)
        demoted = ctx.batch.tokens * width if ctx.decode else ctx.batch.tokens * width * (1 - self.important)
        return [streaming("mikv_importance_update", OpClass.ELEMENTWISE, kept, 2, 1, 2, 4.0, "fp32", ctx.kv_layers,
                          extra_bytes=scores * 2 * ctx.prec.act_bytes),
                quantize_op("mikv_quantize", ctx, demoted, QUANT_FLOPS_PER_ELEMENT)]


# ----------------------------------------------------------------------------- fewer channels, layers

@register
@dataclass(frozen=True)
class MiniCache(Technique):
    """Cross-layer merging: from depth `start` on, each pair of adjacent layers stores one shared
    direction per token (SLERP of the two layers' K/V directions) plus each layer's own magnitude
    (one 16-bit norm per vector), and keeps the `retain` share of tokens whose two layers differ
    most unmerged in both layers. So a merged pair stores (1 + 2 x retain) layers' worth of K/V
    instead of 2: the cache holds start + (1 - start)(1/2 + retain) of the layers' bytes. Decode
    still runs attention per layer and reads the shared direction once for each layer of the pair,
    so decode bytes do not shrink. Costs: merging reads both layers' new K/V and writes the merged
    direction (prefill: every prompt token; decode: the new token); each merged layer's attention
    rescales the direction by its magnitude in-kernel and reads its magnitudes and retained tokens.
    Composes with quantization (the paper's 4-bit MiniCache is this with a 4-bit format)."""

    name = "minicache"
    family = "B"
    paper = "MiniCache: KV Cache Compression in Depth Dimension for Large Language Models"
    slots = ("kv layers",)
    start: float = param(0.5, "share of the depth where merging starts (the paper merges from the middle layer)")
    retain: float = param(0.05, "share of tokens kept unmerged in both layers of a pair (token retention); assumed")

    def check_params(self) -> None:
        self.require(0 <= self.start < 1, "start", "a share from 0 to below 1")
        self.require(0 <= self.retain <= 0.5, "retain", "a share from 0 to 0.5")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if model.num_layers * (1 - self.start) < 2:
            raise WhatifError(f"--technique {self.name}:start={self.start}: {model.name} has fewer than two layers "
                              f"after depth {self.start} to merge; lower start")

    @property
    def merged(self) -> float:
        """Share of the layers that belong to a merged pair."""
        return 1 - self.start

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, layer_share=kv.layer_share * (self.start + self.merged * (0.5 + self.retain)))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        return attention_ops(ops, lambda op: with_alu(op, RESTORE_OPS_PER_ELEMENT,
                                                           self.merged * compressed_elements(ctx, op), "restore"))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        width = ctx.kv.width(ctx.kv_width)
        vectors = width / head_width(ctx.model, ctx.kv_width)        # cached vectors per token (each has a norm)
        a = ctx.prec.act_bytes
        new = ctx.batch.tokens * width * self.merged                 # per layer on average
        # read both layers' new K/V (here: each merged layer its own), write one direction per pair + norms
        merge = streaming("minicache_merge", OpClass.ELEMENTWISE, new, 1, 0, MERGE_FLOPS_PER_ELEMENT, a, ctx.prec.kv,
                          ctx.kv_layers, extra_bytes=new / 2 * ctx.kv.element_bytes + new / width * vectors * a)
        ops = [merge]
        cached = sum(n * c for _, c, n in ctx.batch.groups)
        if cached:
            tokens = cached * self.merged
            retained = tokens * self.retain
            ops.append(streaming("minicache_restore", OpClass.ELEMENTWISE, tokens * vectors, 1, 0, 0, a, ctx.prec.kv,
                                 ctx.kv_layers, extra_bytes=retained * (width * ctx.kv.element_bytes + INDEX_BYTES)))
        return ops


@register
@dataclass(frozen=True)
class ThinK(Technique):
    """Query-driven key-channel pruning: after prefill, each head scores its key channels by the
    product of the observation window's query norm and the key norm per channel and drops the
    `pruning` share with the lowest scores, storing only the kept channels (plus a per-head channel
    mask); values are untouched, so a token costs (2 - pruning)/2 of its K+V bytes and decode
    attention reads that much less and computes QK^T over fewer channels (the newest 32 keys that
    ThinK's code keeps whole are not modelled). Costs: at prefill, one pass over the prompt's keys
    to score the channels and one to gather the kept ones."""

    name = "think"
    family = "B"
    paper = "ThinK: Thinner Key Cache by Query-Driven Pruning"
    slots = ("key channels",)
    pruning: float = param(0.4, "share of key channels pruned per head (lambda = 0.4)")
    window: int = param(32, "newest prompt queries whose norms score the channels (observation window)", "tokens")

    def check_params(self) -> None:
        self.require(0 <= self.pruning < 1, "pruning", "a share from 0 to below 1")
        self.require(self.window >= 1, "window", "a positive integer")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        reject_mla(self, model, "its latent has no per-head key channels to prune")

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, key_share=kv.key_share * (1 - self.pruning))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return ops
        share = ctx.kv.key_share

        def thinner(op: Op) -> Op:
            d_qk, d_v = op.shape.d_qk, op.shape.d_v
            return replace(op, flops=op.flops * (share * d_qk + d_v) / (d_qk + d_v),
                           formula=op.formula + f"; QK^T over {share:.3g} of the key channels")
        return replace_ops(ops, {OpRole.ATTENTION, OpRole.SUFFIX_ATTENTION, OpRole.SHARED_PREFIX_ATTENTION}, thinner)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return []
        keys = ctx.batch.tokens * ctx.kv_width / 2
        heads = ctx.model.num_heads // ctx.par.tp
        queries = ctx.batch.sequences * min(self.window, max(q for q, _, _ in ctx.batch.groups)) * heads \
            * ctx.model.head_dim
        return [streaming("think_channel_prune", OpClass.ELEMENTWISE, keys, 2, 1 - self.pruning, CHANNEL_SCORE_FLOPS,
                          ctx.prec.act_bytes, ctx.prec.activation, ctx.kv_layers,
                          extra_bytes=queries * ctx.prec.act_bytes)]


# ----------------------------------------------------------------------------- fewer heads, a latent

@register
@dataclass(frozen=True)
class KVHeadCompression(Technique):
    """MHA -> GQA conversion: the KV heads are grouped and each group's K and V projections are
    fused (low-rank, RoPE-aware) into one head, keeping `keep` of the KV heads. The converted model
    caches and reads keep x the KV bytes per token and its K/V projections shrink in proportion;
    nothing is added at inference (the conversion is done once, offline)."""

    name = "kv_head_compression"
    family = "B"
    paper = "Effectively Compress KV Heads for LLM"
    slots = ("attention architecture",)
    splits = True   # a model with fewer KV heads; no op rewritten
    keep: float = param(0.5, "share of KV heads kept (0.5: half removed; 0.25: three quarters removed)")

    def check_params(self) -> None:
        self.require(0 < self.keep <= 1, "keep", "a share above 0 and at most 1")

    def kv_heads(self, model: ModelSpec) -> float:
        return model.num_kv_heads * self.keep

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        reject_mla(self, model, "there are no KV heads to merge")
        if model.num_kv_heads == 1:
            raise WhatifError(f"--technique {self.name}: {model.name} already uses multi-query attention (one KV "
                              f"head); there are no KV heads to merge")
        new = self.kv_heads(model)
        if new < 1 or new != int(new) or model.num_heads % int(new) or model.num_kv_heads % int(new):
            valid = [f"{k / model.num_kv_heads:g}" for k in range(1, model.num_kv_heads)
                     if model.num_kv_heads % k == 0 and model.num_heads % k == 0]
            raise WhatifError(f"--technique {self.name}:keep={self.keep}: {model.name} has {model.num_kv_heads} KV "
                              f"heads and {model.num_heads} query heads; keep x KV heads must be a whole number "
                              f"dividing both; valid: {', '.join(valid)}")

    def transform_model(self, model: ModelSpec) -> ModelSpec:
        return replace(model, num_kv_heads=int(self.kv_heads(model)))


@register
@dataclass(frozen=True)
class MLAConversion(Technique):
    """Post-training conversion of MHA/GQA attention to multi-head latent attention (TransMLA,
    X-EcoMLA): K and V are replaced by a shared latent of `kv_lora_rank` values plus a decoupled
    RoPE key of `rope_dim` values per token and layer, up-projected per head (keys: head_dim -
    rope_dim channels, values: head_dim). The cache shrinks from 2 x KV heads x head_dim to
    kv_lora_rank + rope_dim elements per token and layer (kv_lora_rank derived from `compression`
    when 0). Costs follow the MLA graph: decode absorbs the up-projections into the query and output
    (extra small GEMMs) and attends the latent as one wide shared head; prefill expands the latent
    of every attended token into per-head K and V."""

    name = "mla_conversion"
    family = "B"
    paper = ("X-EcoMLA: Upcycling Pre-Trained Attention into MLA for Efficient and Extreme KV Compression "
             "(and TransMLA: Multi-head Latent Attention Is All You Need)")
    slots = ("attention architecture",)
    compression: float = param(6.4, "KV cache compression the latent width is chosen for when kv_lora_rank is 0 "
                                     "(X-EcoMLA: 6.4x and 10.6x on Llama-3.2-1B)")
    kv_lora_rank: int = param(0, "latent values cached per token and layer (0: from compression); X-EcoMLA uses "
                                 "128 and 64 on Llama-3.2-1B")
    rope_dim: int = param(0, "decoupled RoPE key values cached per token and layer (0: half the head dimension, "
                             "X-EcoMLA's 32 of 64)")
    q_lora_rank: int = param(0, "low-rank query width (0: queries projected directly, assumed)")

    def check_params(self) -> None:
        self.require(self.compression > 1, "compression", "a ratio above 1")
        self.require(self.kv_lora_rank >= 0, "kv_lora_rank", "a non-negative integer")
        self.require(self.rope_dim >= 0, "rope_dim", "a non-negative integer")
        self.require(self.q_lora_rank >= 0, "q_lora_rank", "a non-negative integer")

    def spec(self, model: ModelSpec) -> MLASpec:
        rope = self.rope_dim or model.head_dim // 2
        latent = self.kv_lora_rank or round(2 * model.num_kv_heads * model.head_dim / self.compression) - rope
        return MLASpec(kv_lora_rank=latent, qk_rope_head_dim=rope, qk_nope_head_dim=model.head_dim - rope,
                       v_head_dim=model.head_dim, q_lora_rank=self.q_lora_rank)

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        reject_mla(self, model, "there is nothing to convert")
        rope = self.rope_dim or model.head_dim // 2
        if not 0 < rope < model.head_dim:
            raise WhatifError(f"--technique {self.name}:rope_dim={self.rope_dim}: must be below {model.name}'s "
                              f"head dimension ({model.head_dim})")
        if self.spec(model).kv_lora_rank < 1:
            raise WhatifError(f"--technique {self.name}:compression={self.compression}: leaves no latent width on "
                              f"{model.name} ({2 * model.num_kv_heads * model.head_dim} K/V values per token and "
                              f"layer, {rope} of them RoPE); lower compression or set kv_lora_rank")

    def transform_model(self, model: ModelSpec) -> ModelSpec:
        return replace(model, mla=self.spec(model), num_kv_heads=model.num_heads)

