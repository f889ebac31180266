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
scheme is priced as `nvfp4-w4a16` (specs/quantization.py), with a note naming why.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..roofline.config import Precision

NVFP4 = "nvfp4"
NVFP4_EMULATED = "nvfp4-w4a16"
EMULATION_SOURCES = "vllm-project/vllm#35733, #35737, #44667"

# Architectures with no NVFP4 MMA, and what their matrix cores do run at 8 bits and below (the profiles' peaks).
NO_NVFP4_MMA = {
    "cdna3": "CDNA 3 has no FP4 matrix instruction; its lowest are FNUZ fp8 and int8",
    "cdna4": "CDNA 4's scaled MFMA takes MXFP4 / MXFP6 / OCP fp8 with an E8M0 scale per 32, not NVFP4's E4M3 per 16",
}


def emulation_note(arch: str) -> str:
    """Why an NVFP4 checkpoint runs 16-bit math on this architecture, and how it is priced, in one phrase."""
    return (f"NVFP4 has no matrix instruction here ({NO_NVFP4_MMA[arch]}): vLLM ROCm dequantizes its weights to bf16 "
            f"in the GEMM ({EMULATION_SOURCES}), priced at the bf16 peak with NVFP4's weight bytes")


def native_precision(prec: Precision, arch: str) -> Precision:
    """`prec` with each NVFP4 scheme (the linear layers', the experts', a module table's) run as the engines run it
    on `arch`: unchanged where the GPU has an NVFP4 MMA, else `nvfp4-w4a16` with the reason in its source."""
    if arch not in NO_NVFP4_MMA:
        return prec
    names = (prec.quantization, prec.expert_quantization, *(name for _, name in prec.modules))
    if NVFP4 not in names:
        return prec

    def run(name: str) -> str:
        return NVFP4_EMULATED if name == NVFP4 else name

    note = emulation_note(arch)
    activation = "bf16" if prec.quantization == NVFP4 else prec.activation
    return replace(prec, quantization=run(prec.quantization), activation=activation,
                   expert_quantization=run(prec.expert_quantization),
                   modules=tuple((cls, run(name)) for cls, name in prec.modules),
                   source=f"{prec.source}; {note}" if prec.source else note)
