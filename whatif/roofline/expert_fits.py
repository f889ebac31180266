"""Which fused-MoE fit block (data/moe_fit.yaml) prices an expert GEMM: the engine whose rows measured the kernel
that runs it, and the dtype of that kernel's fit."""
from __future__ import annotations

import math
from functools import lru_cache

from .kernel_models.moe import has_moe_fit
from .ops import Op, OpRole


WEIGHT_ONLY_MOE = "w4a16"   # the fused-MoE fit block of an engine's weight-only (in-kernel dequant) experts
MXFP4_MOE = "mxfp4"         # ... of its MXFP4-weight, 16-bit-activation experts (gpt-oss's checkpoint as stored)
# fit engine -> the tensor-core dtype its compute_eff is a fraction of, where not the op's: the TRTLLM-Gen MXFP4 x
# MXFP8 MoE runs fp8 MMAs (validate/moe_fit.DTYPE_BYTES w4a8_mxfp4_mxfp8) under the nvfp4 stand-in's fp4 ops
FIT_PEAK_DTYPE = {"trtllm_gen_mxfp8": "fp8"}
# fit engine -> the alignment its kernels' weights are padded to, hidden size and per-GPU intermediate size alike
# (session 62): the engines lay MXFP4 experts out for the TRTLLM-Gen MoE zero-padded to multiples of 256 (vLLM
# quantization/mxfp4.py Mxfp4MoEMethod.create_weights under VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8: round_up(
# intermediate_size_per_partition, 256), round_up(hidden_size, 256); SGLang's mxfp4.py on SM100 with FlashInfer the
# same; TensorRT-LLM's weight_alignment 256 where hidden % 256 != 0), so gpt-oss's 2880 runs as 3072 and a TP8
# slice of 360 as 512: the kernel computes and reads the padding
FIT_WEIGHT_ALIGNMENT = {"trtllm_gen_mxfp8": 256, ("sglang", "fp8"): 128}
# fit engine -> bytes per weight element of its kernel, where the op's stand-in dtype carries others (session 69 N):
# MXFP4 is a 4-bit E2M1 value plus an E8M0 scale per 32 elements (validate/moe_fit.DTYPE_BYTES w4a8_mxfp4_mxfp8, the
# bytes the fit was fitted at), where the nvfp4 stand-in op carries an fp8 scale per 16 (0.5625)
FIT_WEIGHT_BYTES = {"trtllm_gen_mxfp8": 0.5 + 1.0 / 32}
# ("sglang", "fp8") (session 62 P): SGLang's B200 block-FP8 experts (FlashInfer's TRTLLM-Gen MoE, 128x128 weight
# scales) run a per-GPU intermediate slice under 128 as 128: aiconfigurator's moe table (sglang 0.5.14 fp8_block, b200,
# EP 1) stops falling at 128 per GPU (768 x TP8 = 96 and TP16 = 48, 512 x TP4 = 128 and TP8 = 64, 2048 x TP16 and TP32:
# each pair within 2% at 16-8,192 tokens), where the unpadded model halved them; hidden sizes are multiples of 128.


# (hidden, per-GPU intermediate) alignment of MXFP4 experts run on vLLM's Marlin MoE (session 65): Mxfp4MoEMethod.
# create_weights under Mxfp4Backend.MARLIN (VLLM_MXFP4_USE_MARLIN=1, gptoss_fp4_h100.sh) pads them because "the moe
# marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0": round_up(hidden_size, 256),
# round_up(intermediate_size_per_partition, 128) (vLLM quantization/mxfp4.py); gpt-oss's 2880 runs as 3072, its TP8
# slice 360 as 384. The INT4 rows the weight-only fit is fitted on (7168 x 2048 / moe_tp) need no padding.
MARLIN_MXFP4_ALIGNMENT = (256, 128)


def fit_alignment(fit: str, dtype: str) -> int:
    """The weight alignment of fit `fit`'s kernel for whatif dtype `dtype` (FIT_WEIGHT_ALIGNMENT; 1: none)."""
    return FIT_WEIGHT_ALIGNMENT.get((fit, dtype), FIT_WEIGHT_ALIGNMENT.get(fit, 1))


def aligned(size: float, alignment: int) -> float:
    """`size` rounded up to a multiple of `alignment` (1: unchanged)."""
    return float(math.ceil(size / alignment) * alignment) if alignment > 1 else float(size)


def padded_nk(op: Op, fit: str, dtype: str | None = None) -> tuple[float, float]:
    """(n, k) of an expert GEMM as the fused-MoE fit `fit`'s kernels run it (of whatif dtype `dtype`, None: the
    op's): the op's own, or padded per FIT_WEIGHT_ALIGNMENT (a gated gate+up GEMM's N is two intermediate halves,
    each padded)."""
    a = fit_alignment(fit, dtype or op.dtype)
    n, k = op.shape.n, op.shape.k
    if op.weight_only_kernel and op.fp4_weights and (dtype or op.dtype) == WEIGHT_ONLY_MOE:
        return marlin_mxfp4_nk(op)
    if a == 1:
        return n, k
    halves = 2 if op.role == OpRole.EXPERT_UP and op.name == "experts_gate_up" else 1
    return halves * aligned(n / halves, a), aligned(k, a)


def marlin_mxfp4_nk(op: Op) -> tuple[float, float]:
    """(n, k) of an MXFP4 expert GEMM on vLLM's Marlin MoE: hidden padded to 256, the per-GPU intermediate to 128
    (MARLIN_MXFP4_ALIGNMENT; each half of a gated gate+up GEMM's N)."""
    hidden, inter = MARLIN_MXFP4_ALIGNMENT
    n, k = op.shape.n, op.shape.k
    if op.role == OpRole.EXPERT_DOWN:
        return aligned(n, hidden), aligned(k, inter)
    halves = 2 if op.role == OpRole.EXPERT_UP and op.name == "experts_gate_up" else 1
    return halves * aligned(n / halves, inter), aligned(k, hidden)


def fit_peak_dtype(op: Op, fit: str) -> str:
    """The dtype whose datasheet peak the fused-MoE fit `fit` prices `op`'s math at."""
    return FIT_PEAK_DTYPE.get(fit, op.dtype)


def moe_fit_dtype(op: Op, gpu, engine: str) -> str:
    """The fused-MoE fit an expert GEMM is priced by: its dtype's, but 16-bit math over integer weight-only weights
    (`int_weights`: INT4/INT8, which vLLM's compressed-tensors WNA16, GPTQ and AWQ MoE methods run through
    fused_marlin_moe, mma.sync tiles rather than the bf16 MoE's kernels) takes the engine's weight-only MoE fit where
    it has one. MXFP4 weights beside 16-bit activations (`fp4_weights`) take the engine's MXFP4 MoE fit where it has
    one (session 53: TensorRT-LLM's on Hopper, fitted on aiconfigurator's w4a16_mxfp4 moe rows of its MXFP4 MoE; the
    16-bit fit had priced those x0.61), else the 16-bit fit: vLLM's default MXFP4 kernels (OAI Triton on Hopper,
    FlashInfer's MXFP4 x bf16 on Blackwell) measure x0.78-1.07 (Hopper) and x0.63 (Blackwell) of it, and a fit of
    their own rows priced the TP-sharded decode rows 1.5x high (validate/moe_fit.py FITS). MXFP4 experts a deployment
    runs on Marlin (`weight_only_kernel`, moe_kernels marlin) take the weight-only fit, as INT4 ones do."""
    if op.dtype in ("bf16", "fp16"):
        if (op.int_weights or op.weight_only_kernel) and _weight_only_moe_fit(gpu.arch, engine):
            return WEIGHT_ONLY_MOE
        if op.fp4_weights and _mxfp4_moe_fit(gpu.arch, engine):
            return MXFP4_MOE
    return op.dtype


# (engine, architecture) -> the engine whose corpus rows measured the fused-MoE kernel `engine` runs for fp8 experts
# with 128x128 block scales there. vLLM on Blackwell: its fp8 MoE oracle (model_executor/layers/fused_moe/oracle/
# fp8.py) tries FLASHINFER_TRTLLM first, whose experts (experts/trtllm_fp8_moe.py, TrtLlmFp8Experts; the modular one
# for routings the fused router lacks, MiniMax-M2's sigmoid + bias) call FlashInfer's trtllm_fp8_block_scale_(routed_)
# moe with Fp8QuantizationType.DeepSeekFp8: the kernel SGLang's flashinfer_trtllm MoE runner calls, measured as
# sglang_flashinfer_trtllm_moe fp8_block (the sglang/blackwell/fp8 fit). vLLM's own fp8 fit is ModelOpt's per-tensor
# kernel (trtllmfp8expertsmonolithic), a different kernel.
# vLLM on Hopper under expert parallelism (session 54): the same oracle's "On Hopper for Block Fp8, prefer Triton for
# TP and FI CUTLASS for EP" (ep_size > 1 moves FLASHINFER_CUTLASS to the front, vllm#34249): FlashInfer's
# cutlass_fused_moe, TensorRT-LLM's CUTLASS MoE, measured as TensorRT-LLM's moe_torch_flow_cutlass fp8_block rows
# (the flashinfer_cutlass/hopper/fp8 fit, validate/moe_fit.FITS). Without EP (Triton) the per-class model stays.
BLOCK_FP8_MOE_ENGINE = {("vllm", "blackwell"): "sglang", ("vllm", "hopper"): "flashinfer_cutlass"}
BLOCK_FP8_EP_ONLY = {("vllm", "hopper")}   # (engine, arch) whose kernel above is the expert-parallel layout's only


def expert_fit_engine(op: Op, gpu, engine: str) -> str:
    """The engine whose fused-MoE fit prices an expert GEMM: `engine`'s own, but for block-scaled fp8 experts an
    engine runs through a kernel measured under another (BLOCK_FP8_MOE_ENGINE; BLOCK_FP8_EP_ONLY: under EP only)."""
    if op.block_scaled and op.dtype == "fp8" and (op.expert_parallel or (engine, gpu.arch) not in BLOCK_FP8_EP_ONLY):
        other = BLOCK_FP8_MOE_ENGINE.get((engine, gpu.arch))
        if other is not None and has_moe_fit("fp8", gpu.arch, other):
            return other
    return engine


@lru_cache(maxsize=64)
def _mxfp4_moe_fit(arch: str, engine: str) -> bool:
    from .kernel_models import cdna   # (the measured kernels are CUDA's)
    return not cdna.is_cdna(arch) and has_moe_fit(MXFP4_MOE, arch, engine)


@lru_cache(maxsize=64)
def _weight_only_moe_fit(arch: str, engine: str) -> bool:
    from .kernel_models import cdna   # Marlin is CUDA-only: vLLM on ROCm runs its Triton GPTQ/AWQ MoE kernel
    return not cdna.is_cdna(arch) and has_moe_fit(WEIGHT_ONLY_MOE, arch, engine)


def stand_in_weight_excess(op: Op, fit: str) -> float:
    """HBM bytes an expert GEMM's op carries over its fit's kernel's weights (FIT_WEIGHT_BYTES; 0 where none): its
    touched experts' k x n weights at the op dtype's bytes less the kernel's."""
    from .kernel_models.params import DTYPE_BYTES
    if fit not in FIT_WEIGHT_BYTES or op.dtype not in DTYPE_BYTES:
        return 0.0
    s = op.shape
    return max(s.groups * s.n * s.k * (DTYPE_BYTES[op.dtype] - FIT_WEIGHT_BYTES[fit]), 0.0)
