"""Family C: KV eviction, selection and merging: a token budget held in memory, so memory and decode
attention bytes scale with the budget instead of the context, plus the cost of choosing the tokens."""
from __future__ import annotations

from dataclasses import dataclass

from ..ops import Op, streaming
from .base import PassContext, Technique, param
from .registry import register


@register
@dataclass(frozen=True)
class H2O(Technique):
    """Heavy-Hitter Oracle: keeps the `heavy` share of tokens with the largest accumulated attention
    plus the `recent` share of newest tokens, evicting the rest, so a sequence of n tokens caches
    (heavy + recent) x n. Costs: the attention kernel must also emit each head's attention
    probabilities so their running column sums (fp32, one per cached token and head) can be read,
    updated and written every step, and the lowest-scoring token is found and evicted."""

    name = "h2o"
    family = "C"
    paper = "H2O: Heavy-Hitter Oracle for Efficient Generative Inference of Large Language Models"
    slots = ("kv budget",)
    evicts = True
    heavy: float = param(0.1, "share of the sequence kept as heavy hitters")
    recent: float = param(0.1, "share of the sequence kept as the recent window")

    def check_params(self) -> None:
        self.require(0 <= self.heavy <= 1, "heavy", "a share from 0 to 1")
        self.require(0 <= self.recent <= 1, "recent", "a share from 0 to 1")
        self.require(self.heavy + self.recent > 0, "heavy", "more than 0 together with recent")

    def stored_tokens(self, n: float) -> float:
        return min(n, (self.heavy + self.recent) * n)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        heads = ctx.model.num_heads // ctx.par.tp
        scores = sum(n * q * (self.stored_tokens(c) + q) for q, c, n in ctx.batch.groups) * heads
        kept = sum(n * (self.stored_tokens(c) + q) for q, c, n in ctx.batch.groups) * heads
        # probabilities written by attention and read back, accumulators read and written
        return [streaming("h2o_score_update", "elementwise", kept, 2, 1, 2, 4.0, "fp32", ctx.layers,
                          extra_bytes=scores * 2 * 2.0)]
