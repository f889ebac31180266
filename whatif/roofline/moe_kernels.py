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
the engine's own weight-only (Marlin) MoE fit (expert_fits.moe_fit_dtype). Its top-k is a kernel of its own, so the
graph's op for it stays; its activation runs inside fused_marlin_moe, which the fit's rows time whole, so under that
fit the graph's activation op goes (session 65, weight_only_act_timed; INT4 experts priced by it alike).

`trtllm-gen-mxfp8` (session 61): the same TRTLLM-Gen kernels over MXFP4 weights x MXFP8 activations
(`trtllm_fp4_block_scale_moe` with mxfp8 hidden states), gpt-oss's B200 expert path: vLLM's
VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 (SM100_FI_MXFP4_MXFP8_TRTLLM, quantization/mxfp4.py) and TensorRT-LLM's
`moe_config.backend: TRTLLM` for its MXFP4 checkpoint (InferenceX gptoss_fp4_b200_trt.sh; tensorrt_llm/_torch/
model_config.py get_mxfp4_quant_algo: W4A8_MXFP4_MXFP8 on SM >= 100 unless the backend is TRITON or
OVERRIDE_QUANT_ALGO is set; vLLM's SM100 default without the variable is MXFP4 x bf16). Priced by the fit of
aiconfigurator's B200 w4a8_mxfp4_mxfp8 rows of that kernel (sglang_flashinfer_trtllm_moe; validate/moe_fit.FITS
trtllm_gen_mxfp8) at the fp8 tensor-core peak (expert_fits.FIT_PEAK_DTYPE); the nvfp4 stand-in's fit had read
those rows x0.72."""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError
from ..specs.op_kinds import OpRole

# kernels -> {GPU architecture: the engine whose fused-MoE rows timed those kernels there}
MOE_KERNELS = {"trtllm-gen": {"blackwell": "sglang"}, "trtllm-gen-mxfp8": {"blackwell": "trtllm_gen_mxfp8"},
               "marlin": {"ampere": None, "ada": None, "hopper": None, "blackwell": None}}
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


# What the fused layer those rows time does itself: the top-k routing (SGLang's collector requires the fused routing
# path, BypassedTopKOutput: the kernel takes the router logits, as TensorRT-LLM's runner does) and the SwiGLU
# between its two GEMMs; the router GEMM runs before it (the model's gate), so it stays.
FUSED_LAYER_ROLES = frozenset({OpRole.ROUTER_TOPK, OpRole.EXPERT_ACT})
EXPERT_ROLES = frozenset({OpRole.EXPERT_UP, OpRole.EXPERT_DOWN})


def fused_layer_ops(ops, eff, gpu=None) -> list:
    """The ops less those the named MoE kernels' fused layer does itself, where the experts are priced by its rows
    (eff.moe_engine); under weight-only kernels (eff.moe_weight_only) the 4-bit float expert GEMMs marked to run
    them; where the engine's weight-only (Marlin) fit prices the experts on `gpu`, less the expert activation
    (weight_only_act_timed); the ops as they are otherwise."""
    if getattr(eff, "moe_weight_only", False):
        ops = [replace(op, weight_only_kernel=True) if op.fp4_weights and op.role in EXPERT_ROLES else op
               for op in ops]
    if gpu is not None and getattr(eff, "engine", None) and weight_only_act_timed(ops, gpu, eff.engine):
        ops = [op for op in ops if op.role != OpRole.EXPERT_ACT]
    if not getattr(eff, "moe_engine", None):
        return ops
    return [op for op in ops if op.role not in FUSED_LAYER_ROLES]


def weight_only_act_timed(ops, gpu, engine: str) -> bool:
    """Whether the experts' up GEMM is priced by the engine's weight-only MoE fit (expert_fits.WEIGHT_ONLY_MOE),
    whose rows time the activation inside the layer (session 65): vLLM's fused_marlin_moe runs moe_align_block_size,
    the gate+up Marlin GEMM, the activation (silu_and_mul / swigluoai_and_mul), the down GEMM and moe_sum in one call
    (fused_moe/fused_marlin_moe.py), and aiconfigurator's collector times that call whole (collector/vllm/
    collect_moe.py: fused_experts, or the FusedMoE module for MXFP4), so a separate activation op counts it twice."""
    from .expert_fits import WEIGHT_ONLY_MOE, expert_fit_engine, moe_fit_dtype
    from .kernel_models.moe import has_moe_fit
    for op in ops:
        if op.role == OpRole.EXPERT_UP and op.shape.groups != 1.0:
            fit = expert_fit_engine(op, gpu, engine)
            dtype = moe_fit_dtype(op, gpu, fit)
            return dtype == WEIGHT_ONLY_MOE and has_moe_fit(dtype, gpu.arch, fit)
    return False
