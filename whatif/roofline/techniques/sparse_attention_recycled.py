"""Family D: sparse attention that alternates full and partial steps (Recycled Attention): the full KV
stays on the GPU; every `stride`-th decode step attends the whole context and its attention pattern is
recycled by the steps after it, which read only its top-`budget` tokens."""
from __future__ import annotations

from dataclasses import dataclass

from ..context import PassContext
from ..ops import Op
from .base import Technique, param, register
from .kit import cached, heads, score_op, stepping


@register
@dataclass(frozen=True)
class RecycledAttention(Technique):
    """Recycled Attention: one decode step in `stride` runs full attention over the stored context and
    keeps its `budget` most attended tokens; the other stride - 1 steps attend only those. Averaged over
    a stride a step reads n / stride + (1 - 1 / stride) x min(n, budget) tokens of n, and the full step's
    scores (heads x n) are written and top-k'd once a stride. Prefill is unchanged. Stride and budget are
    the paper's knobs (its defaults are not in the abstract: 10 and 4096 assumed)."""

    name = "recycled_attention"
    family = "D"
    paper = "Recycled Attention: Efficient inference for long-context language models"
    slots = ("decode selection",)
    budget_param = "budget"
    budget: int = param(4096, "tokens the recycled steps read (assumed)", "tokens")
    stride: int = param(10, "decode steps per full-attention step (assumed)", "steps")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.stride >= 1, "stride", "a positive integer")

    def read_tokens(self, stored: float) -> float:
        return stored / self.stride + (1 - 1 / self.stride) * min(stored, self.budget)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return []
        scores = cached(ctx) * heads(ctx) / self.stride      # the full step's scores, once a stride
        return [score_op("recycled_topk", ctx, 0.0, 0.0, scores, ctx.layers, 0.0,
                         note=f"the full step's scores top-k'd once every {self.stride} steps")]
