"""Family K: attention kernels and IO: how the decode attention kernel spreads over the GPU, how the
cache is laid out in memory, and what an attention kernel reads and writes in HBM.

whatif's default attention is FlashAttention IO (Q, K, V read once, O written once, no score matrix
in HBM) and a decode kernel that splits the context over every SM (full HBM bandwidth). These
techniques model the kernels papers compare against or improve on. They change bytes, FLOPs and the
share of bandwidth a kernel can draw; what they cannot express is kernel quality (instruction
overheads, pipelining, a slower kernel implementation of the same IO): that lives in the efficiency
model and would be a calibration of the kernel, not a technique.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..attention import DECODE_MAX_QUERIES
from ...specs.op_kinds import LAYER_ATTENTION_ROLES
from ..op_shapes import AttentionShape
from ..ops import Op, OpClass, streaming
from ..context import KVFormat, PassContext
from .base import Technique, param, register, replace_ops

ATTENTION_ROLES = LAYER_ATTENTION_ROLES

# FlashAttention-2's split-KV heuristic (flash_api.cpp, num_splits_heuristic):
SPLIT_BLOCK_N = 128          # keys per split-KV tile the heuristic counts (kBlockN at head dim 128; assumed for all)
MAX_SPLITS = 128             # most splits the heuristic tries
SPLIT_FULL_SHARE = 0.8       # no split once CTAs fill this share of the SMs
SPLIT_NEAR_BEST = 0.85       # fewest splits whose wave efficiency is within this share of the best

LEAN_TILE_N = 256            # keys per stream-K iteration of LeanAttention, assumed
PARTIAL_BYTES = 4.0          # partial outputs and log-sum-exps are fp32

PAGE_TABLE_ENTRY_BYTES = 4.0  # one int32 physical block number per logical block
PAGED_BLOCK_ALU_OPS = 32.0   # address arithmetic per KV block per CTA (table lookup, K and V base pointers), assumed

SOFTMAX_OPS = 5.0            # max, subtract, exp, sum, divide per score (standard attention), textbook


def wave_share(blocks: float, sms: int) -> float:
    """Share of the SMs' time doing work when `blocks` equal thread blocks run in waves of `sms`."""
    if blocks <= 0 or sms <= 0:
        return 1.0
    return blocks / (math.ceil(blocks / sms - 1e-9) * sms)


def with_share(op: Op, share: float, note: str) -> Op:
    return replace(op, bandwidth_share=share, formula=op.formula + "; " + note)


@register
@dataclass(frozen=True)
class NoSplitDecode(Technique):
    """FlashAttention-2 decode without split-K (the baseline flash-decoding / Lean Attention improve
    on): one thread block per (sequence, KV head), each streaming its whole context alone. When
    sequences x KV heads is below the GPU's SM count, the idle SMs leave HBM bandwidth unused: the
    kernel draws only that share of it; above it, the blocks run in waves and the last, partial wave
    leaves SMs idle (share = blocks / (waves x SMs)). whatif's default decode kernel splits the
    context (full bandwidth); this technique models the older kernel."""

    name = "no_split_decode"
    family = "K"
    paper = "Flash-Decoding for long-context inference (baseline: FlashAttention-2 decode)"
    slots = ("decode kernel",)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode or not ctx.sm_count:
            return ops

        def occupancy(op: Op) -> Op:
            ctas = op.shape.ctas
            return with_share(op, wave_share(ctas, ctx.sm_count), f"{ctas:g} CTAs on {ctx.sm_count} SMs")
        return replace_ops(ops, ATTENTION_ROLES, occupancy)


def fa2_num_splits(ctas: float, key_blocks: int, sms: int) -> int:
    """FlashAttention-2's choice of KV splits for `ctas` (sequence, KV head) blocks of `key_blocks` tiles."""
    if ctas >= SPLIT_FULL_SHARE * sms:
        return 1
    most = max(1, min(MAX_SPLITS, sms, key_blocks))
    share = {s: wave_share(ctas * s, sms) for s in range(1, most + 1)}
    best = max(share.values())
    for s in range(1, most + 1):
        eligible = s == 1 or math.ceil(key_blocks / s) != math.ceil(key_blocks / (s - 1))
        if eligible and share[s] >= SPLIT_NEAR_BEST * best:
            return s
    return 1


def partials_op(name: str, partials: float, outputs: float, op: Op, ctx: PassContext) -> Op:
    """The reduction of `partials` fp32 partial results (d_v values + log-sum-exp per query head)
    into `outputs` final rows, per layer."""
    group = op.shape.heads / max(1.0, op.shape.kv_heads)
    d_v = op.shape.d_v
    read = partials * group * (d_v + 1) * PARTIAL_BYTES
    written = outputs * group * d_v * ctx.prec.act_bytes
    return streaming(name, OpClass.ELEMENTWISE, partials * group * d_v, 0, 0, 3, ctx.prec.act_bytes,
                     ctx.prec.activation, op.count, extra_bytes=2 * read + written)


@register
@dataclass(frozen=True)
class FlashDecoding(Technique):
    """Flash-Decoding as FlashAttention-2 ships it: when sequences x KV heads leave SMs idle, each
    context is split into `s` equal chunks chosen by FA2's heuristic (the fewest splits whose wave
    efficiency is within 85% of the best), each chunk writes an fp32 partial output and log-sum-exp
    to HBM, and a combine kernel reduces them. The attention kernel draws the bandwidth share of its
    waves (blocks x s over the SMs), the combine kernel reads and writes the partials."""

    name = "flash_decoding"
    family = "K"
    paper = "Flash-Decoding for long-context inference"
    slots = ("decode kernel",)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode or not ctx.sm_count:
            return ops

        def split(op: Op) -> list[Op]:
            ctas = op.shape.ctas
            blocks = max(1, math.ceil(op.shape.max_context / SPLIT_BLOCK_N))
            s = fa2_num_splits(ctas, blocks, ctx.sm_count)
            out = [with_share(op, wave_share(ctas * s, ctx.sm_count), f"{s} KV splits x {ctas:g} CTAs "
                              f"on {ctx.sm_count} SMs")]
            if s > 1:
                out.append(partials_op("attention_combine", ctas * s, ctas, op, ctx))
            return out
        return replace_ops(ops, ATTENTION_ROLES, split)


@register
@dataclass(frozen=True)
class LeanAttention(Technique):
    """Lean Attention: stream-K partitioning of decode attention. The work of all (sequence, KV head)
    pairs, in key tiles of LEAN_TILE_N, is divided evenly over one persistent block per SM, so the
    kernel reaches full occupancy whatever the batch, heads and context (share = tiles / (SMs x
    ceil(tiles / SMs))). Each SM's range boundary cuts at most one output: up to one fp32 partial
    output and log-sum-exp per SM are written and reduced by a fix-up (the softmax rescaling is
    associative). Versus no_split_decode it removes idle SMs; versus flash_decoding, wave tails."""

    name = "lean_attention"
    family = "K"
    paper = "Lean Attention: Hardware-Aware Scalable Attention Mechanism for the Decode-Phase of Transformers"
    slots = ("decode kernel",)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode or not ctx.sm_count:
            return ops

        def stream_k(op: Op) -> list[Op]:
            ctas = op.shape.ctas
            tiles = ctas * max(1, math.ceil(op.shape.max_context / LEAN_TILE_N))
            sms = ctx.sm_count
            out = [with_share(op, wave_share(tiles, sms), f"stream-K: {tiles:g} key tiles over {sms} SMs")]
            if tiles > ctas:   # some output is shared by two SMs
                out.append(partials_op("attention_fixup", min(sms, tiles), min(sms, ctas), op, ctx))
            return out
        return replace_ops(ops, ATTENTION_ROLES, stream_k)


@dataclass(frozen=True)
class PagedKVFormat(KVFormat):
    """A KV format whose sequences occupy whole blocks of `block_tokens` tokens."""

    block_tokens: int = 1

    def token_bytes(self, tokens: float, kv_width: float) -> float:
        blocks = math.ceil(tokens / self.block_tokens - 1e-9) if tokens > 0 else 0
        return super().token_bytes(blocks * self.block_tokens, kv_width)


@register
@dataclass(frozen=True)
class PagedKV(Technique):
    """PagedAttention's KV layout: each sequence's cache is a list of fixed blocks of `block_size`
    tokens found through a block table. Memory: a sequence occupies whole blocks, so it holds up to
    block_size - 1 tokens of unused space (internal fragmentation; whatif's default is an exact,
    contiguous cache); attention streams whole blocks. Kernel: every CTA reads the block table (4
    bytes per block) and computes each block's K and V addresses (PAGED_BLOCK_ALU_OPS CUDA-core
    ops per block, assumed). Everything else a paged kernel costs over a contiguous one (vAttention's
    "up to 1.97x" decode) is the kernel's own: vLLM v0.2.7's re-read a GQA model's cache per query head
    (the vllm-0.2 engine version says so), the rest is kernel quality, which whatif does not model."""

    name = "paged_kv"
    family = "K"
    paper = "Efficient Memory Management for Large Language Model Serving with PagedAttention"
    slots = ("kv layout",)
    block_size: int = param(16, "tokens per KV block (vLLM's default)", "tokens")

    def check_params(self) -> None:
        self.require(self.block_size >= 1, "block_size", "a positive integer")

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        fields = {k: getattr(kv, k) for k in KVFormat.__dataclass_fields__}
        return PagedKVFormat(**fields, block_tokens=self.block_size)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        def paged(op: Op) -> Op:
            blocks = math.ceil(op.shape.max_context / self.block_size)
            lookups = op.shape.ctas * blocks
            alu = op.alu_ops + lookups * PAGED_BLOCK_ALU_OPS
            hbm = op.bytes.get("hbm", 0.0) + lookups * PAGE_TABLE_ENTRY_BYTES
            return replace(op, bytes={**op.bytes, "hbm": hbm}, alu_ops=alu,
                           formula=op.formula + f"; + block table: {blocks} blocks x {op.shape.ctas:g} CTAs")
        return replace_ops(ops, ATTENTION_ROLES, paged)


@register
@dataclass(frozen=True)
class NaiveAttention(Technique):
    """Standard (non-flash) attention, the Theta(N d + N^2) IO baseline of "The I/O Complexity of
    Attention": per head, S = Q K^T is computed for every (query, key) pair (the causal mask is
    applied afterwards, so no pairs are skipped) and written to HBM, a softmax kernel reads S and
    writes P, and P V reads P back. Per query head K and V are read again (the textbook algorithm
    runs head by head, so GQA sharing is lost). Three kernels replace one FlashAttention kernel, in
    prefill and decode alike. Not expressed: the S and P buffers' activation memory (the memory
    plan's activation peak has no technique hook)."""

    name = "naive_attention"
    family = "K"
    paper = "The I/O Complexity of Attention, or How Optimal is Flash Attention? (standard attention baseline)"
    slots = ("decode kernel", "prefill kernel")

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        return replace_ops(ops, ATTENTION_ROLES, lambda op: self._standard(op, ctx))

    def _standard(self, op: Op, ctx: PassContext) -> list[Op]:
        heads, kvh = op.shape.heads, max(1.0, op.shape.kv_heads)
        d_qk, d_v, a = op.shape.d_qk, op.shape.d_v, ctx.prec.act_bytes
        groups = ctx.batch.groups
        decode = all(q <= DECODE_MAX_QUERIES for q, _, _ in groups)
        cls = OpClass.ATTENTION_DECODE if decode else OpClass.ATTENTION_PREFILL
        scores = sum(n * q * (c + q) for q, c, n in groups) * heads          # every pair, mask applied after
        queries = sum(n * q for q, _, n in groups)
        # K (or V) of every attended token, once per query head
        half_kv = sum(n * ctx.kv.token_bytes(c + q, ctx.kv_width) for q, c, n in groups) / 2.0 * heads / kvh
        ctas = op.shape.ctas

        def kernel(name: str, flops: float, hbm: float, alu: float = 0.0, formula: str = "") -> Op:
            # the kernels keep the attention op's cost modifiers; `alu` replaces its CUDA-core work
            return Op(name, cls, flops, {"hbm": hbm}, op.dtype, replace(op.shape, pairs=scores / heads, ctas=ctas),
                      op.count, formula, alu_ops=alu or op.alu_ops, bandwidth_share=op.bandwidth_share)

        return [
            kernel("attention_scores", 2.0 * scores * d_qk, queries * heads * d_qk * a + half_kv + scores * a,
                   formula=f"S = QK^T for {scores:g} scores (all pairs), S written to HBM"),
            kernel("attention_softmax", 0.0, 2.0 * scores * a, scores * SOFTMAX_OPS,
                   formula=f"P = softmax(S): {scores:g} scores read and written"),
            kernel("attention_pv", 2.0 * scores * d_v, scores * a + half_kv + queries * heads * d_v * a,
                   formula="O = PV: P read back from HBM, V read per query head"),
        ]


@register
@dataclass(frozen=True)
class KVConcat(Technique):
    """Hugging Face `generate`'s cache: each decode step appends the new token's K/V with `torch.cat`
    (DynamicCache.update), which allocates a new tensor per layer and copies the whole cache into it:
    every step reads and writes every cached byte once more beside the attention kernel's read. The
    baseline engine of papers measured on Hugging Face (KIVI, GEAR, MiniCache, Keyformer); combined
    with a KV format or eviction, the copy is of the cache as stored. Not expressed: the transient
    copy's memory (one layer's cache at a time, small beside the whole)."""

    name = "kv_concat"
    family = "K"
    paper = "Hugging Face transformers generate() with DynamicCache (torch.cat per step), the baseline of KIVI et al."
    slots = ("cache append",)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return ops

        def with_copy(op: Op) -> list[Op]:
            cached = op.shape.kv_bytes if isinstance(op.shape, AttentionShape) else 0.0
            if op.op_class != OpClass.ATTENTION_DECODE or cached <= 0:
                return [op]
            copy = streaming("kv_concat", OpClass.ELEMENTWISE, cached, 1, 1, 0, 1.0, ctx.prec.kv, op.count)
            return [op, replace(copy, formula=f"torch.cat copies the cache: {cached:g} B read + written")]
        return replace_ops(ops, ATTENTION_ROLES, with_copy)


@register
@dataclass(frozen=True)
class StaticKVCache(Technique):
    """gpt-fast's cache (pytorch-labs/gpt-fast model.py, as Double Sparsity's end-to-end baseline ships it):
    setup_caches preallocates every sequence's K/V for `length` = prompt + output tokens, rounded up to a
    multiple of 8 (generate.py: max_seq_length = T + max_new_tokens), and each decode step attends over
    the whole buffer with a causal mask (KVCache.update returns all of k_cache; scaled_dot_product_attention
    on the math path over max_seq_length keys), so a step reads every allocated slot, filled or not: the
    decode attention kernel's cache and pairs scale by length / context. Memory is unchanged (whatif
    already plans a sequence's cache at prompt + output)."""

    name = "static_kv_cache"
    family = "K"
    paper = "gpt-fast (pytorch-labs): static KV cache attended in full each decode step"
    slots = ("cache append",)
    length: int = param(0, "tokens preallocated per sequence (0: the workload's prompt + output)", "tokens")

    def check_params(self) -> None:
        self.require(self.length >= 0, "length", "a non-negative integer")

    def for_workload(self, workload) -> StaticKVCache:
        # setup_caches rounds max_seq_length up to a multiple of 8 (find_multiple)
        return self if self.length else replace(self, length=-(-(workload.prompt + workload.output) // 8) * 8)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        cached = sum(n * c for q, c, n in ctx.batch.groups)
        padded = sum(n * max(c, self.length) for q, c, n in ctx.batch.groups)
        if not ctx.decode or cached <= 0 or padded <= cached:
            return ops
        factor = padded / cached

        def full_buffer(op: Op) -> Op:
            s = op.shape
            if op.op_class != OpClass.ATTENTION_DECODE or not isinstance(s, AttentionShape) or s.kv_bytes <= 0:
                return op
            extra = s.kv_bytes * (factor - 1.0)
            return replace(op, bytes={**op.bytes, "hbm": op.bytes.get("hbm", 0.0) + extra},
                           flops=op.flops * factor,
                           shape=replace(s, kv_bytes=s.kv_bytes * factor, pairs=s.pairs * factor,
                                         max_context=max(s.max_context, float(self.length))),
                           formula=op.formula + f"; static cache: all {self.length} slots read ({factor:.2f}x)")
        return replace_ops(ops, ATTENTION_ROLES, full_buffer)
