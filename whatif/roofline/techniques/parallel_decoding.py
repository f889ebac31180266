"""Family G: several tokens per forward pass of an autoregressive model.

Multi-token prediction heads draft for self-speculation (a verify pass checks them), Lexical Unit
Decoding commits the confident run of a wider step without verification, and Superposed Decoding
advances k drafts at once from one superposed pass. Diffusion LLMs are in diffusion.py.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..config import ForwardBatch
from ..decode_round import Round, RoundContext
from ..forward_pass import time_pass
from .base import param, register
from .decoding import Decoder, Speculative, as_engine_runs, draft_kv_bytes


def head_model(model: ModelSpec) -> ModelSpec:
    """One prediction head: a single transformer layer of the target's shape (dense MLP) that feeds
    the target's own LM head."""
    inter = model.intermediate_size if model.moe is None else \
        model.moe.expert_intermediate_size * max(1, model.moe.experts_per_token)
    return replace(model, name=f"{model.name}-mtp-head", num_layers=1, moe=None, intermediate_size=inter)


@register
@dataclass(frozen=True)
class MultiToken(Speculative):
    """Multi-token prediction heads used for self-speculative decoding (Gloeckle et al.; DeepSeek-V3's
    MTP): beside the next-token output, k extra heads predict tokens 2..k+1 ahead. Each extra head is
    one transformer layer of the model's shape on the trunk's last hidden state, sharing the LM head;
    the heads run over every position of the verify pass (their own KV stays current, and the last
    accepted position's drafts are ready) and the next pass verifies the k drafts. Costs: k head layers
    and k LM-head GEMMs per round, the heads' weights and their one-layer KV caches in HBM."""

    name = "multi_token"
    family = "G"
    paper = ("Better & Faster Large Language Models via Multi-token Prediction (Gloeckle et al.); "
             "DeepSeek-V3 Technical Report (multi-token prediction)")
    k: int = param(3, "extra prediction heads, one drafted token each (Gloeckle et al.'s 4-token model: 3)",
                   "heads")
    alphas: str = param("0.85/0.7/0.6", "acceptance of each extra head's token given the earlier ones accepted "
                                        "(assumed; DeepSeek-V3 reports 85-90% for its one extra token); "
                                        "'/'-separated, the last repeats")

    def check_params(self) -> None:
        super().check_params()
        if len(self.depth_alphas()) > self.k:
            raise WhatifError(f"--technique {self.name}:tree={self.tree!r}: {len(self.depth_alphas())} levels deep, "
                              f"but only k={self.k} heads draft")

    def draft_s(self, rc: RoundContext, widths: list[int], tokens: float) -> float:
        s = rc.setup
        heads = rc.other_model(head_model(s.user_model), s.parallel.tp)
        verified = sum(widths) + 1
        one = time_pass(heads, ForwardBatch.verify_pass(rc.batch, verified, rc.context), rc.cuda_graphs).time_s
        return self.k * one

    def extra_weight_bytes(self, model, par, prec) -> float:
        return self.k * head_model(model).layer_params(0) / par.tp * prec.weight_bytes

    def extra_kv_bytes(self, model, par, prec, tokens) -> float:
        return self.k * draft_kv_bytes(head_model(model), par.tp, prec, tokens)


@register
@dataclass(frozen=True)
class LexicalUnits(Decoder):
    """Lexical Unit Decoding (LUD): a model fine-tuned to predict several contiguous tokens at once.
    Each step feeds the last committed unit's tokens plus placeholder positions (`span` positions in
    all, logits at each) and commits the leading run of confident predictions, a lexical unit of
    `tokens_per_step` tokens on average, with no verify pass. A step costs one decode pass `span`
    tokens wide: about one decode step while the batch is memory-bound, more once it is not."""

    name = "lexical_units"
    family = "G"
    paper = "Decoding at the Speed of Thought: Harnessing Parallel Decoding of Lexical Units for LLMs"
    span: int = param(4, "positions each step computes with logits: the last unit's tokens re-fed plus the "
                         "placeholder positions predicted (assumed)", "tokens")
    tokens_per_step: float = param(1.33, "tokens a step commits on average (assumed: LUD's 33% speed-up on "
                                         "natural language at batch 1, where a 4-wide step costs about one "
                                         "decode step, implies about 1.33)", "tokens")

    def check_params(self) -> None:
        self.require(self.span >= 1, "span", "an integer >= 1")
        self.require(1.0 <= self.tokens_per_step <= self.span, "tokens_per_step", f"in [1, span={self.span}]")

    def round(self, rc: RoundContext) -> Round:
        rc = as_engine_runs(rc)
        step = rc.target(ForwardBatch.verify_pass(rc.batch, self.span, rc.context))
        return Round(self.tokens_per_step, step, detail={"span": self.span})


@register
@dataclass(frozen=True)
class Superposed(Decoder):
    """Superposed Decoding: k drafts share one sequence. Each step feeds a weighted superposition of
    the k drafts' last token embeddings as one token, runs one ordinary decode pass, extends each
    draft by the top-k tokens (k^2 candidates), scores them with n-gram models on the CPU and keeps
    the k best. One pass thus adds a token to each of k drafts. Throughput and TPOT here count draft
    tokens: --output N is N draft tokens in all (N/k per draft), tok/s is draft tokens per second
    summed over the k drafts. The drafts share one KV cache of N/k tokens (the memory plan reserves N)."""

    name = "superposed"
    family = "G"
    paper = "Superposed Decoding: Multiple Generations from a Single Autoregressive Inference Pass"
    drafts: int = param(3, "drafts k generated together from one pass (the paper's headline: k >= 3)", "drafts")
    ngram_us: float = param(10.0, "CPU time to score one of the k^2 candidate extensions with the n-gram "
                                  "models, per sequence (assumed)", "us")

    def check_params(self) -> None:
        self.require(self.drafts >= 1, "drafts", "an integer >= 1")
        self.require(self.ngram_us >= 0, "ngram_us", ">= 0")

    def round(self, rc: RoundContext) -> Round:
        rc = as_engine_runs(rc)
        # the estimate counts draft tokens; the shared sequence holds one position per k of them
        position = rc.prompt + max(0, rc.context - rc.prompt) // self.drafts
        step = rc.target(ForwardBatch.decode(rc.batch, position))
        ngram = rc.batch * self.drafts ** 2 * self.ngram_us * 1e-6
        return Round(float(self.drafts), step, overhead_s=ngram,
                     detail={"drafts": self.drafts, "candidates_scored": self.drafts ** 2, "position": position})
