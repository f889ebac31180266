"""Mixture-of-experts layer: router, the experts a batch actually touches, expert parallelism.

With T tokens each choosing k of E experts (uniform routing assumed), an expert is hit with
probability 1 - (1 - k/E)^T; only hit experts' weights are read, which is why small-batch MoE
decode reads a fraction of the weights and large batches read them all.
"""
from __future__ import annotations

from dataclasses import replace

from ..specs.dtypes import gemm_compute_dtype
from .comm import comm_op
from .dequant import with_weight_dequant
from .mlp import ACT_FLOPS, dense_mlp
from .ops import Op, OpClass, OpRole, gemm, streaming

TOPK_FLOPS = 4.0   # softmax + top-k compare per router logit (order of magnitude; memory bound)


def experts_touched(num_experts: float, k: int, tokens: int, total_experts: int) -> float:
    """Expected distinct experts hit, out of `num_experts` local ones of `total_experts`."""
    return num_experts * (1.0 - (1.0 - k / total_experts) ** tokens)


def moe_ops(model, tokens: int, par, prec, count: int, local_tokens: int | None = None) -> list[Op]:
    """One MoE layer on one GPU. `tokens`: the TP group's tokens, which the experts share (routed,
    touched); `local_tokens`: this GPU's own under DP attention (router, dispatch/combine of its own
    tokens, shared experts data-parallel on whole weights), else the same as `tokens`."""
    local = tokens if local_tokens is None else local_tokens
    m = model.moe
    base, prec = prec, prec.module("experts")   # the routed experts run their own precision (--expert-quantization)
    a, w, d = prec.act_bytes, prec.weight_bytes, model.hidden_size
    gdt = gemm_compute_dtype(prec.weight, prec.activation)
    ep = par.ep
    tp_expert = 1 if ep > 1 else par.tp       # without EP, each expert's columns are split over TP
    inter = m.expert_intermediate_size // tp_expert
    local_experts = m.num_experts / ep
    touched = experts_touched(local_experts, m.experts_per_token, tokens, m.num_experts)
    routed = tokens * m.experts_per_token / ep  # token-expert assignments landing on this GPU
    gated = model.mlp == "gated"
    up_n = 2 * inter if gated else inter
    ops = [
        gemm("router", local, m.num_experts, d, base.act_bytes, base.act_bytes, base.activation, count, out_bytes=4.0,
             role=OpRole.ROUTER),
        streaming("router_topk", OpClass.ROUTER, local * m.num_experts, reads=1, writes=0,
                  flops_per_element=TOPK_FLOPS, elem_bytes=4.0, dtype="fp32", count=count, role=OpRole.ROUTER_TOPK),
    ]
    if ep > 1:
        ops.append(comm_op("moe_dispatch", "all_to_all", local * m.experts_per_token * d * a, ep, count,
                           OpRole.MOE_DISPATCH))
    up = gemm("experts_gate_up" if gated else "experts_up", routed, up_n, d, a, w, gdt, count, role=OpRole.EXPERT_UP)
    down = gemm("experts_down", routed, d, inter, a, w, gdt, count, role=OpRole.EXPERT_DOWN)
    for op in (up, down):
        n, k = op.shape.n, op.shape.k
        hbm = op.hbm_bytes - k * n * w + touched * k * n * w   # weights of touched experts only
        note = f"; grouped over {touched:.2f} touched of {local_experts:g} local experts"
        grouped = replace(op, bytes={"hbm": hbm}, shape=replace(op.shape, groups=max(touched, 1e-9)),
                          formula=op.formula + note)
        ops.append(with_weight_dequant(grouped, prec, touched * k * n, routed / max(touched, 1e-9)))
        if op is up:
            ops.append(streaming("experts_act", OpClass.ACTIVATION, routed * inter, reads=2 if gated else 1, writes=1,
                                 flops_per_element=ACT_FLOPS, elem_bytes=a, dtype=prec.activation, count=count,
                                 role=OpRole.EXPERT_ACT))
    if ep > 1:
        ops.append(comm_op("moe_combine", "all_to_all", local * m.experts_per_token * d * a, ep, count,
                           OpRole.MOE_COMBINE))
    if m.shared_experts:
        ops += dense_mlp(model, local, par.dense, base.module("shared_experts"), count,
                         intermediate=m.shared_experts * m.shared_size, prefix="shared_expert")
    return ops
