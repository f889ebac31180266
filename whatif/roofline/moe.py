"""Mixture-of-experts layer: router, the experts a batch actually touches, expert parallelism.

With T tokens each choosing k of E experts (uniform routing assumed for which experts are hit), an expert
is hit with probability 1 - (1 - k/E)^T; only hit experts' weights are read, which is why small-batch MoE
decode reads a fraction of the weights and large batches read them all. Under expert parallelism the
busiest EP rank's tokens set the layer's time (expert_load.py: routing skew and EPLB's redundant experts).
"""
from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from ..specs.dtypes import gemm_compute_dtype
from .comm import comm_op, deepep_op
from .dequant import with_weight_dequant
from .mlp import ACT_FLOPS, dense_mlp
from .kernel_models.moe import grid_m_tiles
from .ops import Op, OpClass, OpRole, gemm, streaming

TOPK_FLOPS = 4.0   # softmax + top-k compare per router logit (order of magnitude; memory bound)


def experts_touched(num_experts: float, k: int, tokens: int, total_experts: int) -> float:
    """Expected distinct experts hit, out of `num_experts` local ones of `total_experts`."""
    return num_experts * (1.0 - (1.0 - k / total_experts) ** tokens)


@lru_cache(maxsize=4096)
def busiest_rank_touched(num_experts: float, k: int, tokens: int, total_experts: int, ep: int) -> float:
    """Expected distinct experts hit on the busiest of `ep` ranks holding `num_experts` each: the layer waits for it
    (expert_load.py), and at few tokens the ranks' hit counts spread far from their mean (one token's k experts on
    16 ranks: the mean rank touches k/16, the busiest 1-3). Each local expert is hit independently with the uniform
    routing's probability; E[max of ep Binomial(L, p)] = sum_x>=1 (1 - F(x-1)^ep). ep 1: the mean."""
    mean = experts_touched(num_experts, k, tokens, total_experts)
    local = int(round(num_experts))
    if ep <= 1 or local < 1 or tokens <= 0:
        return mean
    p = 1.0 - (1.0 - k / total_experts) ** tokens
    if p >= 1.0:
        return float(local)
    cdf, expected = 0.0, 0.0
    for x in range(local):   # cdf = F(x) = P(a rank's hits <= x)
        cdf += math.exp(math.lgamma(local + 1) - math.lgamma(x + 1) - math.lgamma(local - x + 1)
                        + x * math.log(p) + (local - x) * math.log1p(-p)) if p > 0 else (1.0 if x == 0 else 0.0)
        expected += 1.0 - min(cdf, 1.0) ** ep
    return max(mean, expected)


def gather_collective(par, decode: bool, collective: str) -> str:
    """The collective of an attention-DP MoE's gather ("all_gather") or combine ("reduce_scatter"): an all-reduce of
    the whole gathered buffer in a step with a prefill where the engine pads to the sum of the ranks' tokens
    (sglang layers/dp_attention.py DpPaddingMode.get_dp_padding_mode: SUM_LEN when is_extend_in_batch,
    _dp_gather_via_all_reduce; layers/communicator.py _scatter_hidden_states reduce-scatters only under MAX_LEN,
    else the MoE's tensor_model_parallel_all_reduce and dp_scatter), as `collective` otherwise."""
    return "all_reduce" if par.prefill_gather_all_reduce and not decode else collective


def moe_ops(model, tokens: int, par, prec, count: int, local_tokens: int | None = None,
            decode: bool = False) -> list[Op]:
    """One MoE layer on one GPU. `tokens`: the TP group's tokens, which the experts share (routed,
    touched); `local_tokens`: this GPU's attention rank's own under DP attention (router, dispatch/combine
    of its own tokens, shared experts on the rank's attention_tp split), else the same as `tokens`.

    Each GPU holds num_experts/ep experts with 1/moe_tp of their columns. The tokens reach them by an
    all-to-all within the EP group (dispatch and combine), or under DP attention with split experts or an engine
    that gathers (par.gathers_experts: TensorRT-LLM off MNNVL) by an all-gather of every rank's tokens and a
    reduce-scatter of the partial outputs over the TP group. Without DP attention every GPU of the TP group
    already holds every token (TP attention), so each runs its local experts on them and the TP all-reduce after
    the layer sums the partials: no all-to-all (TensorRT-LLM's CutlassFusedMoE, vLLM's FusedMoE and SGLang without
    DP attention or DeepEP). With par.moe_a2a "deepep" the all-to-all is DeepEP's (`decode`: a decode batch, its
    low-latency kernels; else its normal ones)."""
    local = tokens if local_tokens is None else local_tokens
    m = model.moe
    base, prec = prec, prec.module("experts")   # the routed experts run their own precision (--expert-quantization)
    a, w, d = prec.act_bytes, prec.weight_bytes, model.hidden_size
    gdt = gemm_compute_dtype(prec.weight, prec.activation)
    ep = par.ep
    inter = m.expert_intermediate_size // par.moe_tp
    local_experts = (m.num_experts + par.redundant_experts) / ep   # EPLB's replicas take slots too
    touched = busiest_rank_touched(local_experts, m.experts_per_token, tokens, m.num_experts, ep)   # the one waited for
    load = par.expert_load(m.num_experts) if ep > 1 else 1.0   # the busiest rank's share over the mean
    routed = tokens * m.experts_per_token / ep * load  # token-expert assignments landing on the busiest GPU
    gated = model.mlp == "gated"
    up_n = 2 * inter if gated else inter
    # under DP attention a rank's attention_tp GPUs hold the same tokens; each sends its 1/attention_tp share
    sent = -(-local // par.attention_tp) if par.dp_attention else local
    # The gate stays 16-bit under any scheme (checkpoints leave it out: modelopt's exclude lists, DeepSeek's
    # FP8 release), its input the 16-bit hidden state: never an fp8 / fp4 GEMM with their fixed costs.
    r_bytes, r_dtype = (base.act_bytes, base.activation) if base.act_bytes >= 2 else (2.0, "bf16")
    if m.fp32_router:   # an fp32 gate (MiniMax-M2 in vLLM and SGLang) at torch's fp32 matmul precision 'highest' (vLLM
        r_bytes, r_dtype = 4.0, "fp32"   # sets it by default: VLLM_FLOAT32_MATMUL_PRECISION, vllm#29897): an SGEMM

    def a2a(name: str, phase: str, role: OpRole) -> Op:
        moved = sent * m.experts_per_token * d * a * load
        if par.moe_a2a == "deepep":   # the busiest rank's tokens: the mean rank's times the load factor
            return deepep_op(name, phase, decode, sent * load, d, m.experts_per_token, m.num_experts, moved, ep,
                             count, role)
        return comm_op(name, "all_to_all", moved, ep, count, role)

    ops = [
        gemm("router", local, m.num_experts, d, r_bytes, r_bytes, r_dtype, count, out_bytes=4.0, role=OpRole.ROUTER),
        streaming("router_topk", OpClass.ROUTER, local * m.num_experts, reads=1, writes=0,
                  flops_per_element=TOPK_FLOPS, elem_bytes=4.0, dtype="fp32", count=count, role=OpRole.ROUTER_TOPK),
    ]
    if par.gathers_experts:   # block-scaled fp8 quantizes per token group after the gather (its group_quant op)
        gathered = prec.hidden_bytes if prec.scheme is not None and prec.scheme.block_k else a
        ops.append(comm_op("moe_gather", gather_collective(par, decode, "all_gather"), tokens * d * gathered, par.tp,
                           count, OpRole.MOE_DISPATCH))
    elif ep > 1 and par.dp_attention:
        ops.append(a2a("moe_dispatch", "dispatch", OpRole.MOE_DISPATCH))   # (the busiest receiver bounds it)
    up = gemm("experts_gate_up" if gated else "experts_up", routed, up_n, d, a, w, gdt, count, role=OpRole.EXPERT_UP)
    down = gemm("experts_down", routed, d, inter, a, w, gdt, count, role=OpRole.EXPERT_DOWN)
    grid = grid_m_tiles(tokens, m.experts_per_token, m.num_experts)   # sized by every slot, EP or not
    for op in (up, down):
        n, k = op.shape.n, op.shape.k
        hbm = op.hbm_bytes - k * n * w + touched * k * n * w   # weights of touched experts only
        note = f"; grouped over {touched:.2f} touched of {local_experts:g} local experts"
        shape = replace(op.shape, groups=max(touched, 1e-9), grid_m=grid, local_experts=local_experts, tokens=tokens,
                        topk=m.experts_per_token, experts=m.num_experts)
        grouped = replace(op, bytes={"hbm": hbm}, shape=shape,
                          formula=op.formula + note, expert_parallel=ep > 1)
        ops.append(with_weight_dequant(grouped, prec, touched * k * n, routed / max(touched, 1e-9)))
        if op is up:
            ops.append(streaming("experts_act", OpClass.ACTIVATION, routed * inter, reads=2 if gated else 1, writes=1,
                                 flops_per_element=ACT_FLOPS, elem_bytes=a, dtype=prec.activation, count=count,
                                 role=OpRole.EXPERT_ACT))
    if par.gathers_experts:
        ops.append(comm_op("moe_scatter", gather_collective(par, decode, "reduce_scatter"),
                           tokens * d * prec.hidden_bytes, par.tp, count, OpRole.MOE_COMBINE))
    elif ep > 1 and par.dp_attention:
        ops.append(a2a("moe_combine", "combine", OpRole.MOE_COMBINE))
    if m.shared_experts:
        ops += dense_mlp(model, local, par.dense, base.module("shared_experts"), count,
                         intermediate=m.shared_experts * m.shared_size, prefix="shared_expert")
        if m.shared_expert_gate:
            ops += shared_expert_gate_ops(local, d, a, count)
        ops.append(shared_expert_add_op(local, d, base.hidden_bytes, count, m.shared_expert_gate))
    return ops


def shared_expert_add_op(tokens: int, hidden: int, hidden_bytes: float, count: int, gated: bool = False) -> Op:
    """The sum of the routed and the shared experts' outputs, its own elementwise kernel after both (and after the
    second stream's join where the shared expert runs on one): sglang models/deepseek_v2.py DeepseekV2MoE.forward_normal
    and forward_normal_dual_stream `final_hidden_states += shared_output` (GLM-5 and Kimi reuse the class), qwen2_moe.py
    `final_hidden_states + shared_output`; TensorRT-LLM modeling_deepseekv3.py Deepseekv3MoE.forward `shared_output +
    routed_output` on its do_finalize path; vLLM DeepseekV2MoE.forward `final_hidden_states += shared_output`. The
    fused-MoE collectors time the routed experts only (docs/accuracy.md, session 65 M), so no fit holds it. `gated`:
    Qwen's gated shared expert, whose add closes shared_expert_gate_ops (its role)."""
    return streaming("shared_expert_add", OpClass.ELEMENTWISE, tokens * hidden, reads=2, writes=1,
                     flops_per_element=1.0, elem_bytes=hidden_bytes, dtype="bf16", count=count,
                     role=OpRole.SHARED_EXPERT_GATE if gated else OpRole.SHARED_EXPERT_ADD)


def shared_expert_gate_ops(tokens: int, hidden: int, act_bytes: float, count: int) -> list[Op]:
    """Qwen's gated shared expert after its down GEMM, as the engines run it: sglang models/qwen2_moe.py
    Qwen2MoeSparseMoeBlock.forward (Qwen3-Next and Qwen3.5 reuse it) `F.sigmoid(self.shared_expert_gate(h)) *
    shared_output`, then `final_hidden_states + shared_output`: the gate (torch.nn.Linear(hidden, 1), unquantized),
    the sigmoid and the scale, each its own kernel, then the add to the routed output (shared_expert_add_op); the
    fused-MoE collectors time the routed experts only (docs/accuracy.md, session 65 M)."""
    role = OpRole.SHARED_EXPERT_GATE
    return [
        gemm("shared_expert_gate", tokens, 1, hidden, 2.0, 2.0, "bf16", count, role=role),
        streaming("shared_expert_sigmoid", OpClass.ACTIVATION, tokens, reads=1, writes=1,
                  flops_per_element=ACT_FLOPS, elem_bytes=2.0, dtype="bf16", count=count, role=role),
        streaming("shared_expert_scale", OpClass.ELEMENTWISE, tokens * hidden, reads=1, writes=1,
                  flops_per_element=1.0, elem_bytes=act_bytes, dtype="bf16", count=count,
                  extra_bytes=tokens * 2.0, role=role),
    ]   # (the add to the routed output: shared_expert_add_op)
