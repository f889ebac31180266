"""Family E: retrieved passages handed to the reader as shorter text written by a compressor model
(CoLoR): the reader prefills and caches fewer tokens, at the cost of the compressor's generation pass
unless the passages were compressed offline with the corpus."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...specs.models import ModelSpec
from ..config import ForwardBatch, Parallelism, Precision
from ..context import PassContext
from ..ops import Op
from .base import Technique, param, register
from .kit import PromptPositions, stepping

# CoLoR's compressor: Phi-3-mini-4k-instruct fine-tuned with ORPO (github.com/going-doer/CoLoR,
# codes/8_train_orpo.sh: --model_name_or_path=microsoft/Phi-3-mini-4k-instruct); shapes from
# huggingface.co/microsoft/Phi-3-mini-4k-instruct config.json
COMPRESSOR = ModelSpec(name="phi-3-mini-4k-instruct", family="phi3", hidden_size=3072, num_layers=32, num_heads=32,
                       num_kv_heads=32, head_dim=96, intermediate_size=8192, vocab_size=32064,
                       max_position_embeddings=4096, mlp="gated", norm="rmsnorm", position="rope",
                       source="https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json")


@register
@dataclass(frozen=True)
class CoLoR(PromptPositions, Technique):
    """CoLoR (Compression model for Long context Retrieval): every retrieved passage, the `context` share of
    the prompt, is rewritten by a compressor LM (Phi-3-mini, 3.8B) into a summary `ratio` times shorter, and
    the reader sees the summaries, so it prefills and caches context / ratio + question positions. The
    compression ignores the query (the authors' pipeline rewrites the corpus file once, codes/9_color_summarize.py),
    so by default it is `precomputed` with the corpus and costs nothing per request. Otherwise each request
    pays the compressor's generation: a prefill over every passage (passages of `passage` tokens, batched
    side by side) and passage / ratio decode steps of the whole batch of passages, priced by the same
    roofline on the compressor's own graph on one GPU, before the reader's first chunk. Not counted then: the
    compressor's weights (7.6 GB at 16 bits) and its transient cache in the memory plan, and its prompt
    template (~10 tokens per passage). `ratio` is a property of the compressor's outputs (the paper
    measures 1.91 on average over 9 datasets), an input here, never a prediction."""

    name = "color"
    family = "E"
    paper = "Efficient Long Context Language Model Retrieval with Compression"
    slots = ("prompt positions",)
    evicts = True            # per-request positions differ from the prompt's tokens
    ratio: float = param(1.91, "passage tokens per compressed token (the paper's average over 9 datasets, "
                               "measured)")
    context: float = param(1.0, "share of the prompt that is retrieved passages (the rest, the query, stays "
                                "as is; assumed: all of it)")
    passage: int = param(128, "tokens per passage the compressor rewrites at once (assumed)", "tokens")
    precomputed: bool = param(True, "passages compressed offline with the corpus (the paper's pipeline): no "
                                    "compressor pass per request")
    prompt: int = param(0, "prompt tokens the compression applies to; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(self.ratio >= 1, "ratio", "a number >= 1 (passage tokens per compressed token)")
        self.require(0 <= self.context <= 1, "context", "a share from 0 to 1")
        self.require(self.passage >= 1, "passage", "an integer >= 1")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def for_workload(self, workload) -> CoLoR:
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def positions(self, tokens: float) -> float:
        """Reader positions for `tokens` prompt tokens."""
        ctx = self.context * tokens
        return ctx / self.ratio + (tokens - ctx)

    def compressor_ops(self, requests: int, prec: Precision, sm_count: int = 0) -> list[Op]:
        """The compressor's generation for `requests` prompts: prefill of every passage, then the decode steps
        of all passages side by side (each step's ops priced at the mean cached length)."""
        from ..graph import forward_ops     # graph imports the technique modules: import when used
        ctx_tokens = self.context * self.prompt
        passages = max(1, math.ceil(ctx_tokens / self.passage)) * requests
        length = min(self.passage, ctx_tokens) if ctx_tokens else 0
        if not length:
            return []
        steps = max(1, math.ceil(length / self.ratio))
        one_gpu = Parallelism()
        prefill = forward_ops(COMPRESSOR, ForwardBatch(((round(length), 0, passages),)), one_gpu, prec,
                              sm_count=sm_count)
        step = forward_ops(COMPRESSOR, ForwardBatch.decode(passages, round(length + steps / 2)), one_gpu, prec,
                           sm_count=sm_count)
        # no graph roles: the reader's techniques find ops by role and must not rewrite the compressor's
        return ([replace(op, name=f"color_compress_prefill_{op.name}", role=None, part_of=None) for op in prefill]
                + [replace(op, name=f"color_compress_decode_{op.name}", count=op.count * steps, role=None,
                           part_of=None) for op in step])

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if self.precomputed or stepping(ctx) or ctx.stage or not self.prompt:
            return []
        # the compressor runs before a request's first chunk: charge it to the pass holding that chunk
        starting = sum(n for q, c, n in ctx.batch.groups if c == 0 and q > 1)
        return self.compressor_ops(starting, ctx.prec, ctx.sm_count) if starting else []
