"""Family D: retrieval from a block-organised context memory by a probe query (ActQKV, over the sliding-window
context memory of InfLLM that its abstract builds on): each query attends its initial tokens, a local window
and the blocks a probe retrieves, in prefill and decode alike."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES, causal_pairs
from ..context import PassContext
from ..ops import Op, OpClass, streaming
from .base import Technique, param, register
from .kit import heads, key_dim, kv_heads, require_separate_keys, score_op, window_pairs


@register
@dataclass(frozen=True)
class ActQKV(Technique):
    """ActQKV: the full KV stays on the GPU, organised as blocks of `block` tokens, each represented by `reps`
    keys. Prefill runs in chunks of `chunk` tokens; in each chunk the tokens with the largest Activation Bias
    (how far a query's activations stray from the chunk's mean: one read of its queries) form a probe query
    that scores every past block's representatives, and the chunk attends the initial `sinks` tokens, the
    local `window` and the `retrieved` tokens of the best blocks. A decode step does the same with the
    current query as the probe; the dynamic cut-off sets how many tokens each layer retrieves from the
    information density (its mean over layers is `retrieved`). Costs: per chunk (prefill) or step (decode),
    layer and head, every block's representatives read and scored, a top-k; the attention computes and
    reads sinks + window + retrieved keys per query. ActQKV's sizes are not in the abstract: InfLLM's
    (block 128, 4 representatives, 4K window, 128 sinks, 2K retrieved, 512-token chunks) are assumed.
    InfLLM's offload of far blocks to the CPU is not modelled."""

    name = "actqkv"
    family = "D"
    paper = "Activation-aware Probe-Query: Effective Key-Value Retrieval for Long-Context LLMs Inference"
    slots = ("decode selection", "prefill sparsity")
    budget_param = "retrieved"
    retrieved: int = param(2048, "tokens retrieved per query, mean over layers (assumed, InfLLM's 16 x 128)",
                           "tokens")
    window: int = param(4096, "local window every query attends (assumed, InfLLM's)", "tokens")
    sinks: int = param(128, "initial tokens every query attends (assumed, InfLLM's)", "tokens")
    block: int = param(128, "tokens per memory block (assumed, InfLLM's)", "tokens")
    reps: int = param(4, "representative keys per block (assumed, InfLLM's)")
    chunk: int = param(512, "prefill tokens that share one probe query (assumed, InfLLM's)", "tokens")

    def check_params(self) -> None:
        for key in ("retrieved", "window", "block", "reps", "chunk"):
            self.require(getattr(self, key) >= 1, key, "a positive integer")
        self.require(self.sinks >= 0, "sinks", "a non-negative integer")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    def attended(self) -> int:
        return self.sinks + self.window + self.retrieved

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.attended())

    def pair_fraction(self, q: int, c: int) -> float:
        if q <= DECODE_MAX_QUERIES:
            return 1.0
        return min(1.0, window_pairs(q, c, self.attended()) / causal_pairs(q, c))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        h, kvh, d = heads(ctx), kv_heads(ctx), key_dim(ctx)
        summaries = probes = queries = 0.0
        for q, c, n in ctx.batch.groups:
            probing = 1 if q <= DECODE_MAX_QUERIES else math.ceil(q / self.chunk)
            far = max(0.0, c + q / 2 - self.window - self.sinks)      # tokens past the window, at the mean position
            blocks = far / self.block
            summaries += n * probing * blocks * self.reps * kvh * d
            probes += n * probing * blocks * h
            queries += n * q if q > DECODE_MAX_QUERIES else 0
        ops = []
        if summaries:
            ops.append(score_op("actqkv_block_scores", ctx, summaries, ctx.prec.kv_bytes, probes, ctx.kv_layers,
                                2.0 * h / kvh, note=f"{self.reps} representatives per {self.block}-token block"))
        if queries:
            ops.append(streaming("actqkv_activation_bias", OpClass.ELEMENTWISE, queries * h * d, 1, 0, 3.0,
                                 ctx.prec.act_bytes, ctx.prec.activation, ctx.kv_layers))
        return ops
