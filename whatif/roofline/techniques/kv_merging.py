"""Family C, merging variants: the cache is cut to a budget as eviction does, but the tokens that leave
are folded into the kept ones (KVMerger, EMS, Elastic Cache) or the budget is split unevenly over layers
(PrefixKV) or over a reasoning tree (TIM). Memory and decode attention scale with what is kept; the
price is the importance scores, similarities and merged K/V writes each method states.

A budget of the prompt is set when the prompt has been read; generated tokens are then appended to it
(hooks see a sequence's token count only, so `prompt`, bound from the workload, says where it ends).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..context import PassContext
from ..ops import Op, OpRole
from .base import Technique, param, register, replace_ops
from .kit import elementwise, full_attention, score_update, stepping, vote_ops

SIMILARITY_OPS = 3.0   # multiply-add per element plus its norm's share, for a cosine similarity; assumed
ROPE_OPS = 6.0         # ops per key element to rotate it to a new position (2 mul, 1 add, sin/cos share), assumed


def kv_heads_per_gpu(ctx: PassContext) -> int:
    return max(1, ctx.model.num_kv_heads // ctx.par.tp)


def ending(ctx: PassContext, prompt: int) -> int:
    """Sequences whose prompt is read to its end in this pass (a prefill pass): they pay the compression."""
    if stepping(ctx):
        return 0
    return sum(n for q, c, n in ctx.batch.groups if (c + q >= prompt if prompt else c == 0))


def prompt_tokens(ctx: PassContext, prompt: int) -> float:
    """Prompt tokens of the sequences whose prompt ends in this pass."""
    return sum(n * (c + q) for q, c, n in ctx.batch.groups
               if not stepping(ctx) and (c + q >= prompt if prompt else c == 0))


def merge_op(name: str, ctx: PassContext, tokens_in: float, tokens_out: float, compares: float, note: str) -> Op:
    """Merging `tokens_in` cached tokens into `tokens_out` per layer: every K/V read once, each key
    compared (cosine) with `compares` others, the merged K/V written (a weighted sum: 2 ops per element)."""
    kvh, d = kv_heads_per_gpu(ctx), ctx.model.head_dim
    width = ctx.kv.width(ctx.kv_width)
    flops = tokens_in * kvh * d * compares * SIMILARITY_OPS + tokens_in * width * 2.0
    nbytes = ctx.kv.token_bytes(tokens_in, ctx.kv_width) + ctx.kv.token_bytes(tokens_out, ctx.kv_width)
    return elementwise(name, flops, nbytes, tokens_in * width, ctx.kv_layers,
                       f"{tokens_in:g} tokens' K/V read, keys compared with {compares:g} others, "
                       f"{tokens_out:g} merged tokens written; {note}")


@dataclass(frozen=True)
class PromptBudget(Technique):
    """Shared: a budget of the prompt's tokens kept (merged into) when the prompt ends, generated tokens
    appended; the prefill attends the whole prompt before it is compressed."""

    slots = ("kv budget",)
    evicts = True

    def kept_of(self, prompt: float) -> float:
        raise NotImplementedError

    def for_workload(self, workload):
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def stored_tokens(self, n: float) -> float:
        if not self.prompt or n <= self.prompt:
            return min(n, self.kept_of(n))
        return min(n, self.kept_of(self.prompt) + (n - self.prompt))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return ops
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: full_attention(op, ctx, self.stored_tokens))


@register
@dataclass(frozen=True)
class KVMerger(PromptBudget):
    """KVMerger: when the prompt has been read, each KV head's keys are compared (cosine) with their
    neighbours to find merging sets, runs of consecutive similar keys; every set is merged into one state
    by Gaussian-kernel weights, so the cache keeps the `kept` share of the prompt (the paper's budgets:
    50% and 35%). Costs at the end of prefill, per layer: the prompt's keys read once for the adjacent
    similarities, every K/V read and the kept ones written. Decode reads the kept share plus the
    generated tokens. Not charged: the choice of each set's pivot (a per-set argmax)."""

    name = "kvmerger"
    family = "C"
    paper = "Model Tells You Where to Merge: Adaptive KV Cache Merging for LLMs on Long-Context Tasks"
    budget_param = "kept"
    kept: float = param(0.5, "share of the prompt's tokens kept after merging (the paper's budgets: 0.5 and 0.35)")
    prompt: int = param(0, "prompt tokens the budget is a share of; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def kept_of(self, prompt: float) -> float:
        return self.kept * prompt

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        tokens = prompt_tokens(ctx, self.prompt)
        if not tokens:
            return []
        return [merge_op("kvmerger_merge", ctx, tokens, self.kept * tokens, 1.0,
                         "adjacent-key similarity finds the merging sets")]


@register
@dataclass(frozen=True)
class EMS(PromptBudget):
    """EMS (Evict-then-Merge): when the prompt has been read, each head scores its tokens by a Global-Local
    score, the attention the tokens received from the whole prompt (global, accumulated as H2O does) and
    from the last `window` queries (local); it keeps the `budget` best (the paper's LongBench setting: 256
    per head), evicts the least important and merges the redundant rest into the kept tokens they most
    resemble (each compared with every kept key: a tokens x budget similarity per head; the zero-class
    mechanism lets all heads do it in one kernel). Costs at the end of prefill: the prefill attention also
    emits its scores for accumulation, the window's votes, the merge. Decode reads the budget plus the
    generated tokens."""

    name = "ems"
    family = "C"
    paper = ("EMS: Adaptive Evict-then-Merge Strategy for Head-wise KV Cache Compression Based on Global-Local "
             "Importance")
    budget_param = "budget"
    budget: int = param(256, "prompt tokens kept per head (the paper's LongBench cache budget)", "tokens")
    window: int = param(32, "last prompt queries whose attention is the local score (assumed, as SnapKV's)",
                        "tokens")
    prompt: int = param(0, "prompt tokens the budget applies to; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.window >= 1, "window", "a positive integer")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def kept_of(self, prompt: float) -> float:
        return min(prompt, max(self.budget, self.window))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            return []
        ops = [score_update("ems_global_score", ctx, lambda c: c, 1.0)]
        ops += vote_ops("ems_local", ctx, self.window, self.budget, ctx.kv_layers)[:2]
        tokens = prompt_tokens(ctx, self.prompt)
        if tokens:
            seqs = ending(ctx, self.prompt)
            ops.append(merge_op("ems_merge", ctx, tokens, seqs * self.kept_of(tokens / seqs), self.budget,
                                "every evicted key compared with the kept keys of its head"))
        return ops


@register
@dataclass(frozen=True)
class ElasticCache(Technique):
    """Elastic Cache: a share `kept` of the cache survives at any length ('an arbitrary acceleration
    ratio'). When the instruction (prompt) is encoded, tokens are ranked by how often they are attended
    (accumulated attention, as H2O) and the most important become anchors; the others are merged into the
    nearest anchor (read every K/V, write the anchors). While generating, tokens are prioritised by their
    distance with an offset, so the first and the most recent tokens stay and the token leaving the
    recent window is merged into its anchor each step: one K/V vector per KV head read twice and written
    once, no scores. Stored and read tokens: kept x n."""

    name = "elastic_cache"
    family = "C"
    paper = "Efficient Inference of Vision Instruction-Following Models with Elastic Cache"
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.5, "share of the sequence's tokens kept as anchors (assumed; the paper sweeps it)")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")

    def stored_tokens(self, n: float) -> float:
        return min(n, self.kept * n)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return ops
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: full_attention(op, ctx, self.stored_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if stepping(ctx):
            tokens = sum(n for _, _, n in ctx.batch.groups)
            merged = tokens * kv_heads_per_gpu(ctx) * ctx.model.head_dim * 2
            return [elementwise("elastic_cache_merge", 2.0 * merged, 3 * merged * ctx.prec.kv_bytes, merged,
                                ctx.kv_layers, f"{merged:g} K/V elements leaving the window merged into anchors")]
        tokens = prompt_tokens(ctx, 0)
        ops = [score_update("elastic_cache_importance", ctx, lambda c: c, 1.0)]
        if tokens:
            ops.append(merge_op("elastic_cache_anchor_merge", ctx, tokens, self.kept * tokens, 0.0,
                                "each token merged into its nearest anchor by position"))
        return ops


@register
@dataclass(frozen=True)
class PrefixKV(Technique):
    """PrefixKV: each layer keeps its own prefix of its tokens ranked by importance (accumulated attention,
    as H2O), the layers' shares found by a binary search for one global configuration whose mean is the
    `kept` budget (the search runs offline, on calibration samples, so a request pays only the ranking).
    Memory and decode attention are linear in each layer's tokens, so they follow the mean share: the
    uneven split costs what a uniform budget of the same mean costs; its gain is the quality at a budget."""

    name = "prefixkv"
    family = "C"
    paper = ("PrefixKV: Adaptive Prefix KV Cache is What Vision Instruction-Following Models Need for Efficient "
             "Generation")
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.5, "mean share of the tokens kept over layers (assumed; the paper sweeps it)")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")

    def stored_tokens(self, n: float) -> float:
        return min(n, self.kept * n)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        return [score_update("prefixkv_importance", ctx, self.stored_tokens, 1.0)]


@register
@dataclass(frozen=True)
class TIM(Technique):
    """TIM on TIMRUN: the model writes its reasoning as a tree of subtasks, and when a subtask concludes the
    runtime drops the KV of its finished sub-subtasks (rule-based subtask pruning), keeping a working
    memory of the prompt and the `kept` share of the generated tokens (the paper prunes up to 90%). The
    kept tokens after a pruned span are moved into the freed pages and re-rotated to their new positions
    (reusing positional embeddings): once every `subtask` generated tokens, every kept generated token's
    K/V is read, its key rotated, and written. Prefill is unchanged."""

    name = "tim"
    family = "C"
    paper = "Beyond Context Limits: Subconscious Threads for Long-Horizon Reasoning"
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.1, "share of the generated tokens' KV kept in the working memory (the paper prunes "
                             "up to 90%)")
    subtask: int = param(256, "generated tokens per pruning (one subtask's length; assumed)", "tokens")
    prompt: int = param(0, "prompt tokens, never pruned; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")
        self.require(self.subtask >= 1, "subtask", "a positive integer")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def for_workload(self, workload) -> TIM:
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def stored_tokens(self, n: float) -> float:
        return min(n, self.prompt) + self.kept * max(0.0, n - self.prompt)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return []
        moved = sum(n * self.kept * max(0.0, c - self.prompt) for _, c, n in ctx.batch.groups) / self.subtask
        if not moved:
            return []
        keys = moved * kv_heads_per_gpu(ctx) * ctx.model.head_dim
        return [elementwise("tim_prune_compact", keys * ROPE_OPS, 2 * ctx.kv.token_bytes(moved, ctx.kv_width),
                            moved * ctx.kv.width(ctx.kv_width), ctx.kv_layers,
                            f"{moved:g} kept tokens' K/V moved and re-rotated per step (a pruning every "
                            f"{self.subtask} tokens, amortized)")]

