"""The shared expert on a second CUDA stream beside the routed experts, where the engine runs it so.

TensorRT-LLM's DeepSeek MoE layer (tensorrt_llm/_torch/models/modeling_deepseekv3.py, Deepseekv3MoE.forward) runs
`maybe_execute_in_parallel(_compute_routed_output, _compute_shared_output, ..., self.aux_stream)`: the gate, the
routed experts and their communication on the main stream, the shared expert on the MoeShared aux stream, joined
by CUDA events before the sum. tensorrt_llm/_torch/modules/multi_stream_utils.py: "Multi-stream is only enabled
when cuda graph is turned on because switch stream has extra host overhead", so only a CUDA-graph pass (a decode
step) overlaps them; an eager prefill runs them one after the other. The engine profile names the model families
(kernels.shared_expert_stream). Overlapped, the two chains share the GPU: the pair costs the longer chain, and never
less than their HBM traffic or their tensor work back to back (each op's memory and compute parts, summed)."""
from __future__ import annotations

from ..specs.op_kinds import OpRole

SHARED_ROLES = frozenset({OpRole.SHARED_EXPERT_UP, OpRole.SHARED_EXPERT_ACT, OpRole.SHARED_EXPERT_DOWN})
# the main stream's part of the MoE layer: the gate, its routing, the routed experts and their EP exchange
ROUTED_ROLES = frozenset({OpRole.ROUTER, OpRole.ROUTER_TOPK, OpRole.MOE_DISPATCH, OpRole.EXPERT_UP,
                          OpRole.EXPERT_ACT, OpRole.EXPERT_DOWN, OpRole.MOE_COMBINE})


def runs_shared_expert_stream(engine, model, cuda_graph: bool) -> bool:
    """Whether this pass overlaps the shared expert with the routed experts (a CUDA-graph pass of a listed family)."""
    return (cuda_graph and engine is not None and model is not None and model.moe is not None
            and model.family in engine.shared_expert_stream)


def hidden_shared_s(times, kernel_gap_s: float) -> float:
    """Seconds of the pass's serial sum the second stream hides: the shorter chain (its kernels' gaps included),
    less what the pair's combined HBM traffic or tensor work still needs beyond the longer one."""
    def chain(roles):
        ts = [t for t in times if t.op.role in roles]
        return (sum(t.total_s + t.op.count * kernel_gap_s for t in ts),
                sum(t.memory_s * t.op.count for t in ts), sum(t.compute_s * t.op.count for t in ts))
    shared, routed = chain(SHARED_ROLES), chain(ROUTED_ROLES)
    if shared[0] <= 0.0 or routed[0] <= 0.0:
        return 0.0
    together = max(shared[0], routed[0], shared[1] + routed[1], shared[2] + routed[2])
    return max(0.0, shared[0] + routed[0] - together)
