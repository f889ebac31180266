"""Family E: the model's layers as an encoder-decoder graph ("Return of the Encoder", Encoder-Decoder Gemma).
An encoder stack reads the prompt once with bidirectional attention; a decoder stack generates, each
layer attending to its own generated tokens and, by cross-attention, to the encoder's output, whose
K/V each decoder layer projects once per request and caches."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..attention import causal_pairs
from ..config import ForwardBatch, Parallelism, Precision
from ..context import PassContext, PrefillUnit
from ..mlp import weight_gemm
from ...specs.op_kinds import LOGIT_ROLES, OpRole
from ..ops import Op
from .base import Technique, param, register
from .compose import TechniqueSet


class _Bidirectional(Technique):
    """Every query of the pass attends to every key (an encoder), not only the earlier ones."""

    name = "bidirectional"

    def pair_fraction(self, q: int, c: int) -> float:
        return q * (q + c) / causal_pairs(q, c)


def cross_attention_weights(model: ModelSpec) -> float:
    """A decoder layer's cross-attention: Q, K, V and O projections (K/V applied to the encoder output) and its
    norm, shaped as the layer's self-attention."""
    return model.attention_params() + model.norm_params()


@register
@dataclass(frozen=True)
class EncoderDecoder(Technique):
    """The model run as an encoder-decoder: `encoder_layers` layers (bidirectional self-attention) encode the
    prompt once, and `decoder_layers` layers generate (self-attention, cross-attention to the encoder's output,
    MLP), each of the model's own shape. 0 for both splits the model's layers in two halves (about parameter
    matched, as "Return of the Encoder" compares); Encoder-Decoder Gemma's 2B-2B keeps every layer on both sides
    (both set to the model's layers). Prefill: the encoder's layers over the prompt with every token attending
    to every token (twice the causal pairs), each decoder layer's cross K/V projected from the encoder output
    and cached, then one decoder step. Decode: only the decoder layers run, each reading its cross K/V of the
    prompt and the self K/V of the generated tokens (the bytes of one attention over prompt + generated tokens),
    with the cross-attention's Q and O projections beside the self-attention's. The cache holds decoder layers
    only. Weights: both stacks plus each decoder layer's cross-attention. The encoder runs once per request (no
    chunked prefill, no shared prefix: bidirectional encoding depends on the whole prompt)."""

    name = "encoder_decoder"
    family = "E"
    paper = "Return of the Encoder: Maximizing Parameter Efficiency for SLMs"
    slots = ("layer graph", "prompt positions")
    evicts = True            # the encoder reads the whole prompt: no prefix can be encoded once for many
    encoder_layers: int = param(0, "layers of the encoder stack; 0: as many as the decoder's", "layers")
    decoder_layers: int = param(0, "layers of the decoder stack; 0: half the model's layers, rounded down "
                                   "(assumed split)", "layers")
    prompt: int = param(0, "prompt tokens the encoder reads; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(self.encoder_layers >= 0, "encoder_layers", "an integer >= 0 (0: as many as the decoder's)")
        self.require(self.decoder_layers >= 0, "decoder_layers", "an integer >= 0 (0: half the model's layers)")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def for_workload(self, workload) -> EncoderDecoder:
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def stacks(self, model: ModelSpec) -> tuple[int, int]:
        """(encoder layers, decoder layers) for `model` as given (before this technique's transform)."""
        dec = self.decoder_layers or model.num_layers // 2
        return self.encoder_layers or dec, dec

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if model.moe is not None or model.mla is not None:
            raise WhatifError(f"--technique {self.name}: modelled for dense MHA/GQA layers; {model.name} has "
                              f"{'MoE' if model.moe else 'MLA'}; valid: a dense model")
        if self.stacks(model)[1] < 1:
            raise WhatifError(f"--technique {self.name}: {model.name} has {model.num_layers} layer, too few to "
                              f"split; valid: decoder_layers=1 or more")

    def transform_model(self, model: ModelSpec) -> ModelSpec:
        # the graph the roofline runs per pass is the decoder stack; the encoder is added to the prefill
        enc, dec = self.stacks(model)
        return replace(model, num_layers=dec, name=f"{model.name} (decoder {dec} of {enc}+{dec} layers)")

    def extra_weight_bytes(self, model: ModelSpec, par: Parallelism, prec: Precision) -> float:
        enc = self.encoder_layers or model.num_layers    # `model` as run is the decoder stack
        encoder = enc * model.layer_params(0)
        cross = model.num_layers * cross_attention_weights(model)
        return (encoder + cross) * prec.weight_bytes / (par.tp * par.pp)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        # the decoder's first step: one token attending to the prompt's cross K/V (cached by the encoder pass)
        return [(1, new + cached - 1, n) for new, cached, n in units]

    def _is_prefill(self, ctx: PassContext) -> bool:
        return all(q == 1 and c == self.prompt - 1 for q, c, _ in ctx.batch.groups)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if ctx.par.pp > 1:
            raise WhatifError(f"--technique {self.name}: modelled for one pipeline stage; use --pp 1")
        m, tokens = ctx.model, ctx.batch.tokens
        heads = max(1, m.num_heads // ctx.par.tp)
        ops = [weight_gemm("cross_q_proj", tokens, heads * m.head_dim, m.hidden_size, ctx.prec, m.num_layers),
               weight_gemm("cross_o_proj", tokens, m.hidden_size, heads * m.head_dim, ctx.prec, m.num_layers)]
        if self._is_prefill(ctx):
            ops = self.encoder_ops(ctx) + ops
        return ops

    def encoder_ops(self, ctx: PassContext) -> list[Op]:
        """The encoder stack over each request's prompt, then each decoder layer's cross K/V projection."""
        from ..graph import forward_ops     # graph imports the technique modules: import when used
        m = ctx.model
        enc = self.encoder_layers or m.num_layers
        requests = sum(n for _, _, n in ctx.batch.groups)
        encoder = replace(m, num_layers=enc, name=f"{m.name} encoder")
        passes = forward_ops(encoder, ForwardBatch(((self.prompt, 0, requests),)), ctx.par, ctx.prec,
                             techs=TechniqueSet((_Bidirectional(),)), sm_count=ctx.sm_count)
        # an encoder caches nothing and computes no logits
        kept = [replace(op, name=f"encoder_{op.name}", role=None, part_of=None) for op in passes
                if op.role not in LOGIT_ROLES and op.role != OpRole.KV_WRITE]
        kv = max(1, m.num_kv_heads // ctx.par.tp) * m.head_dim
        return kept + [weight_gemm("cross_kv_proj", requests * self.prompt, 2 * kv, m.hidden_size, ctx.prec,
                                   m.num_layers)]
