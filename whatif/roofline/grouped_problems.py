"""The per-problem cost of TensorRT-LLM's Hopper block-FP8 grouped expert GEMM, which the per-class pricing lacks.

TensorRT-LLM runs 128x128 block-FP8 experts on Hopper through CutlassFp8BlockScaleGemmRunner::moeGemm
(cpp/tensorrt_llm/kernels/cutlass_kernels/fp8_blockscale_gemm), one GEMM problem per LOCAL expert
(`problem_m_offsets`, `num_problems` = the rank's experts, empty ones included), beside the routing / permute /
finalize kernels of its CUTLASS MoE. aiconfigurator's H100 fp8_block rows of that kernel (moe_torch_flow_cutlass,
balanced routing: rank 0 touches exactly min(T k, E) / ep experts, one row each) measure, at the same touched
experts, a time that grows with the rank's local experts, ~0.13-0.27 us each at every one of its 19 shapes
(8 local at EP 16: +1 us; 256 at EP 1: +40 us), and no such term in TensorRT-LLM's per-tensor fp8 rows, SGLang's
Triton rows or the B200 TRTLLM-Gen rows. Per-class expert GEMMs (kernel_timing prices them only where no fused-MoE
fit covers them) of that engine x architecture take `fixed + per_local * local experts`, split over the layer's two
grouped GEMMs; the two values are the least-squares fit of (measured - whatif's per-class layer) on those balanced
rows at 1-16 tokens, EP 1-16, DeepSeek-V3's and Qwen3-235B's shapes (`python benchmarks/moe_serving_path.py
--problem-fit`; one GPU measured, so no leave-one-GPU-out figure; fitted on one shape, scored on the other: 12.2 ->
5.0% and 13.3 -> 4.9% MAPE on those rows). Off by default (the scenario's moe_problem_cost, --moe-problem-cost):
on the serving rows it moved TensorRT-LLM's Qwen3-235B H100 TPOT away from the measured (docs/accuracy.md, session
56 helper L), the step's other H100 over-prices having hidden the experts' under-price.
"""
from __future__ import annotations

GROUPED_GEMMS = 2   # the fused layer's gate+up and down GEMMs share the layer's cost
# (engine, architecture) -> (fixed s, s per local expert) of a block-FP8 expert layer, fitted as the docstring says
BLOCK_FP8_PROBLEM_COST = {("trtllm", "hopper"): (5.58e-6, 0.112e-6)}


def grouped_problem_seconds(op, gpu, engine: str | None) -> float:
    """Seconds one grouped expert GEMM spends on its local experts' problems (0 where no such cost was measured)."""
    local = getattr(op.shape, "local_experts", 0.0)
    if not (local and op.block_scaled and op.dtype == "fp8"):
        return 0.0
    cost = BLOCK_FP8_PROBLEM_COST.get((engine, gpu.arch))
    if cost is None:
        return 0.0
    fixed, per_local = cost
    return (fixed + per_local * local) / GROUPED_GEMMS
