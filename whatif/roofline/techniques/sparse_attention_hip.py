"""Family D: hierarchically pruned attention (HiP): every query block finds its top-k keys by a tree
search over the pre-trained attention scores, so prefill and decode attend k keys per query and the
search costs O(log T) rounds of 2k representative keys: O(T log T) in all instead of O(T^2)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, causal_pairs
from ..context import PassContext
from ..ops import Op
from .base import Technique, param, register
from .kit import heads, key_dim, kv_heads, require_separate_keys, score_op, window_pairs


@register
@dataclass(frozen=True)
class HiP(Technique):
    """Hierarchically Pruned Attention: the full KV stays on the GPU; each block of `block_q` queries
    attends its top `k` keys, found on the fly by a tree search: start from k groups spanning the context,
    split each in two, score one representative key per half with the block's queries, keep the best k
    halves, and repeat log2(T / k) times until a group is `block_k` keys wide. Prefill computes only the
    pairs inside each query's k keys (all of them while the context is shorter than k); a decode step
    reads k tokens. Costs, per layer and head: every round 2k representative keys (head_dim each) read
    and multiplied by the block's queries, 2k scores top-k'd; the rounds use the block's mean context.
    HiP's k, block sizes and any reuse of a mask across decode steps are not in the abstract: k=512,
    block_q=32, block_k=2 and a fresh search every step are assumed."""

    name = "hip"
    gathers = ("prefill", "decode")   # token-level selection: its kernel gathers the chosen keys by index
    family = "D"
    paper = "HiP Attention: Sparse Sub-Quadratic Attention with Hierarchical Attention Pruning"
    slots = ("decode selection", "prefill sparsity")
    budget_param = "k"
    k: int = param(512, "keys each query attends (assumed)", "tokens")
    block_q: int = param(32, "queries that share one mask (assumed)", "tokens")
    block_k: int = param(2, "keys per group when the search stops (assumed)", "tokens")

    def check_params(self) -> None:
        self.require(self.k >= 1, "k", "a positive integer")
        self.require(self.block_q >= 1, "block_q", "a positive integer")
        self.require(self.block_k >= 1, "block_k", "a positive integer")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.k)

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES:
            return 1.0
        return min(1.0, window_pairs(q, c, self.k) / causal_pairs(q, c))

    def rounds(self, context: float) -> int:
        """Halvings from k groups spanning `context` keys down to groups of block_k keys."""
        width = context / self.k
        return math.ceil(math.log2(width / self.block_k)) if width > self.block_k else 0

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        h, kvh, d = heads(ctx), kv_heads(ctx), key_dim(ctx)
        reps = flops = 0.0
        for q, c, n in ctx.batch.groups:
            per_block = min(self.block_q, q)
            blocks = n * math.ceil(q / per_block)
            r = blocks * self.rounds(c + q / 2) * 2 * self.k          # representative keys, per KV head
            reps += r
            flops += 2.0 * r * h * per_block * d
        if not reps:
            return []
        summaries = reps * kvh * d
        return [score_op("hip_tree_search", ctx, summaries, ctx.prec.kv_bytes, reps * h, ctx.kv_layers,
                         flops / summaries, note=f"{self.k} groups halved per round, 2 representatives each")]
