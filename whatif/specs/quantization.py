"""Quantization schemes as the engines and checkpoints name them (`--quantization`): what each stores and runs.

A scheme fixes the linear layers' weight dtype, the GEMMs' activation dtype and the scale bytes the format
carries; the KV cache is the engine's separate `--kv-cache-dtype`. The dtype flags (--weight-dtype, --dtype)
stay for what-ifs; a scheme is what `vllm serve --quantization` or a checkpoint's quantization_config runs.
How each GEMM is priced (a fitted kernel or the mechanism) is the scheme's `pricing`, shown with the result.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import WhatifError, closest


@dataclass(frozen=True)
class Scheme:
    """A quantization scheme as the engines name it: stored weight and GEMM input dtypes, group, scales."""

    name: str
    weight: str              # dtype of the stored linear-layer weights
    activation: str          # dtype of the GEMM input (16-bit: weight-only)
    group: int               # weights per scale (0: per-tensor or per-channel, negligible bytes)
    scale_bytes: float       # bytes of one group's scales (and zero point)
    label: str               # what it is, in one phrase
    pricing: str             # how its GEMMs are priced: fitted kernels or the mechanism (assumed)
    block_k: int = 0         # K-block of the fp8 block scales (DeepSeek's 128x128): scale promotion per block
    vllm: str = ""           # vLLM's --quantization value ('' : read from the checkpoint's quantization_config)
    sglang: str = ""         # SGLang's --quantization value
    checkpoint: str = ""     # what kind of checkpoint the engines need (empty: any 16-bit checkpoint)
    group_flag: bool = True  # int schemes: --weight-group-size sets the group (False: the checkpoint fixes it)

    def scale_bytes_per_weight(self, group_size: int) -> float:
        """Scale bytes per stored weight; int schemes use the precision's group size (--weight-group-size)
        unless the format fixes its own (w4a16: Kimi-K2.5's group of 32)."""
        group = group_size if self.weight in ("int4", "int8") and self.group_flag else self.group
        return self.scale_bytes / group if group else 0.0


SCHEMES = {s.name: s for s in (
    Scheme("fp8", "fp8", "fp8", 0, 0.0, "W8A8 FP8, per-tensor scales",
           "fitted fp8 GEMM (dynamic per-tensor activation quantization included)",
           vllm="fp8", sglang="fp8"),
    Scheme("fp8-block", "fp8", "fp8", 128 * 128, 4.0,
           "W8A8 FP8, DeepSeek-V3's 128x128 weight blocks, 1x128 activation groups",
           "fp8 GEMM fit plus the mechanism: per-128-K-block scale promotion on the CUDA cores and a one-pass "
           "per-token-group quantize (no block-scale fit; assumed)", block_k=128,
           checkpoint="an FP8 block-quantized checkpoint (quantization_config weight_block_size [128, 128])"),
    Scheme("nvfp4", "fp4", "fp4", 16, 1.0, "W4A4 NVFP4, an E4M3 scale per 16 values",
           "fitted NVFP4 GEMM (activation quantization included); needs an fp4 tensor-core peak",
           vllm="modelopt_fp4", sglang="modelopt_fp4", checkpoint="an NVFP4 checkpoint (ModelOpt)"),
    # An NVFP4 checkpoint on a GPU with no NVFP4 MMA (AMD CDNA 3 / CDNA 4: roofline/native_formats.py): the same
    # bytes, dequantized to 16 bits in the GEMM (vLLM's ROCm emulation backend; the activations' NVFP4
    # quantize-dequantize is a 16-bit elementwise pass, not priced)
    Scheme("nvfp4-w4a16", "fp4", "bf16", 16, 1.0,
           "NVFP4 weights (an E4M3 scale per 16) dequantized to 16-bit in the GEMM, 16-bit activations",
           "16-bit GEMM fit plus the mechanism: weights dequantized in the kernel, as vLLM's NVFP4 emulation on "
           "GPUs without NVFP4 MMAs (no fit; assumed)",
           vllm="modelopt_fp4", checkpoint="an NVFP4 checkpoint (ModelOpt)"),
    Scheme("mxfp4", "fp4", "bf16", 32, 1.0, "MXFP4 weights (an E8M0 scale per 32), 16-bit activations",
           "16-bit GEMM fit plus the mechanism: weights dequantized in the kernel (no MXFP4 fit; assumed)",
           vllm="mxfp4", sglang="mxfp4", checkpoint="an MXFP4 checkpoint (e.g. gpt-oss)"),
    # AMD Quark's OCP MX checkpoints (e.g. amd/DeepSeek-R1-0528-MXFP4): weights and activations MXFP4, the format
    # CDNA 4's scaled MFMA takes natively (roofline/native_formats.py); vLLM reads them as --quantization quark
    Scheme("mxfp4-w4a4", "fp4", "fp4", 32, 1.0, "W4A4 MXFP4 (OCP MX: an E8M0 scale per 32 on weights and activations)",
           "fp4 GEMM at the fp4 peak (the architecture family's fp4 fit, activation quantization included); needs "
           "an fp4 matrix peak (CDNA 4, Blackwell)",
           vllm="quark", checkpoint="an OCP MX checkpoint (AMD Quark, W-MXFP4 A-MXFP4)"),
    Scheme("awq", "int4", "bf16", 128, 2.5, "W4A16 AWQ, an fp16 scale and a 4-bit zero per group",
           "16-bit GEMM fit plus the mechanism: Marlin-style in-kernel dequantization (no int4 fit; assumed)",
           vllm="awq_marlin", sglang="awq_marlin", checkpoint="an AWQ checkpoint"),
    Scheme("gptq", "int4", "bf16", 128, 2.5, "W4A16 GPTQ, an fp16 scale and a 4-bit zero per group",
           "16-bit GEMM fit plus the mechanism: Marlin-style in-kernel dequantization (no int4 fit; assumed)",
           vllm="gptq_marlin", sglang="gptq_marlin", checkpoint="a GPTQ checkpoint"),
    Scheme("w4a16", "int4", "bf16", 32, 2.0,
           "W4A16 INT4 weights, compressed-tensors pack-quantized, a bf16 scale per 32 (symmetric, no zero point)",
           "16-bit GEMM fit plus the mechanism: Marlin-style in-kernel dequantization (no int4 fit; assumed)",
           checkpoint="a compressed-tensors INT4 checkpoint (e.g. moonshotai/Kimi-K2.5: group_size 32, symmetric)",
           group_flag=False),
    Scheme("w8a16", "int8", "bf16", 128, 2.0, "W8A16 int8 weights, an fp16 scale per group",
           "16-bit GEMM fit plus the mechanism: in-kernel dequantization (no int8 fit; assumed)",
           vllm="gptq_marlin", sglang="gptq_marlin", checkpoint="an 8-bit GPTQ / compressed-tensors W8A16 checkpoint"),
)}


def scheme(name: str, where: str = "--quantization") -> Scheme:
    if name not in SCHEMES:
        raise WhatifError(f"{where}: unknown quantization {name!r}{closest(name, SCHEMES)}; "
                          f"valid: {', '.join(SCHEMES)}")
    return SCHEMES[name]


# The module classes a precision can differ by (a checkpoint's ignore list maps onto them): attention's input
# projections (Q, K, V, MLA's latent projections, a linear-attention layer's), its output projection, dense MLPs,
# routed experts, shared experts. The router and the LM head stay 16-bit (the engines' quantized linear methods
# cover LinearBase and FusedMoE layers; the LM head is a vocab-parallel embedding they leave in 16 bits).
MODULE_CLASSES = ("attention", "attention_out", "dense_mlp", "experts", "shared_experts")
UNQUANTIZED = "none"     # a module class left 16-bit


def module_table(raw) -> tuple:
    """((class, scheme or 'none'), ...) from a mapping or pairs, each checked; sorted, so equal tables compare equal."""
    pairs = raw.items() if isinstance(raw, dict) else raw
    try:
        pairs = [(c, n) for c, n in pairs]
    except (TypeError, ValueError):
        raise WhatifError(f"precision.modules: {raw!r}; valid: a mapping of module class to scheme, e.g. "
                          "{attention: none}") from None
    for cls, name in pairs:
        if cls not in MODULE_CLASSES:
            raise WhatifError(f"precision.modules: unknown module class {cls!r}; valid: {', '.join(MODULE_CLASSES)}")
        if name != UNQUANTIZED:
            scheme(name, f"precision.modules.{cls}")
    return tuple(sorted(pairs))
