"""Family C, draft-scored: a small draft model predicts which KV pairs (SpecKV) or prompt tokens (SpecPC)
the target will need, so the cache or the prompt is cut to a budget at the price of the draft's own
passes over the prompt, priced by the same roofline on the draft's graph on the target's GPUs."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...specs.models import ModelSpec
from ..config import ForwardBatch
from ..memory import stage_weight_bytes
from ..context import PassContext
from ..ops import Op, OpRole
from .base import Technique, param, register, replace_ops
from .decoding import draft_for
from .kit import PromptPositions, elementwise, full_attention, stepping, vote_ops


def starting(ctx: PassContext) -> int:
    """Sequences whose prompt starts in this pass: the draft runs over their prompt before the target."""
    return 0 if stepping(ctx) else sum(n for q, c, n in ctx.batch.groups if c == 0)


def draft_ops(draft: ModelSpec, ctx: PassContext, sequences: int, prompt: int, generate: int, prefix: str) -> list:
    """The draft model's prefill of `sequences` prompts, then `generate` decode steps of them all (each step
    priced at the mean cached length), on the target's GPUs and layout."""
    from ..graph import forward_ops     # graph imports the technique modules: import when used
    out = [replace(op, name=f"{prefix}_draft_prefill_{op.name}", role=None, part_of=None)
           for op in forward_ops(draft, ForwardBatch(((prompt, 0, sequences),)), ctx.par, ctx.prec,
                                 sm_count=ctx.sm_count)]
    if generate:
        step = forward_ops(draft, ForwardBatch.decode(sequences, prompt + generate // 2), ctx.par, ctx.prec,
                           sm_count=ctx.sm_count)
        out += [replace(op, name=f"{prefix}_draft_decode_{op.name}", count=op.count * generate, role=None,
                        part_of=None) for op in step]
    return out


@dataclass(frozen=True)
class DraftScored(Technique):
    """Shared: the draft model, its vocabulary check, the prompt bound from the workload."""

    def draft_model(self, target: ModelSpec) -> ModelSpec:
        return draft_for(self.name, self.draft, target)

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        self.draft_model(model)

    def notes(self, model: ModelSpec) -> list[str]:
        chosen = [f"{self.name}:draft=auto chose {self.draft_model(model).name} (the smallest shipped model with "
                  f"{model.name}'s vocabulary)"] if self.draft == "auto" else []
        return super().notes(model) + chosen

    def for_workload(self, workload):
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def extra_weight_bytes(self, model, par, prec) -> float:
        return stage_weight_bytes(self.draft_model(model), par, prec, 0)


@register
@dataclass(frozen=True)
class SpecKV(DraftScored):
    """SpecKV: before the target reads the prompt, the draft model prefills it and generates a
    `lookahead`-token draft answer; the target then reads the prompt with the draft answer appended, and
    the draft answer's queries vote for the prompt tokens each KV head keeps (SnapKV's vote with the draft
    output as the observation window), `budget` of them; generated tokens are appended. Costs: the draft's
    prefill and lookahead steps, the target's prefill over lookahead more tokens (not charged: at most a
    few per cent of a long prompt), the vote and the gather of the kept K/V. The draft's weights take HBM."""

    name = "speckv"
    family = "C"
    paper = "Draft-based Approximate Inference for LLMs (SpecKV)"
    slots = ("kv budget",)
    evicts = True
    budget_param = "budget"
    budget: int = param(1024, "prompt tokens kept per KV head (assumed)", "tokens")
    lookahead: int = param(64, "tokens the draft generates to score the KV with (assumed)", "tokens")
    draft: str = param("auto", "draft model profile; auto = the smallest shipped model with the target's "
                               "vocabulary (Llama-3.2-1B for a Llama-3.1 target)")
    prompt: int = param(0, "prompt tokens the budget applies to; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.lookahead >= 1, "lookahead", "a positive integer")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def stored_tokens(self, n: float) -> float:
        if not self.prompt or n <= self.prompt:
            return min(n, self.budget)
        return min(n, self.budget + (n - self.prompt))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return ops
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: full_attention(op, ctx, self.stored_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        seqs = starting(ctx)
        if not seqs or ctx.stage:
            return []
        return (draft_ops(self.draft_model(ctx.model), ctx, seqs, self.prompt or max(q for q, _, _ in ctx.batch.groups),
                          self.lookahead, "speckv")
                + vote_ops("speckv", ctx, self.lookahead, self.budget, ctx.kv_layers))


@register
@dataclass(frozen=True)
class SpecPC(PromptPositions, DraftScored):
    """SpecPC: the draft model prefills the prompt, and its attention from the prompt's last `window`
    queries (all heads and layers) picks the `keep` share of the prompt tokens to hand the target; the
    target prefills and caches only those, and generates after them. Costs: the draft's prefill and a
    vote over its scores (read back once per layer); the draft's weights take HBM."""

    name = "specpc"
    family = "C"
    paper = "Draft-based Approximate Inference for LLMs (SpecPC)"
    slots = ("prompt positions",)
    evicts = True
    budget_param = "keep"
    keep: float = param(0.25, "share of the prompt's tokens handed to the target (assumed)")
    window: int = param(64, "last prompt queries whose draft attention scores the tokens (assumed)", "tokens")
    draft: str = param("auto", "draft model profile; auto = the smallest shipped model with the target's "
                               "vocabulary (Llama-3.2-1B for a Llama-3.1 target)")
    prompt: int = param(0, "prompt tokens the selection applies to; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(0 < self.keep <= 1, "keep", "a share in (0, 1]")
        self.require(self.window >= 1, "window", "a positive integer")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def positions(self, tokens: float) -> float:
        return self.keep * tokens

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        seqs = starting(ctx)
        if not seqs or ctx.stage or not self.prompt:
            return []
        draft = self.draft_model(ctx.model)
        ops = draft_ops(draft, ctx, seqs, self.prompt, 0, "specpc")
        scores = seqs * self.prompt * min(self.window, self.prompt) * draft.num_heads
        ops.append(elementwise("specpc_select", scores * (2.0 * draft.head_dim + 8.0), scores * 4.0 * 2, scores,
                               draft.num_layers, f"{scores:g} draft scores per layer (window queries x prompt "
                               f"keys) written in fp32 and read for softmax, sum and top-k"))
        return ops
