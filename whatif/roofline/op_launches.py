"""Host launches of an op whatif prices as one kernel but the engine's eager prefill runs as several.

An eager pass (a prefill: SGLang runs no prefill CUDA graphs) costs the host one launch per kernel whatif counts
(kernels.eager_launch_s). Some ops of whatif's graph are one fitted kernel whose engine runs a chain of kernels,
each launched from Python: SGLang's Gated DeltaNet prefill is whatif's one `gated_deltanet` op, timed whole by its
fit, where chunk_gated_delta_rule (layers/attention/fla/chunk.py) launches 8 Triton kernels (l2norm of q and of k,
chunk_local_cumsum, chunk_scaled_dot_kkt_fwd, solve_tril, recompute_w_u_fwd, chunk_gated_delta_rule_fwd_h,
chunk_fwd_o) after the layer's fused_gdn_gating kernel. `kernels.prefill_op_launches` gives those counts per op
role ({"linear_attention": 9}); the op then carries that many of the host's launches in an eager prefill pass, its
GPU time unchanged (the fit's). Absent (the default), or a role not listed: one launch each.

`kernels.eager_input_quantize`: the engine quantizes a dense fp8 GEMM's input in a kernel of its own, launched from
Python before the GEMM (SGLang's fp8 linear, layers/quantization/fp8_utils.py: per_token_group_quant_fp8 or
sglang_per_token_group_quant_fp8, then the DeepGEMM / FlashInfer / CUTLASS GEMM), where whatif prices the pair as
one GEMM op (its fit's quantization term): such an op carries two launches in an eager prefill pass. Its NVFP4
linear likewise (layers/quantization/modelopt_quant.py ModelOptFp4LinearMethod.apply, 0.5.x: scaled_fp4_quant of the
activation, then the fp4 GEMM, cutlass_scaled_fp4_mm or FlashInfer's mm_fp4; added session 61). Not for a GEMM
whose producer writes its input quantized (op.input_quantized), nor the grouped expert GEMMs (the fused MoE is one
call), nor ops whose module the engine measured whole (module_host.py, which takes precedence).
"""
from __future__ import annotations

from .ops import OpClass, graph_role

INPUT_QUANTIZED_DTYPES = ("fp8", "fp4")   # GEMM dtypes whose separate input-quantize kernel was read in the source


def op_launch_factors(setup, times) -> dict[int, float]:
    """{id(op): host launches each} for the priced ops `times` of an eager prefill pass whose role the engine runs
    as several kernels (kernels.prefill_op_launches); {} elsewhere (one launch each)."""
    spec = setup.engine_spec
    if spec is None or not (spec.prefill_op_launches or spec.eager_input_quantize):
        return {}
    launches = dict(spec.prefill_op_launches)
    out = {}
    for t in times:
        role = graph_role(t.op)
        n = launches.get(role.value) if role is not None else None
        if n is not None and n > 1 and t.op.op_class != OpClass.TRANSFER:
            out[id(t.op)] = n
        elif spec.eager_input_quantize and quantizes_own_input(t.op):
            out[id(t.op)] = 2.0
    return out


def quantizes_own_input(op) -> bool:
    """A dense GEMM of a quantized format whose input no earlier kernel wrote quantized: its engine launches a
    quantize kernel before it."""
    return (op.op_class == OpClass.GEMM and op.dtype in INPUT_QUANTIZED_DTYPES and not op.input_quantized
            and getattr(op.shape, "groups", 1.0) == 1.0)
