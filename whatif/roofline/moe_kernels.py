"""The fused-MoE kernels a deployment picks where they are not its engine's own measured ones (TensorRT-LLM's
`moe_config.backend`), and whose rows price them.

TensorRT-LLM's TRTLLM MoE backend (tensorrt_llm/_torch/modules/fused_moe/fused_moe_trtllm_gen.py,
TRTLLMGenFusedMoE) runs the TRTLLM-Gen block-scale MoE kernels (DeepSeek's FP8 block scales:
`torch.ops.trtllm.fp8_quantize_1x128` then `fp8_block_scale_moe_runner`; NVFP4: `fp4_block_scale_moe_runner`), SM100
only. FlashInfer ships the same kernels as `trtllm_fp8_block_scale_moe` / `trtllm_fp4_block_scale_moe`
(flashinfer/fused_moe/core.py, the `trtllm_gen_fused_moe_sm100` module built from TensorRT-LLM's trtllmGen kernels),
which SGLang's flashinfer_trtllm MoE runner calls: aiconfigurator's B200 rows of kernel_source
`sglang_flashinfer_trtllm_moe` (fp8_block, nvfp4) time them, and data/moe_fit.yaml's sglang/blackwell/fp8 and
sglang/blackwell/fp4 blocks are fitted on those rows. TensorRT-LLM's own B200 MoE rows are MXFP4 only, so without
this setting the per-class GEMM model prices its FP8/NVFP4 experts (kernel_models/moe.py never lends another
engine's quantized fit on its own). Default: none, each engine's own fits, as before.

`marlin` (session 53): vLLM's Marlin MoE for 4-bit float weights beside 16-bit activations (VLLM_MXFP4_USE_MARLIN=1:
quantization/mxfp4.py picks Mxfp4Backend.MARLIN, fused_marlin_moe over the MXFP4 weights; InferenceX's
gptoss_fp4_h100.sh exports it), the kernel vLLM runs its INT4 weight-only experts with: those experts are priced by
the engine's own weight-only (Marlin) MoE fit (expert_fits.moe_fit_dtype). Its activation runs inside
fused_marlin_moe, and the fit's rows (vLLM 0.24's FusedMoE module) time it with the top-k, so under that fit the
graph's ops for them go, as under every fused-MoE fit (session 65 B, M: fit_timed_roles).

`trtllm-gen-mxfp8` (session 61): the same TRTLLM-Gen kernels over MXFP4 weights x MXFP8 activations
(`trtllm_fp4_block_scale_moe` with mxfp8 hidden states), gpt-oss's B200 expert path: vLLM's
VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (SM100_FI_MXFP4_MXFP8_TRTLLM, quantization/mxfp4.py) and TensorRT-LLM's
`moe_config.backend: TRTLLM` for its MXFP4 checkpoint (InferenceX gptoss_fp4_b200_trt.sh; tensorrt_llm/_torch/
model_config.py get_mxfp4_quant_algo: W4A8_MXFP4_MXFP8 on SM >= 100 unless the backend is TRITON or
OVERRIDE_QUANT_ALGO is set; vLLM's SM100 default without the variable is MXFP4 x bf16). Priced by the fit of
aiconfigurator's B200 w4a8_mxfp4_mxfp8 rows of that kernel (sglang_flashinfer_trtllm_moe; validate/moe_fit.FITS
trtllm_gen_mxfp8) at the fp8 tensor-core peak (expert_fits.FIT_PEAK_DTYPE); the nvfp4 stand-in's fit had read
those rows x0.72.

`triton` (session 72 B2): the Triton fused-MoE kernel (vLLM's TritonExperts / fused_experts, SGLang's fused_moe_triton,
the same fused_moe_kernel) over 128x128 block-FP8 experts, which vLLM's fp8 MoE oracle (model_executor/layers/
fused_moe/oracle/fp8.py) falls back to where a launch disables FlashInfer's and DeepGEMM's MoE
(VLLM_USE_FLASHINFER_MOE_FP8=0, VLLM_MOE_USE_DEEP_GEMM=0; VLLM_CUTLASS off unless allowed). Priced by the fit of the
corpus's Triton block-FP8 rows (SGLang 0.5.14's sglang_fused_moe_triton fp8_block, H100 and B200: validate/moe_fit.FITS
fused_moe_triton). Only block-FP8 experts have that fit; others keep the engine's own pricing (has_moe_fit)."""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError
from ..specs.op_kinds import OpRole

# kernels -> {GPU architecture: the engine whose fused-MoE rows timed those kernels there}
MOE_KERNELS = {"trtllm-gen": {"blackwell": "sglang"}, "trtllm-gen-mxfp8": {"blackwell": "trtllm_gen_mxfp8"},
               "marlin": {"ampere": None, "ada": None, "hopper": None, "blackwell": None},
               "triton": {"hopper": "fused_moe_triton", "blackwell": "fused_moe_triton"}}
# kernels the deployment's own engine runs for 4-bit float weights through its weight-only MoE fit
WEIGHT_ONLY_KERNELS = frozenset({"marlin"})


def check_moe_kernels(kernels, field: str = "moe_kernels") -> None:
    """A one-line error naming `field` unless `kernels` is one of MOE_KERNELS."""
    if kernels not in MOE_KERNELS:
        raise WhatifError(f"{field}: {kernels!r} is not valid; valid: {', '.join(sorted(MOE_KERNELS))}")


def moe_fit_engine(kernels: str | None, arch: str) -> str | None:
    """The engine whose fused-MoE fit prices the experts of a deployment running `kernels` on `arch`; None: the
    deployment's own engine's (no kernels named, or kernels of its own: WEIGHT_ONLY_KERNELS)."""
    if kernels is None:
        return None
    check_moe_kernels(kernels)
    where = MOE_KERNELS[kernels]
    if arch not in where:
        raise WhatifError(f"moe_kernels: '{kernels}' runs on {', '.join(sorted(where))} GPUs only, not {arch}")
    return where[arch]


# What the call a fused-MoE fit's rows time does itself (aiconfigurator's collectors, session 65 M), so a graph op for
# it counts it twice where that fit prices the experts: the expert activation, inside every fused MoE (vLLM's
# fused_experts / fused_marlin_moe run silu_and_mul inside, SGLang's fused_moe_triton likewise, the TRTLLM-Gen and
# CUTLASS MoE runners fuse or run it inside their op); the input's per-token-group fp8 quantization (each layer
# quantizes its bf16 input inside: vLLM's FusedMoE, SGLang's runners, TensorRT-LLM's forward); and the top-k routing,
# which every collector but one times inside the call: vLLM 0.24's `moe_module(hidden_states, router_logits)`,
# SGLang's `select_experts` + `fused_moe` (Triton) or `moe_layer(hidden_states, topk_layer(hidden_states, logits))`
# (FlashInfer runners), TensorRT-LLM's `moe.forward(hidden_states, logits, do_finalize=True)`. The router GEMM runs
# before (its logits are given), so it stays; the final sum / finalize is inside too and whatif has no op for it.
FUSED_LAYER_ROLES = frozenset({OpRole.ROUTER_TOPK, OpRole.EXPERT_ACT})
EXPERT_ROLES = frozenset({OpRole.EXPERT_UP, OpRole.EXPERT_DOWN})
# kernel_sources whose collector ran the top-k before the timed call: vLLM 0.11-0.14's collector/vllm/collect_moe.py
# (torch.topk + softmax, then fused_experts(hidden_states, w1, w2, topk_weights, topk_ids) timed) and the later
# fused_experts / routed-kernel rows of collect_moe.py for vLLM >= 0.17 (INT4 Marlin, FlashInfer's routed NVFP4)
TOPK_OUTSIDE_SOURCES = frozenset({"vllm_fused_moe", "vllm_marlin_int4_moe", "vllm_flashinfer_trtllm_moe_fp4"})


def fused_layer_ops(ops, eff, gpu=None) -> list:
    """The ops less those the fused-MoE call whose rows price the experts does itself (fit_timed_roles: the deployment's
    own engine's fit, or eff.moe_engine's where the named kernels are another engine's); under weight-only kernels
    (eff.moe_weight_only) the 4-bit float expert GEMMs marked to run them; the ops as they are without a GPU."""
    if getattr(eff, "moe_weight_only", False):
        ops = [replace(op, weight_only_kernel=True) if op.fp4_weights and op.role in EXPERT_ROLES else op
               for op in ops]
    if getattr(eff, "moe_engine", None) == TRITON_FIT:   # the M tile the engine's Triton default runs (not tile_m's)
        ops = [with_triton_block_m(op, eff.engine) for op in ops]
    engine = getattr(eff, "moe_engine", None) or getattr(eff, "engine", None)
    if gpu is None or not engine:
        return ops
    timed = fit_timed_roles(ops, gpu, engine)
    return [op for op in ops if not (op.role in timed or is_expert_input_quant(op))] if timed else ops


TRITON_FIT = MOE_KERNELS["triton"]["blackwell"]   # the fit `triton` names ("fused_moe_triton", Hopper likewise)


def with_triton_block_m(op, engine: str):
    """A block-FP8 expert GEMM carrying the M tile `engine`'s Triton fused MoE runs it at (triton_moe_tile.py: vLLM
    0.17.0's 16 at <= 64 tokens, else 64) and its launch grid's M tiles at it, so its padding and grid follow the
    release's tile, not the fit rows' 64; other ops as they are."""
    from .kernel_models.moe import grid_m_tiles
    from .kernel_models.triton_moe_tile import triton_block_m
    s = op.shape
    if op.role not in EXPERT_ROLES or not (op.block_scaled and op.dtype == "fp8") or not s.tokens:
        return op
    tile = triton_block_m(engine, s.tokens)
    return replace(op, shape=replace(s, block_m=float(tile), grid_m=grid_m_tiles(s.tokens, s.topk, s.experts, tile)))


def is_expert_input_quant(op) -> bool:
    """A per-token-group fp8 quantize of an expert GEMM's input (dequant.block_scale_ops adds one per GEMM)."""
    from .dequant import GROUP_QUANT_SUFFIX
    return op.part_of in EXPERT_ROLES and op.name.endswith(GROUP_QUANT_SUFFIX)


def fit_timed_roles(ops, gpu, engine: str) -> frozenset:
    """The MoE layer's op roles the fused-MoE fit pricing its up GEMM timed inside its call (FUSED_LAYER_ROLES, the
    top-k kept where the fit's collector ran it outside: TOPK_OUTSIDE_SOURCES); none where no fused fit prices the
    experts (the per-class or dense GEMM model: each op its own kernel). The inputs' group quantization goes with
    them (is_expert_input_quant)."""
    from .expert_fits import expert_fit_engine, moe_fit_dtype
    from .kernel_models.moe import has_moe_fit, moe_fit_source
    for op in ops:
        if op.role == OpRole.EXPERT_UP and op.shape.groups != 1.0:
            fit = expert_fit_engine(op, gpu, engine)
            dtype = moe_fit_dtype(op, gpu, fit)
            if not has_moe_fit(dtype, gpu.arch, fit):
                return frozenset()
            if moe_fit_source(gpu.arch, dtype, fit) in TOPK_OUTSIDE_SOURCES:
                return frozenset({OpRole.EXPERT_ACT})
            return FUSED_LAYER_ROLES
    return frozenset()
