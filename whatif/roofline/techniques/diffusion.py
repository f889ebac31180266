"""Family G: masked diffusion LLMs (LLaDA, Dream) decode by denoising steps, not token by token.

The generation starts as `output` mask tokens after the prompt. Each denoising step is one forward
pass with bidirectional attention (every query attends every key: q*(c+q) pairs, not the causal
half) that predicts every masked position; the most confident predictions are committed. Semi-
autoregressive decoding commits the generation block by block, spreading the T steps evenly over
the blocks. What a step computes depends on the cache (Fast-dLLM's implementations):

- none: every step recomputes the prompt and all generated positions, q = prompt + output, c = 0;
- prefix: each block starts with one full pass that refreshes the cache (it is also a denoising
  step); its later steps compute the current block and the masked blocks after it, attending to the
  cached prompt and finished blocks;
- dual: each block starts with the same full refresh pass; its later steps compute only the
  current block, attending to the cached prefix and the cached (masked) suffix.

Step-reduction methods (dParallel's certainty-forcing distillation, Learn2PD's learned filter and
end-of-text prediction, LocalLeap, SchED's early exit, CCD's adaptive budget, FreeDave's draft and
verify) change how many steps a generation takes, so they are `steps` (or `tokens_per_step`) here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import WhatifError
from ..attention import causal_pairs
from ..config import ForwardBatch
from ..decode_round import Round, RoundContext
from ..memory import activation_bytes
from ..ops import OpRole
from ..context import PrefillUnit
from .base import param, register
from .decoding import Decoder, as_engine_runs

CACHES = ("none", "prefix", "dual")

# estimate.py times at least one prefill pass and output.py shows the first (e.prefill[0][0]), but a
# diffusion LLM has no prefill: its first denoising step is its first pass. A one-token pass of one
# sequence stands in (about one weight read: one autoregressive decode step at batch 1).
STAND_IN_PREFILL: list[PrefillUnit] = [(1, 0, 1)]


def bidirectional_share(q: int, c: int) -> float:
    """Pairs of bidirectional attention (each of q queries attends all c + q keys) over causal pairs."""
    return q * (c + q) / causal_pairs(q, c) if q > 0 else 1.0


def block_span(offset: int, block: int, output: int) -> tuple[int, int]:
    """(first position, length) of the block holding generated position `offset` (the last may be short)."""
    start = (offset // block) * block
    return start, min(block, output - start)


def block_passes(cache: str, prompt: int, output: int, start: int, length: int) -> tuple[tuple[int, int], ...]:
    """(computed, cached) tokens per sequence of a block's first pass and of its later steps."""
    full = (prompt + output, 0)
    if cache == "none":
        return full, full
    if cache == "prefix":   # the current block and every masked block after it; prompt + finished blocks cached
        return full, (output - start, prompt + start)
    return full, (length, prompt + output - length)   # dual: only the block; prefix and suffix cached


@register
@dataclass(frozen=True)
class Diffusion(Decoder):
    """A masked diffusion LLM (LLaDA, Dream) generates by T denoising steps instead of one pass per
    token: each step is a bidirectional forward pass (all query-key pairs, no causal mask) with logits
    at every position it computes, and commits output/T tokens of the current block. Without a cache
    every step recomputes the prompt and the whole generation (q = prompt + output), so T = output
    steps cost far more than autoregressive decoding; Fast-dLLM's prefix cache computes only the
    current and later blocks, its dual cache only the current block, each refreshing the cache with
    one full pass per block. No separate prefill: the first step reads the prompt."""

    name = "diffusion"
    family = "G"
    paper = ("Large Language Diffusion Models (LLaDA); Fast-dLLM; dKV-Cache; dParallel; Learn2PD; LocalLeap; "
             "SchED; CCD; FreeDave")
    first_token_from_prefill = False
    steps: int = param(0, "denoising steps for the whole generation; 0 = one per generated token (LLaDA's "
                          "default); step-reduction methods set fewer", "steps")
    tokens_per_step: float = param(0.0, "instead of steps: tokens committed per step on average (steps = "
                                        "ceil(output / this)); 0 = use steps", "tokens")
    block: int = param(32, "semi-autoregressive block length (LLaDA's default 32); 0 = the whole generation "
                           "is one block", "tokens")
    cache: str = param("none", "none: every step recomputes prompt + generation; prefix: Fast-dLLM prefix "
                               "cache (computes the current and later blocks); dual: Fast-dLLM dual cache "
                               "(computes the current block only); both refresh with one full pass per block")
    candidates: int = param(1, "sequences each step computes per request: 1, or FreeDave's candidate "
                               "continuations verified together in a batch (count assumed)")

    def check_params(self) -> None:
        self.require(self.steps >= 0, "steps", "an integer >= 0 (0 = one step per generated token)")
        self.require(self.tokens_per_step == 0 or self.tokens_per_step > 0, "tokens_per_step",
                     "> 0 (or 0 to use steps)")
        if self.steps and self.tokens_per_step:
            raise WhatifError(f"--technique {self.name}: give steps= or tokens_per_step=, not both")
        self.require(self.block >= 0, "block", "an integer >= 0 (0 = the whole generation is one block)")
        self.require(self.cache in CACHES, "cache", "one of " + ", ".join(CACHES))
        self.require(self.candidates >= 1, "candidates", "an integer >= 1")

    # ---- schedule
    def total_steps(self, output: int) -> int:
        if self.tokens_per_step:
            return max(1, math.ceil(output / self.tokens_per_step))
        return self.steps or output

    def block_length(self, output: int) -> int:
        return min(self.block, output) if self.block else output

    def check_schedule(self, output: int) -> None:
        steps, block = self.total_steps(output), self.block_length(output)
        blocks = -(-output // block)
        if steps < blocks:
            key = "tokens_per_step" if self.tokens_per_step else "steps"
            raise WhatifError(f"--technique {self.name}:{key}={getattr(self, key)}: {steps} steps for {blocks} blocks "
                              f"of {block} tokens (output {output}); each block needs at least one step: take "
                              f"more steps or longer blocks (block=0: one block)")

    def steps_per_block(self, output: int, length: int) -> float:
        """Steps spread evenly over blocks (a short last block gets its share, at least one)."""
        return max(1.0, self.total_steps(output) * length / output)

    @property
    def keeps_kv(self) -> bool:
        """Whether K/V outlive a step: without a cache there is nothing to quantize, evict or select."""
        return self.cache != "none"

    # ---- cost hooks
    def pair_fraction(self, q: int, c: int) -> float:
        return bidirectional_share(q, c)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return list(STAND_IN_PREFILL)

    def stored_tokens(self, n: float) -> float:
        return 0.0 if self.cache == "none" else n   # nothing is kept between steps without a cache

    def rewrite_ops(self, ops, ctx):
        if self.cache != "none":
            return ops
        return [op for op in ops if op.role != OpRole.KV_WRITE]   # K/V live only inside the pass

    def extra_kv_bytes(self, model, par, prec, tokens) -> float:
        """A full pass's working set per sequence: every position's activations and fp32 logits (the
        full refresh pass of a cached mode has it too), per candidate."""
        return self.candidates * activation_bytes(model, tokens, tokens, par, prec)

    # ---- the round: one denoising step, averaged over the steps of the block being decoded
    def round(self, rc: RoundContext) -> Round:
        rc = as_engine_runs(rc)
        n = rc.output
        self.check_schedule(n)
        start, length = block_span(max(0, rc.context - rc.prompt), self.block_length(n), n)
        per_block = self.steps_per_block(n, length)
        (q0, c0), (q, c) = block_passes(self.cache, rc.prompt, n, start, length)
        rows = rc.batch * self.candidates
        step = rc.target(ForwardBatch.verify_pass(rows, q, c))
        refresh = step if (q0, c0) == (q, c) else rc.target(ForwardBatch.verify_pass(rows, q0, c0))
        # the block's first step is the refresh pass; what it costs beyond a regular step, per step
        overhead = (refresh.time_s - step.time_s) / per_block
        detail = {"steps": self.total_steps(n), "steps_per_block": per_block, "block_start": start,
                  "block_tokens": length, "cache": self.cache, "computed_per_step": q,
                  "attended_per_step": q + c, "refresh_s": refresh.time_s}
        return Round(length / per_block, step, overhead_s=overhead, detail=detail)

    def first_visible_tokens(self, rc: RoundContext) -> int:
        return self.block_length(rc.output)
