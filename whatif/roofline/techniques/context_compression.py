"""Family E: a retrieved context handed to the decoder in compressed form (REFRAG's chunk embeddings): the
decoder prefills and caches fewer positions than the context has tokens, at the cost of an encoder pass."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..context import PassContext
from ..mlp import weight_gemm
from ..ops import Op
from .base import Technique, param, register
from .kit import PromptPositions, stepping

# RoBERTa-large, REFRAG's chunk encoder (huggingface.co/FacebookAI/roberta-large config.json)
ENCODER_WIDTH = 1024
ENCODER_LAYERS = 24
ENCODER_FFN = 4096


@register
@dataclass(frozen=True)
class REFRAG(PromptPositions, Technique):
    """REFRAG (compress, sense, expand): the retrieved context, the `context` share of each prompt, is
    cut into chunks of `chunk` tokens; an encoder (RoBERTa-large) turns each chunk into one embedding
    projected to the decoder's width, and the decoder prefills one position per chunk, except the
    `expand` share of chunks that its policy expands back to tokens. The question (the rest of the
    prompt) and the generated tokens are ordinary positions. So prefill computes and the cache keeps
    context x ((1 - expand) / chunk + expand) + question positions for the prompt, and attention over
    them shrinks quadratically. Cost: the encoder's pass over every context token (24 layers of
    4 d^2 + 2 d x 4d weights, d = 1024, at the decoder's dtype), unless `precomputed` (chunk
    embeddings stored with the corpus, as the paper allows). Not expressed: the policy network's cost
    and the projection layer (one GEMM per chunk, small)."""

    name = "refrag"
    family = "E"
    paper = "REFRAG: Rethinking RAG based Decoding"
    slots = ("prompt positions",)
    evicts = True            # positions differ from tokens, so a shared prefix could not be stored once
    budget_param = "expand"
    chunk: int = param(16, "context tokens per chunk embedding (the paper's main setting, REFRAG16)", "tokens")
    expand: float = param(0.0, "share of chunks the policy expands back to tokens (0: none)")
    context: float = param(1.0, "share of the prompt that is retrieved context (the rest, the question, stays "
                                "tokens; assumed: all of it)")
    precomputed: bool = param(False, "chunk embeddings precomputed with the corpus: no encoder pass per request")
    prompt: int = param(0, "prompt tokens the compression applies to; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(self.chunk >= 1, "chunk", "an integer >= 1")
        self.require(0 <= self.expand <= 1, "expand", "a share from 0 to 1")
        self.require(0 <= self.context <= 1, "context", "a share from 0 to 1")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def for_workload(self, workload) -> REFRAG:
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def positions(self, tokens: float) -> float:
        """Decoder positions for `tokens` prompt tokens."""
        ctx = self.context * tokens
        chunks = math.ceil(ctx / self.chunk) if ctx else 0.0
        return chunks * (1 - self.expand) + ctx * self.expand + (tokens - ctx)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if self.precomputed or stepping(ctx):
            return []
        # the positions this pass computes stand for this many context tokens, which the encoder reads
        per_position = self.prompt / self.positions(self.prompt) if self.prompt else 1.0
        tokens = ctx.batch.tokens * per_position * self.context
        d, f = ENCODER_WIDTH, ENCODER_FFN
        return [weight_gemm("refrag_encoder_attention", tokens, 4 * d, d, ctx.prec, ENCODER_LAYERS),
                weight_gemm("refrag_encoder_ffn", tokens, 2 * f, d, ctx.prec, ENCODER_LAYERS)]
