"""Family D: sparse attention in prefill: `pair_fraction` (the share of the causal (query, key)
pairs computed) plus the cost of finding the pattern.

Family D's common rules (where the full KV lives, which passes pay for selection) and its split into
files are in sparse_attention.py's docstring.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..attention import DECODE_MAX_QUERIES, causal_pairs
from ..context import PassContext
from ..ops import AttentionShape, Op, OpClass, StreamShape, streaming
from .base import Technique, param, register
from .kit import (MINFERENCE_LAST_Q, MINFERENCE_SLASH, MINFERENCE_VERTICAL, TOPK_OPS_PER_SCORE, heads, key_dim,
                  kv_heads, pattern_estimate_op, stepping, vertical_slash_pairs)


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
    gathers = ("prefill",)   # token-level selection: its kernel gathers the chosen keys by index
    family = "D"
    paper = "MInference 1.0: Accelerating Pre-filling for Long-Context LLMs via Dynamic Sparse Attention"
    slots = ("prefill sparsity",)
    vertical: int = param(MINFERENCE_VERTICAL, "vertical lines (key columns) per head", "tokens")
    slash: int = param(MINFERENCE_SLASH, "slash lines (diagonals) per head", "tokens")
    last_q: int = param(MINFERENCE_LAST_Q, "last queries whose attention estimates the pattern", "tokens")
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
        return vertical_slash_pairs(q, c, self.vertical, self.slash) / causal_pairs(q, c)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            return []
        return [pattern_estimate_op(ctx, self.last_q, 1.0, "minference_pattern_estimate")]



# HyperAttention's passes over each approximated level's output (release utils.add_self_attentions: c * attn1,
# (1 - c) * attn2 and their sum read 4 and write 3 output-sized tensors; done twice per level, block + sampled and
# then + the diagonal half; the inverse gather reads and writes once; torch.cat of the halves reads and writes once
MERGE_PASSES = 2 * 7 + 2 + 4
# The Triton path's block mask per (query, sampled column): a bool written by the compare, read and cast to 16 bits,
# scaled in place (read + write) and read by the attention kernel as its bias: 1 + 3 + 4 + 2 bytes
BIAS_MASK_BYTES = 10.0
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
        quant = streaming("sale_quantize_qk", OpClass.ELEMENTWISE, queries * (h + kvh) * d, 1, 0, 6.0,
                          ctx.prec.act_bytes, ctx.prec.activation, ctx.layers,
                          extra_bytes=queries * (h + kvh) * d * low)
        estimate = Op("sale_score_estimate", OpClass.ATTENTION_PREFILL, 2.0 * pairs * h * d * low,
                      {"hbm": (queries * h + keys * kvh) * d * low + pairs * h / 64 ** 2},
                      "int8", AttentionShape(pairs=pairs), ctx.layers,
                      f"{self.bits}-bit QK^T over every causal pair (as int8 work x {low:g}); "
                      f"{SALE_SCORE_OPS_PER_PAIR:g} CUDA-core ops per score; 64x64 block mask written",
                      alu_ops=pairs * h * SALE_SCORE_OPS_PER_PAIR)
        return [quant, estimate]


@register
@dataclass(frozen=True)
class HyperAttention(Technique):
    """Near-linear approximate prefill attention. The causal score matrix is split recursively: the
    two diagonal (causal) halves recurse and the off-diagonal (non-causal) block is approximated, each
    query there computing only the `block_size` keys of its sortLSH bucket block plus `sample_size`
    sampled key columns; below `min_seq_len` tokens attention is exact. Costs, at every approximated level
    of the recursion (the released models/attention/hyper_attn.py, forward and forward_no_causal_mask), over
    the off-diagonal block's queries and keys (half the sequence per level): hashing them with
    `lsh_projections` random projections, sorting and gathering Q, K and V into hash order; with the Triton
    kernel (the release's default, cuda=False) a dense bias masking the sampled columns' block-diagonal
    entries, built per (query, sample) and read by the attention kernel; merging the block and sampled
    attentions by log-sum-exp (utils.add_self_attentions), the inverse gather of the output, the merge with
    the diagonal half's output and the concatenation of the halves. A chunk of q new tokens after c cached
    is charged the pairs the recursion adds from c to c + q and its share q / (c + q) of the recursion's
    per-level passes. KV stays on the GPU; decode is unchanged."""

    name = "hyperattention"
    gathers = ("prefill",)   # token-level selection: its kernel gathers the chosen keys by index
    family = "D"
    paper = "HyperAttention: Long-context Attention in Near-Linear Time"
    slots = ("prefill sparsity",)
    block_size: int = param(256, "keys per LSH bucket block each query attends (the released code's default)",
                            "tokens")
    sample_size: int = param(256, "sampled key columns per query (the released code's default)", "tokens")
    min_seq_len: int = param(4096, "length below which attention stays exact (the released benchmark's, "
                                   "benchmark_single_attention.py)", "tokens")
    lsh_projections: int = param(7, "random projections per hash (the released code's default)")
    bias_mask: bool = param(True, "the sampled columns' attention adds a dense block mask (the release's Triton "
                                  "path, cuda=False, its default and its README's); false: the CUDA "
                                  "FlashAttention path, which takes no bias")

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
        # The recursion is not monotone in n (halving rounds differently), so a chunk's difference can go
        # negative: each new query still attends at least its block and samples (or all its keys).
        least = q * min(self.block_size + self.sample_size, c + q)
        return min(1.0, max(least, self.pairs(c + q) - self.pairs(c)) / causal_pairs(q, c))

    def levels(self, n: float) -> int:
        """Levels of the causal recursion over n tokens whose off-diagonal block is approximated (as pairs())."""
        count = 0
        while n > self.min_seq_len:
            count, n = count + 1, n / 2
        return count

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            return []
        h, kvh, d, a = heads(ctx), kv_heads(ctx), key_dim(ctx), ctx.prec.act_bytes
        # off-diagonal queries (and as many keys) over the approximated levels: half the sequence per level
        half = sum(n * self.levels(c + q) * q / 2.0 for q, c, n in ctx.batch.groups)
        if half <= 0:
            return []
        rows = half * (h + kvh)                             # query and key rows hashed and sorted
        moved = half * (h + 2 * kvh) * d                    # Q, K and V elements gathered into hash order
        sort_ops = rows * TOPK_OPS_PER_SCORE * math.log2(max(ctx.batch.tokens, 2))
        out = half * h * d                                  # attention output elements of those queries
        bias = half * h * self.sample_size * BIAS_MASK_BYTES if self.bias_mask else 0.0
        return [Op("hyperattention_lsh_sort", OpClass.ATTENTION_PREFILL, 2.0 * self.lsh_projections * rows * d,
                   {"hbm": 2 * moved * a + rows * d * a}, ctx.prec.activation, StreamShape(moved), ctx.layers,
                   f"per approximated level: {self.lsh_projections} projections per hashed row (read), a sort of "
                   f"the rows, Q/K/V gathered (read + write); {rows:g} rows over the levels", alu_ops=sort_ops),
                streaming("hyperattention_merge", OpClass.ATTENTION_PREFILL, out, MERGE_PASSES, 0, 6.0, a,
                          ctx.prec.activation, ctx.layers, extra_bytes=bias)]
