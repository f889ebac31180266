"""A checkpoint's 4-bit format on a GPU whose matrix cores do not take it: priced as the engines run it.

NVFP4 (E2M1 values, an E4M3 scale per 16, a per-tensor fp32 scale) has an MMA on Blackwell only. AMD's CDNA 3
(MI300X, MI325X) has no FP4 matrix instruction; CDNA 4 (MI350X, MI355X) runs MXFP4 / MXFP6 / OCP fp8 through its
scaled MFMA, whose block scale is OCP MX's E8M0 per 32 values, so an NVFP4 operand has no native path on either:
ROCm/aiter#4021 (2026-07, a maintainer: "there's no native hardware support for that" on gfx950) and
meta-pytorch/MSLK#379 (2026-06: "NVFP4's 16-element E4M3 block scales are not compatible with the native MXFP4
scaled-MFMA, so there is no native path for NVFP4 on either GPU"). vLLM runs NVFP4 checkpoints on both through its
emulation backend, the default on ROCm: dense layers vllm-project/vllm#35733 (merged 2026-03, "MI300, MI355X"),
MoE #35737 (merged, "H100/MI300/MI350"), the MoE weights dequantized inside the Triton GEMM since #44667 (merged
2026-06, "dequantized for MOE emulation in BF16"): the weights stay NVFP4 in HBM and the MMAs are 16-bit. So such a
scheme is priced as `nvfp4-w4a16` (specs/quantization.py), with a note naming why. Likewise Quark's W4A4 MXFP4
(`mxfp4-w4a4`) runs natively at CDNA 4's fp4 peak and as MXFP4 weights over 16-bit math on CDNA 3.
"""
from __future__ import annotations

from dataclasses import replace

from .config import Precision

# scheme -> (the scheme it runs as where the GPU has no MMA for it, the sources of how the engines run it)
EMULATED = {
    "nvfp4": ("nvfp4-w4a16", "vllm-project/vllm#35733, #35737, #44667"),
    # Quark's OCP MX W4A4 on CDNA 3: vLLM's OCP MX emulation (quark_moe.py / utils/mxfp4_utils.py dequant_mxfp4,
    # quant_dequant_mxfp4: weights dequantized, activations quantize-dequantized, 16-bit matmul; #35737 ran
    # amd/Qwen3.5-35B-A3B-MXFP4 on MI325X through it)
    "mxfp4-w4a4": ("mxfp4", "vllm-project/vllm#35737, vllm utils/mxfp4_utils.py"),
}
# scheme -> {architecture with no MMA for it: why}; the architectures' own peaks are the profiles'
NO_MMA = {
    "nvfp4": {
        "cdna3": "CDNA 3 has no FP4 matrix instruction; its lowest are FNUZ fp8 and int8",
        "cdna4": "CDNA 4's scaled MFMA takes MXFP4 / MXFP6 / OCP fp8 with an E8M0 scale per 32, not NVFP4's E4M3 "
                 "per 16",
    },
    "mxfp4-w4a4": {"cdna3": "CDNA 3 has no FP4 matrix instruction; its lowest are FNUZ fp8 and int8"},
}


def emulation_note(name: str, arch: str) -> str:
    """Why scheme `name` runs 16-bit math on this architecture, and how it is priced, in one phrase."""
    run, sources = EMULATED[name]
    return (f"{name} has no matrix instruction here ({NO_MMA[name][arch]}): vLLM ROCm dequantizes its weights to "
            f"bf16 in the GEMM ({sources}), priced as {run}: the bf16 peak with its 4-bit weight bytes")


def native_precision(prec: Precision, arch: str) -> Precision:
    """`prec` with each scheme the GPU has no MMA for (the linear layers', the experts', a module table's) run as
    the engines run it on `arch` (EMULATED), the reason in its source; unchanged where the GPU runs it natively."""
    names = {prec.quantization, prec.expert_quantization, *(name for _, name in prec.modules)}
    swapped = [name for name in NO_MMA if name in names and arch in NO_MMA[name]]
    if not swapped:
        return prec

    def run(name: str) -> str:
        return EMULATED[name][0] if name in swapped else name

    note = "; ".join(emulation_note(name, arch) for name in swapped)
    activation = "bf16" if prec.quantization in swapped else prec.activation
    return replace(prec, quantization=run(prec.quantization), activation=activation,
                   expert_quantization=run(prec.expert_quantization),
                   modules=tuple((cls, run(name)) for cls, name in prec.modules),
                   source=f"{prec.source}; {note}" if prec.source else note)
