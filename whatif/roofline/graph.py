"""ModelSpec + how it runs -> the operator graph of one forward pass on one GPU.

One builder serves prefill, chunked prefill and decode: a pass is a set of sequence groups
(new tokens, cached tokens); only the attention kernel and the LM-head rows depend on which.
"""
from __future__ import annotations

from dataclasses import replace

from ..specs.dtypes import gemm_compute_dtype
from ..errors import WhatifError
from ..specs.models import ModelSpec
from .attention import DECODE_MAX_QUERIES, attention_op
from .comm import comm_op
from .dequant import with_weight_dequant
from .config import ForwardBatch, Parallelism, Precision
from .moe import moe_ops
from .ops import Op, gemm, streaming
from .techniques.base import HostPath, KVFormat, PassContext
from .techniques.compose import NONE, TechniqueSet

NORM_FLOPS = 4.0     # square, sum, scale, weight multiply per element
ACT_FLOPS = 8.0      # SiLU/GELU + gate multiply per element (order of magnitude; they are memory bound)


def check_parallelism(model: ModelSpec, par: Parallelism) -> None:
    """TP must split heads evenly; PP cannot exceed the layers; EP must split the experts."""
    if model.num_heads % par.tp:
        valid = [t for t in range(1, model.num_heads + 1) if model.num_heads % t == 0 and t <= 64]
        raise WhatifError(f"--tp: {par.tp} does not divide the {model.num_heads} attention heads of "
                          f"{model.name}; valid: {', '.join(map(str, valid))}")
    if model.mla is None and par.tp > model.num_kv_heads and par.tp % model.num_kv_heads:
        raise WhatifError(f"--tp: {par.tp} neither divides nor is a multiple of the {model.num_kv_heads} "
                          f"KV heads of {model.name}")
    if model.intermediate_size % par.tp:
        raise WhatifError(f"--tp: {par.tp} does not divide intermediate_size {model.intermediate_size}")
    if par.pp > model.num_layers:
        raise WhatifError(f"--pp: {par.pp} is more than the {model.num_layers} layers of {model.name}")
    if par.ep > 1:
        if model.moe is None:
            raise WhatifError(f"--ep: {model.name} has no experts; use --ep 1")
        if par.ep != par.tp:
            raise WhatifError(f"--ep: {par.ep}; experts are spread over the TP group, so valid: 1 or {par.tp}")
        if model.moe.num_experts % par.ep:
            raise WhatifError(f"--ep: {par.ep} does not divide the {model.moe.num_experts} experts")


def kv_heads_per_gpu(model: ModelSpec, tp: int) -> int:
    """KV heads stored per GPU: split by TP, replicated once TP exceeds the KV heads."""
    return max(1, model.num_kv_heads // tp)


def kv_width_per_gpu(model: ModelSpec, tp: int) -> float:
    """Cached elements per token per layer on one GPU (MLA's latent is replicated, not split)."""
    if model.mla is not None:
        return model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    return 2 * kv_heads_per_gpu(model, tp) * model.head_dim


def stage_layers(model: ModelSpec, pp: int, stage: int) -> range:
    """Layers of pipeline stage `stage` (the first stages take the remainder)."""
    base, extra = divmod(model.num_layers, pp)
    start = stage * base + min(stage, extra)
    return range(start, start + base + (1 if stage < extra else 0))


def base_kv_format(prec: Precision) -> KVFormat:
    return KVFormat(prec.kv_bytes, prec.kv_bytes)


def attended_groups(batch: ForwardBatch, techs: TechniqueSet) -> tuple:
    """Groups with the cached tokens each query attends: those kept (eviction) and, in decode,
    those read (sparse selection)."""
    if not techs:
        return batch.groups
    return tuple((q, techs.read(techs.stored(c)) if q <= DECODE_MAX_QUERIES else techs.stored(c), n)
                 for q, c, n in batch.groups)


def weight_gemm(name: str, m: float, n: float, k: float, prec: Precision, count: int) -> Op:
    """A GEMM against the model's weights (weight-only formats dequantize in the kernel: dequant.py)."""
    op = gemm(name, m, n, k, prec.act_bytes, prec.weight_bytes, gemm_compute_dtype(prec.weight, prec.activation),
              count)
    return with_weight_dequant(op, prec.weight, k * n, m)


def kv_cache_write(elements: float, stored_bytes: float, prec: Precision, count: int) -> Op:
    """Append new tokens' K/V to the cache: read in the activation dtype, stored as the cache keeps them."""
    op = streaming("kv_cache_write", "elementwise", elements, 0, 1, 0, stored_bytes, prec.kv, count,
                   extra_bytes=elements * prec.act_bytes)
    return replace(op, shape={**op.shape, "kv_write_bytes": elements * stored_bytes})


def attention_block(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision,
                    count: int, techs: TechniqueSet = NONE, kv: KVFormat | None = None) -> list[Op]:
    t, tokens = par.tp, batch.tokens
    a, d = prec.act_bytes, model.hidden_size
    kv = kv or base_kv_format(prec)
    width = kv_width_per_gpu(model, t)
    groups = attended_groups(batch, techs)
    cost = {"kv_read": (lambda n: kv.token_bytes(n, width)) if techs else None,
            "pair_fraction": techs.pair_fraction if techs else None}
    heads = model.num_heads // t
    ops: list[Op] = []
    if model.mla is None:
        kvh = kv_heads_per_gpu(model, t)
        ops.append(weight_gemm("qkv_proj", tokens, (heads + 2 * kvh) * model.head_dim, d, prec, count))
        if model.position == "rope":
            ops.append(streaming("rope", "rope", tokens * (heads + kvh) * model.head_dim, 1, 1, 6, a,
                                 prec.activation, count, extra_bytes=tokens * model.head_dim * 4))
        written = tokens * kv.width(2 * kvh * model.head_dim)
        ops.append(kv_cache_write(written, kv.full_bytes, prec, count))
        ops.append(attention_op(groups, heads, kvh, model.head_dim, model.head_dim, a,
                                prec.kv_bytes, width, count, prec.activation, **cost))
        ops.append(weight_gemm("o_proj", tokens, d, heads * model.head_dim, prec, count))
        return ops
    # Multi-head latent attention (DeepSeek): low-rank Q, KV compressed to a cached latent.
    gdt, w = gemm_compute_dtype(prec.weight, prec.activation), prec.weight_bytes
    m = model.mla
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    if m.q_lora_rank:
        ops.append(weight_gemm("q_a_proj", tokens, m.q_lora_rank, d, prec, count))
        ops.append(weight_gemm("q_b_proj", tokens, heads * qk, m.q_lora_rank, prec, count))
    else:
        ops.append(weight_gemm("q_proj", tokens, heads * qk, d, prec, count))
    ops.append(weight_gemm("kv_a_proj", tokens, m.kv_lora_rank + m.qk_rope_head_dim, d, prec, count))
    latent = m.kv_lora_rank + m.qk_rope_head_dim
    ops.append(kv_cache_write(tokens * latent, kv.full_bytes, prec, count))
    if batch.is_decode:
        # Weight absorption (FlashMLA): queries move into the latent space, attention reads the
        # latent cache as one shared KV head of width kv_lora+rope, outputs leave through W_UV.
        ops.append(gemm("q_absorb", tokens * heads, m.kv_lora_rank, m.qk_nope_head_dim, a, w, gdt, count))
        ops.append(attention_op(groups, heads, 1, latent, m.kv_lora_rank, a, prec.kv_bytes, latent,
                                count, prec.activation, "attention_mla", **cost))
        ops.append(gemm("v_absorb", tokens * heads, m.v_head_dim, m.kv_lora_rank, a, w, gdt, count))
    else:
        # Prefill expands the latent of every attended token into per-head K and V.
        ctx = sum(n * (c + q) for q, c, n in groups)
        ops.append(gemm("kv_b_proj", ctx, heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank,
                        a, w, gdt, count))
        ops.append(attention_op(groups, heads, heads, qk, m.v_head_dim, a, a, heads * (qk + m.v_head_dim),
                                count, prec.activation, "attention_mla", pair_fraction=cost["pair_fraction"]))
    ops.append(weight_gemm("o_proj", tokens, d, heads * m.v_head_dim, prec, count))
    return ops


def dense_mlp(model: ModelSpec, tokens: int, par: Parallelism, prec: Precision, count: int,
              intermediate: int | None = None, prefix: str = "mlp") -> list[Op]:
    i = (intermediate or model.intermediate_size) // par.tp
    a, d = prec.act_bytes, model.hidden_size
    gated = model.mlp == "gated"
    up_n = 2 * i if gated else i
    return [
        weight_gemm(f"{prefix}_gate_up" if gated else f"{prefix}_up", tokens, up_n, d, prec, count),
        streaming(f"{prefix}_act", "activation", tokens * i, 2 if gated else 1, 1, ACT_FLOPS, a,
                  prec.activation, count),
        weight_gemm(f"{prefix}_down", tokens, d, i, prec, count),
    ]


def layer_ops(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision,
              moe_layer: bool, count: int, techs: TechniqueSet = NONE, kv: KVFormat | None = None) -> list[Op]:
    tokens, d, a = batch.tokens, model.hidden_size, prec.act_bytes

    def norm(name: str) -> Op:
        return streaming(name, "norm", tokens * d, 1, 1, NORM_FLOPS, a, prec.activation, count, extra_bytes=d * a)

    def allreduce(name: str) -> Op:
        return comm_op(name, "all_reduce", tokens * d * a, par.tp, count)

    ops = [norm("input_norm")]
    ops += attention_block(model, batch, par, prec, count, techs, kv)
    if par.tp > 1 and not model.parallel_block:
        ops.append(allreduce("attn_allreduce"))
    if not model.parallel_block:
        ops.append(streaming("residual_add", "elementwise", tokens * d, 2, 1, 1, a, prec.activation, count))
        ops.append(norm("post_attn_norm"))
    if moe_layer:
        ops += moe_ops(model, tokens, par, prec, count)
    else:
        ops += dense_mlp(model, tokens, par, prec, count)
    if par.tp > 1:
        ops.append(allreduce("mlp_allreduce"))
    ops.append(streaming("residual_add_2", "elementwise", tokens * d, 2, 1, 1, a, prec.activation, count))
    return ops


def forward_ops(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision,
                stage: int = 0, techs: TechniqueSet = NONE, shared_prefix: int = 0,
                host: HostPath | None = None, sm_count: int = 0) -> list[Op]:
    """All kernels of one forward pass of pipeline stage `stage` on one GPU, in execution order.

    `model` and `prec` are the ones the techniques produced; `techs` shape the KV cache and add or
    rewrite ops (see techniques/base.py)."""
    layers = stage_layers(model, par.pp, stage)
    kv = techs.kv(base_kv_format(prec))
    first, last = stage == 0, stage == par.pp - 1
    d, a, t = model.hidden_size, prec.act_bytes, par.tp
    tokens, rows = batch.tokens, batch.logit_rows
    ops: list[Op] = []
    if first:
        # Vocab-parallel embedding: each GPU gathers its rows; an all-reduce combines them.
        ops.append(streaming("embedding", "embedding", tokens * d, 1, 1, 0, a, prec.activation,
                             extra_bytes=tokens * 8))
        if t > 1:
            ops.append(comm_op("embedding_allreduce", "all_reduce", tokens * d * a, t, 1))
        if model.position == "learned":   # OPT-style: gather position rows and add them
            ops.append(streaming("position_embedding", "elementwise", tokens * d, 2, 1, 1, a, prec.activation))
    elif par.pp > 1:
        ops.append(comm_op("pp_recv", "send_recv", tokens * d * a, 2, 1))
    dense = sum(1 for i in layers if not model.is_moe_layer(i))
    moe = len(layers) - dense
    if dense:
        ops += layer_ops(model, batch, par, prec, False, dense, techs, kv)
    if moe:
        ops += layer_ops(model, batch, par, prec, True, moe, techs, kv)
    if last:
        # Only the last position of each sequence needs logits (as vLLM computes them), except in a
        # verify pass, which checks every drafted position.
        ops.append(streaming("final_norm", "norm", rows * d, 1, 1, NORM_FLOPS, a, prec.activation,
                             extra_bytes=d * a))
        vocab = -(-model.vocab_size // t)
        ops.append(gemm("lm_head", rows, vocab, d, a, prec.embedding_bytes, prec.lm_head_dtype, out_bytes=4.0))
        if t > 1:
            ops.append(comm_op("logits_gather", "all_gather", rows * vocab * t * 4.0, t, 1))
        ops.append(streaming("sampling", "sampling", rows * model.vocab_size, 2, 0, 5, 4.0, "fp32"))
    else:
        ops.append(comm_op("pp_send", "send_recv", tokens * d * a, 2, 1))
    if techs:
        ctx = PassContext(model, batch, par, prec, kv, kv_width_per_gpu(model, t), len(layers), shared_prefix, host,
                          sm_count)
        ops = techs.ops(ops, ctx)
    return ops
