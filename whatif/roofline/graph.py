"""ModelSpec + how it runs -> the operator graph of one forward pass on one GPU.

One builder serves prefill, chunked prefill and decode: a pass is a set of sequence groups
(new tokens, cached tokens); only the attention kernel and the LM-head rows depend on which.
"""
from __future__ import annotations

from dataclasses import replace

from ..specs.dtypes import BYTES, gemm_compute_dtype
from ..errors import WhatifError
from ..specs.model_layers import LayerSpec
from ..specs.models import ModelSpec
from .attention import DECODE_MAX_QUERIES, attention_op
from .attention_window import chunk_groups, chunk_share, combined, window_groups, window_share
from .comm import comm_op
from .config import ForwardBatch, Parallelism, Precision
from .dequant import block_scale_ops, module_precisions
from .context import (HostPath, KVFormat, PassContext, base_kv_format, kv_heads_per_gpu, kv_width_per_gpu,
                      layer_groups, pass_context, stage_layers)
from .mlp import dense_mlp, weight_gemm
from .ops import Op, OpClass, OpRole, gemm, streaming
from .techniques.compose import NONE, TechniqueSet

NORM_FLOPS = 4.0     # square, sum, scale, weight multiply per element
ROPE_FLOPS = 6.0     # rotate-half, two multiplies by cos/sin, add per element
ADD_FLOPS = 1.0      # one add per element (residual, position embedding)
SAMPLING_FLOPS = 5.0  # softmax (max, subtract, exp, sum, scale) per logit
FULL_LAYER = LayerSpec()   # full attention + dense feed-forward


def check_expert_precision(model: ModelSpec, prec) -> None:
    """An experts-only scheme on a model without routed experts would change nothing: refused, not ignored."""
    if prec.expert_quantization and prec.expert_quantization != "none" and model.moe is None:
        raise WhatifError(f"--expert-quantization / --quantize-experts-only: {model.name} has no routed experts "
                          f"(a dense model); valid: --quantization {prec.expert_quantization} on every layer, "
                          f"or a MoE model")


def _splits_kv_heads(tp: int, kv_heads: int) -> bool:
    """vLLM QKVParallelLinear (vllm/model_executor/layers/linear.py): fewer GPUs than KV heads split them
    (divide(total_num_kv_heads, tp_size) asserts), more replicate them (divide(tp_size, total_num_kv_heads))."""
    return kv_heads % tp == 0 if tp <= kv_heads else tp % kv_heads == 0


def _divisors(n: int, most: int = 64) -> str:
    """The sizes up to `most` that split `n` evenly, for an error's 'valid:' list."""
    return ", ".join(str(d) for d in range(1, min(n, most) + 1) if n % d == 0)


def check_parallelism(model: ModelSpec, par: Parallelism) -> None:
    """TP must split heads evenly; PP cannot exceed the layers; EP x MoE-TP must split the experts; DP attention
    needs experts (the heads, KV heads and dense columns are split over one rank's attention_tp GPUs only)."""
    if par.dp_attention and model.moe is None:
        raise WhatifError(f"--dp-attention: {model.name} has no experts; valid only for MoE models")
    if par.dp_attention and par.tp == 1:
        raise WhatifError("--dp-attention: needs a TP group of more than one GPU; valid: --tp N (N > 1), ranks "
                          "dividing N")
    if par.ep > 1 and model.moe is None:
        raise WhatifError(f"--ep: {model.name} has no experts; use --ep 1")
    if par.moe_tp == 0:   # ep does not divide tp (moe_tp is left unset until --gpus fills tp in)
        valid = ", ".join(str(d) for d in range(1, par.tp + 1) if par.tp % d == 0 and d <= 64)
        raise WhatifError(f"--ep: {par.ep} does not divide --tp {par.tp}; valid: {valid} (ep x moe-tp = tp)")
    if (par.redundant_experts or par.expert_skew) and (model.moe is None or par.ep == 1):
        flag = "--redundant-experts" if par.redundant_experts else "--expert-skew"
        raise WhatifError(f"{flag}: only an expert-parallel layout has it; valid: a MoE model with --ep above 1")
    slots = model.moe.num_experts + par.redundant_experts if model.moe is not None else 0
    if model.moe is not None and slots % par.ep:
        more = f" + {par.redundant_experts} redundant" if par.redundant_experts else ""
        valid = f"; or --redundant-experts R making {model.moe.num_experts} + R a multiple of {par.ep}"
        raise WhatifError(f"--ep: {par.ep} does not divide the {model.moe.num_experts}{more} experts of "
                          f"{model.name}{valid if par.ep > 1 else ''}")
    if model.moe is not None and par.moe_tp > 1 and model.moe.expert_intermediate_size % par.moe_tp:
        flag = "--moe-tp" if par.ep > 1 else "--tp"   # with no --ep, each expert is split over the whole --tp
        raise WhatifError(f"{flag}: {par.moe_tp} does not divide the expert intermediate size "
                          f"{model.moe.expert_intermediate_size} of {model.name}; valid: "
                          f"{_divisors(model.moe.expert_intermediate_size)}")
    flag = f"--tp {par.tp} / --dp-attention {par.attention_dp}: attention TP" if par.dp_attention else "--tp:"
    par = par.dense   # under DP attention only one rank's attention_tp GPUs split heads and dense columns
    if model.num_heads % par.tp:
        raise WhatifError(f"{flag} {par.tp} does not divide the {model.num_heads} attention heads of "
                          f"{model.name}; valid: {_divisors(model.num_heads)}")
    for kvh, which in ((model.num_kv_heads, ""), (model.global_kv_heads, "full-attention layers' ")):
        if model.mla is None and kvh and not _splits_kv_heads(par.tp, kvh):
            valid = ", ".join(str(t) for t in range(1, 65) if _splits_kv_heads(t, kvh))
            raise WhatifError(f"{flag} {par.tp} neither divides nor is a multiple of the "
                              f"{kvh} {which}KV heads of {model.name}; valid: {valid}")
    if model.intermediate_size % par.tp:
        raise WhatifError(f"{flag} {par.tp} does not divide intermediate_size {model.intermediate_size}; valid: "
                          f"{_divisors(model.intermediate_size)}")
    for what, heads in _recurrent_heads(model):
        if heads % par.tp:
            raise WhatifError(f"{flag} {par.tp} does not divide the {heads} {what} of {model.name}; valid: "
                              f"{_divisors(heads)}")
    if par.pp > model.num_layers:
        raise WhatifError(f"--pp: {par.pp} is more than the {model.num_layers} layers of {model.name}")


def _recurrent_heads(model: ModelSpec) -> list[tuple[str, int]]:
    out = []
    if model.linear_attention is not None:
        out += [("linear-attention key heads", model.linear_attention.key_heads),
                ("linear-attention value heads", model.linear_attention.value_heads)]
    if model.mamba is not None:
        out.append(("Mamba-2 heads", model.mamba.heads))
    return out


def layer_window(model: ModelSpec, spec: LayerSpec, groups: tuple, pair_fraction):
    """(groups, pair_fraction) of a layer whose attention sees a window: sliding, chunked, or DSA's top-k."""
    if spec.mixer == "sliding":
        return window_groups(groups, model.sliding_window), combined(pair_fraction, window_share(model.sliding_window))
    if spec.mixer == "chunked":
        chunk = model.attention_chunk_size
        return chunk_groups(groups, chunk), combined(pair_fraction, chunk_share(chunk))
    if model.indexer is not None:
        k = model.indexer.top_k
        return window_groups(groups, k), combined(pair_fraction, window_share(k))
    return groups, pair_fraction


def attended_groups(batch: ForwardBatch, techs: TechniqueSet) -> tuple:
    """Groups with the cached tokens each query attends: those kept (eviction) and, in decode,
    those read (sparse selection)."""
    if not techs:
        return batch.groups
    return tuple((q, techs.read(techs.stored(c)) if q <= DECODE_MAX_QUERIES else techs.stored(c), n)
                 for q, c, n in batch.groups)


def gathered_pass(batch: ForwardBatch, techs: TechniqueSet) -> bool:
    """Whether this pass's attention reads tokens a technique gathered by index (TechniqueSet.gathers): a decode
    reading fewer tokens than it keeps, or a prefill computing fewer than its causal pairs."""
    if not techs:
        return False
    return any(techs.gathers(q, c) and (techs.read(techs.stored(c)) < techs.stored(c) if q <= DECODE_MAX_QUERIES
                                        else techs.pair_fraction(q, c) < 1.0) for q, c, _ in batch.groups)


def kv_cache_write(elements: float, stored_bytes: float, prec: Precision, count: int) -> Op:
    """Append new tokens' K/V to the cache: read in the activation dtype, stored as the cache keeps them."""
    op = streaming("kv_cache_write", OpClass.ELEMENTWISE, elements, reads=0, writes=1, flops_per_element=0,
                   elem_bytes=stored_bytes, dtype=prec.kv, count=count, extra_bytes=elements * prec.act_bytes,
                   role=OpRole.KV_WRITE)
    return replace(op, shape=replace(op.shape, kv_write_bytes=elements * stored_bytes))


def qk_layer_norm(tokens: float, width: float, tp: int, a: float, prec: Precision, count: int) -> list[Op]:
    """RMSNorm over the whole q and k projections of a token: one kernel over this GPU's q and k columns, and
    under attention TP an all-reduce of the two fp32 sums of squares per token (the norm spans every rank)."""
    ops = [streaming("qk_norm", OpClass.NORM, tokens * width, reads=1, writes=1, flops_per_element=NORM_FLOPS,
                     elem_bytes=a, dtype=prec.activation, count=count, role=OpRole.QK_NORM)]
    if tp > 1:
        ops.append(comm_op("qk_norm_allreduce", "all_reduce", tokens * 2 * 4.0, tp, count, OpRole.QK_NORM_ALLREDUCE))
    return ops


def qk_head_norm(tokens: float, heads: int, kv_heads: int, head_dim: int, a: float, prec: Precision,
                 count: int) -> Op:
    """Qwen3's per-head q/k RMSNorm before RoPE, one kernel over this GPU's q and k heads (read, written back): as
    the engines run it, TensorRT-LLM's torch.ops.trtllm.fused_qk_norm_rope (QKNormRoPEAttention, fuse_qk_norm_rope
    default True: RoPE in the same kernel, the attention op built without it), SGLang qwen3.py / qwen3_next.py
    `_apply_qk_norm` (q_norm, with k_norm on the alt stream under graph capture: overlapped, priced as one), vLLM
    Qwen3Attention under Inductor (generated kernels); no fit times it (the attention collectors start from q/k/v)."""
    return streaming("qk_head_norm", OpClass.NORM, tokens * (heads + kv_heads) * head_dim, reads=1, writes=1,
                     flops_per_element=NORM_FLOPS, elem_bytes=a, dtype=prec.activation, count=count,
                     extra_bytes=2 * head_dim * a, role=OpRole.QK_HEAD_NORM)


def per_head(op: Op, heads: int) -> Op:
    """An absorbed-MLA GEMM as the bmm it is: `heads` problems of m / heads rows, each with its own weights
    (the shape records them; its bytes stay the graph's until an engine prices it as a bmm: engine_kernels.py)."""
    return replace(op, shape=replace(op.shape, bmm_heads=float(heads)))


def attention_block(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision,
                    count: int, techs: TechniqueSet = NONE, kv: KVFormat | None = None,
                    spec: LayerSpec = FULL_LAYER) -> list[Op]:
    t, tokens = par.attention_tp, batch.tokens
    if model.mla is None:   # a full-attention layer's own head shape (Gemma 4's global layers), else the model's
        model = model.attention_view(spec.mixer)
    adt = prec.attention_dtype   # fp4 activations: attention still runs fp8 or 16-bit
    a, d = BYTES[adt], model.hidden_size
    kv = kv or base_kv_format(prec)
    width = kv_width_per_gpu(model, t)
    groups, fraction = layer_window(model, spec, attended_groups(batch, techs), techs.pair_fraction if techs else None)
    cost = {"kv_read": (lambda n: kv.token_bytes(n, width)) if techs else None, "pair_fraction": fraction,
            "gathered": gathered_pass(batch, techs)}
    heads = model.num_heads // t
    proj, out = prec.module("attention"), prec.module("attention_out")   # their weight GEMMs' own precisions
    ops: list[Op] = []
    if model.mla is None:
        kvh = kv_heads_per_gpu(model, t)
        gate = heads * model.head_dim if model.attention_output_gate else 0   # q_proj also emits the gate
        ops.append(weight_gemm("qkv_proj", tokens, (heads + 2 * kvh) * model.head_dim + gate, d, proj, count,
                                       OpRole.QKV_PROJ))
        if model.qk_layer_norm:
            ops += qk_layer_norm(tokens, (heads + kvh) * model.head_dim, t, a, prec, count)
        elif model.qk_head_norm:
            ops.append(qk_head_norm(tokens, heads, kvh, model.head_dim, a, prec, count))
        if model.position == "rope" and spec.rope:
            ops.append(streaming("rope", OpClass.ROPE, tokens * (heads + kvh) * model.head_dim, reads=1, writes=1,
                                 flops_per_element=ROPE_FLOPS, elem_bytes=a, dtype=prec.activation, count=count,
                                 extra_bytes=tokens * model.head_dim * 4, role=OpRole.ROPE))
        written = tokens * kv.width(2 * kvh * model.head_dim)
        ops.append(kv_cache_write(written, kv.full_bytes, prec, count))
        ops.append(attention_op(groups, heads=heads, kv_heads=kvh, d_qk=model.head_dim, d_v=model.head_dim,
                                act_bytes=a, kv_bytes=prec.kv_bytes, kv_width=width, count=count,
                                dtype=adt, role=OpRole.ATTENTION, **cost,
                                name="attention" if spec.mixer == "full" else f"attention_{spec.mixer}"))
        if gate:   # sigmoid(gate) * output, elementwise
            ops.append(streaming("attn_gate", OpClass.ACTIVATION, tokens * gate, reads=2, writes=1,
                                 flops_per_element=5.0, elem_bytes=a, dtype=prec.activation, count=count,
                                 role=OpRole.ATTN_GATE))
        ops.append(weight_gemm("o_proj", tokens, d, heads * model.head_dim, out, count, OpRole.O_PROJ))
        return ops
    # Multi-head latent attention (DeepSeek): low-rank Q, KV compressed to a cached latent.
    gdt, w, pa = gemm_compute_dtype(proj.weight, proj.activation), proj.weight_bytes, proj.act_bytes
    m = model.mla
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    if m.q_lora_rank:
        ops.append(weight_gemm("q_a_proj", tokens, m.q_lora_rank, d, proj, count, OpRole.Q_PROJ))
        ops.append(weight_gemm("q_b_proj", tokens, heads * qk, m.q_lora_rank, proj, count, OpRole.Q_PROJ))
    else:
        ops.append(weight_gemm("q_proj", tokens, heads * qk, d, proj, count, OpRole.Q_PROJ))
    ops.append(weight_gemm("kv_a_proj", tokens, m.kv_lora_rank + m.qk_rope_head_dim, d, proj, count,
                           OpRole.KV_A_PROJ))
    latent = m.kv_lora_rank + m.qk_rope_head_dim
    ops.append(kv_cache_write(tokens * latent, kv.full_bytes, prec, count))
    if model.indexer is not None and spec.own_indexer:   # DSA: the indexer picks the top-k the absorbed MLA attends
        from .sparse_indexer import indexer_ops   # (a DSA model's alone: a dense model's cold start skips it)
        ops += indexer_ops(model, attended_groups(batch, techs), tokens, prec, count)
    # The engines' MLA backends (vLLM's MLACommon, SGLang, TensorRT-LLM) run a pass's decode rows absorbed and
    # its prompt rows expanded: a mixed pass is the two forms side by side, never the decodes' caches expanded.
    # DSA runs every row absorbed over its top-k tokens.
    all_absorbed = batch.is_decode or model.indexer is not None
    absorbed = groups if all_absorbed else tuple(g for g in groups if g[0] <= DECODE_MAX_QUERIES)
    expanded = () if all_absorbed else tuple(g for g in groups if g[0] > DECODE_MAX_QUERIES)
    if absorbed:
        # Weight absorption (FlashMLA): queries move into the latent space, attention reads the
        # latent cache as one shared KV head of width kv_lora+rope, outputs leave through W_UV.
        rows = sum(q * n for q, _, n in absorbed)
        ops.append(per_head(gemm("q_absorb", rows * heads, m.kv_lora_rank, m.qk_nope_head_dim, pa, w, gdt, count,
                                 role=OpRole.Q_ABSORB), heads))
        ops.append(attention_op(absorbed, heads=heads, kv_heads=1, d_qk=latent, d_v=m.kv_lora_rank, act_bytes=a,
                                kv_bytes=prec.kv_bytes, kv_width=latent, count=count, dtype=adt,
                                name="attention_mla", role=OpRole.MLA_ATTENTION, **cost))
        ops.append(per_head(gemm("v_absorb", rows * heads, m.v_head_dim, m.kv_lora_rank, pa, w, gdt, count,
                                 role=OpRole.V_ABSORB), heads))
    if expanded:
        # Prefill expands the latent of every attended token into per-head K and V.
        ctx = sum(n * (c + q) for q, c, n in expanded)
        ops.append(gemm("kv_b_proj", ctx, heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank,
                        pa, w, gdt, count, role=OpRole.KV_B_PROJ))
        ops.append(attention_op(expanded, heads=heads, kv_heads=heads, d_qk=qk, d_v=m.v_head_dim, act_bytes=a,
                                kv_bytes=a, kv_width=heads * (qk + m.v_head_dim), count=count,
                                dtype=adt, name="attention_mla_prefill" if absorbed else "attention_mla",
                                pair_fraction=cost["pair_fraction"], role=OpRole.MLA_ATTENTION))
    ops.append(weight_gemm("o_proj", tokens, d, heads * m.v_head_dim, out, count, OpRole.O_PROJ))
    return ops


def layer_ops(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision,
              moe_layer: bool | LayerSpec, count: int, techs: TechniqueSet = NONE,
              kv: KVFormat | None = None) -> list[Op]:
    """One layer on one GPU (`moe_layer`: its LayerSpec, or a bool for a full-attention layer with a dense or MoE
    feed-forward). Under DP attention this GPU runs everything but the routed experts on its rank's share of the
    sequences (`batch.split`), with weights split over the rank's attention_tp GPUs and their all-reduces; the
    experts see the whole group's tokens (moe.py). A layer without a mixer or without a feed-forward block
    (Nemotron-H) has only the other half."""
    spec = moe_layer if isinstance(moe_layer, LayerSpec) else LayerSpec("full", "moe" if moe_layer else "dense")
    group_tokens = batch.tokens
    batch, dense = batch.split(par.attention_dp), par.dense
    tokens, d, a = batch.tokens, model.hidden_size, prec.hidden_bytes   # the 16-bit hidden stream
    parallel = model.parallel_block and spec.mixer != "none" and spec.ffn != "none"

    def norm(role: OpRole) -> Op:
        return streaming(role.value, OpClass.NORM, tokens * d, reads=1, writes=1, flops_per_element=NORM_FLOPS,
                         elem_bytes=a, dtype=prec.activation, count=count, extra_bytes=d * a, role=role)

    def allreduce(role: OpRole) -> Op:
        return comm_op(role.value, "all_reduce", tokens * d * a, dense.tp, count, role)   # one rank's TP group

    def residual(name: str, role: OpRole) -> Op:
        return streaming(name, OpClass.ELEMENTWISE, tokens * d, reads=2, writes=1, flops_per_element=ADD_FLOPS,
                         elem_bytes=a, dtype=prec.activation, count=count, role=role)

    ops: list[Op] = []
    if spec.mixer != "none":
        ops.append(norm(OpRole.INPUT_NORM))
        if spec.recurrent:
            from .recurrent import recurrent_block   # (a hybrid model's alone: a dense model's cold start skips it)
            ops += recurrent_block(model, spec.mixer, batch, par.attention_tp, prec, count)
        else:
            ops += attention_block(model, batch, par, prec, count, techs, kv, spec)
        if model.sandwich_norm:
            ops.append(norm(OpRole.POST_MIXER_NORM))
        if dense.tp > 1 and not parallel:
            ops.append(allreduce(OpRole.ATTN_ALLREDUCE))
        if not parallel:
            ops.append(residual("residual_add", OpRole.ATTN_RESIDUAL))
    if spec.ffn == "none":
        return ops
    if not parallel:
        ops.append(norm(OpRole.POST_ATTN_NORM))
    if spec.ffn == "moe":
        from .moe import moe_ops   # (an MoE model's alone: a dense model's cold start skips it)
        ops += moe_ops(model, group_tokens, par, prec, count, local_tokens=tokens, decode=batch.is_decode)
    else:
        ops += dense_mlp(model, tokens, dense, prec.module("dense_mlp"), count)
    if model.sandwich_norm:
        ops.append(norm(OpRole.POST_FFN_NORM))
    if dense.tp > 1:
        ops.append(allreduce(OpRole.MLP_ALLREDUCE))
    ops.append(residual("residual_add_2", OpRole.MLP_RESIDUAL))
    return ops


def forward_ops(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision,
                stage: int = 0, techs: TechniqueSet = NONE, shared_prefix: int = 0,
                host: HostPath | None = None, sm_count: int = 0) -> list[Op]:
    """All kernels of one forward pass of pipeline stage `stage` on one GPU, in execution order.

    `model` and `prec` are the ones the techniques produced; `techs` shape the KV cache and add or
    rewrite ops (see techniques/base.py)."""
    ctx = pass_context(model, batch, par, prec, stage, transform_kv=techs.kv, shared_prefix=shared_prefix,
                       host=host, sm_count=sm_count)
    return pass_ops(ctx, techs)


def pass_ops(ctx: PassContext, techs: TechniqueSet = NONE, layer_memo: dict | None = None) -> list[Op]:
    """forward_ops for a pass already described by its context (see context.pass_context). `layer_memo`: a dict
    the caller keeps over one pass's pipeline stages, where stages of the same layer kinds and counts share their
    layers' ops (built once: an op list depends only on the arguments of layer_ops, keyed here)."""
    model, batch, par, prec, kv, stage = ctx.model, ctx.batch, ctx.par, ctx.prec, ctx.kv, ctx.stage
    layers = stage_layers(model, par.pp, stage)
    first, last = stage == 0, stage == par.pp - 1
    # DP attention: embedding and LM head are whole on every GPU and see its own sequences only.
    d, a, t = model.hidden_size, prec.hidden_bytes, par.attention_tp   # embeddings, final norm, pp hand-off
    local = batch.split(par.attention_dp)
    tokens, rows = local.tokens, local.logit_rows
    ops: list[Op] = []
    if first:
        # Vocab-parallel embedding: each GPU gathers its rows; an all-reduce combines them.
        ops.append(streaming("embedding", OpClass.EMBEDDING, tokens * d, reads=1, writes=1, flops_per_element=0,
                             elem_bytes=a, dtype=prec.activation, extra_bytes=tokens * 8, role=OpRole.EMBEDDING))
        if t > 1:
            ops.append(comm_op("embedding_allreduce", "all_reduce", tokens * d * a, t, 1, OpRole.EMBEDDING_ALLREDUCE))
        if model.position == "learned":   # OPT-style: gather position rows and add them
            ops.append(streaming("position_embedding", OpClass.ELEMENTWISE, tokens * d, reads=2, writes=1,
                                 flops_per_element=ADD_FLOPS, elem_bytes=a, dtype=prec.activation,
                                 role=OpRole.POSITION_EMBEDDING))
    elif par.pp > 1:
        ops.append(comm_op("pp_recv", "send_recv", tokens * d * a, 2, 1, OpRole.PP_RECV, (stage - 1) * par.tp,
                           par.tp))
    for spec, count in layer_groups(model, layers):
        if layer_memo is None:
            ops += layer_ops(model, batch, par, prec, spec, count, techs, kv)
            continue
        key = (id(model), id(batch), id(par), id(prec), id(techs), spec, count, kv)   # (the objects outlive the memo)
        built = layer_memo.get(key)
        if built is None:
            built = layer_memo[key] = layer_ops(model, batch, par, prec, spec, count, techs, kv)
        ops += built
    if last:
        # Only the last position of each sequence needs logits (as vLLM computes them), except in a
        # verify pass, which checks every drafted position.
        ops.append(streaming("final_norm", OpClass.NORM, rows * d, reads=1, writes=1, flops_per_element=NORM_FLOPS,
                             elem_bytes=a, dtype=prec.activation, extra_bytes=d * a, role=OpRole.FINAL_NORM))
        vocab = -(-model.vocab_size // t)
        ops.append(gemm("lm_head", rows, vocab, d, a, prec.embedding_bytes, prec.lm_head_dtype, out_bytes=4.0,
                        role=OpRole.LM_HEAD))
        if t > 1:
            ops.append(comm_op("logits_gather", "all_gather", rows * vocab * t * 4.0, t, 1, OpRole.LOGITS_GATHER))
        ops.append(streaming("sampling", OpClass.SAMPLING, rows * model.vocab_size, reads=2, writes=0,
                             flops_per_element=SAMPLING_FLOPS, elem_bytes=4.0, dtype="fp32", role=OpRole.SAMPLING))
    else:
        ops.append(comm_op("pp_send", "send_recv", tokens * d * a, 2, 1, OpRole.PP_SEND, stage * par.tp, par.tp))
    if any(p.scheme is not None and p.scheme.block_k for p in module_precisions(prec)):
        ops = block_scale_ops(ops, prec)   # fp8 with block scales: its quantize and promotion
    if techs:
        ops = techs.ops(ops, ctx)
    return ops
