"""Family D: sparse attention: the full KV stays (on the GPU or the CPU) but each step reads or
computes only a selected part, at the price of a selection step."""
from __future__ import annotations

from dataclasses import dataclass

from ..ops import Op, streaming
from .base import PassContext, Technique, param
from .registry import register


@register
@dataclass(frozen=True)
class Quest(Technique):
    """Query-aware page selection: the cache keeps every token, but each decode step reads only the
    `budget` tokens of the pages whose stored per-channel min/max keys promise the highest scores.
    Costs: per page, the min and max key vectors (2 x head_dim per KV head) are read and scored
    against the query, and a top-k picks the pages. Prefill is unchanged."""

    name = "quest"
    family = "D"
    paper = "Quest: Query-Aware Sparsity for Efficient Long-Context LLM Inference"
    slots = ("decode selection",)
    budget: int = param(4096, "tokens read per decode step", "tokens")
    page_size: int = param(16, "tokens per page", "tokens")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.page_size >= 1, "page_size", "a positive integer")

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.budget)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return []
        kvh = max(1, ctx.model.num_kv_heads // ctx.par.tp)
        heads = ctx.model.num_heads // ctx.par.tp
        pages = sum(n * c / self.page_size for _, c, n in ctx.batch.groups)
        meta = pages * 2 * kvh * ctx.model.head_dim        # min and max key per page
        return [streaming("quest_page_scores", "elementwise", meta, 1, 0, 2.0 * heads / kvh, ctx.prec.act_bytes,
                          ctx.prec.activation, ctx.layers, extra_bytes=pages * heads * 4.0)]
