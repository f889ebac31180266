"""The fitted kernel models (roofline/kernel_models/) applied to an Op of a forward pass.

Long because: the one dispatch from an op to its kernel model, each op class's pricing a few short functions over
the shared fit lookups, ceilings and ridge.

The default efficiency times GEMMs, attention and collectives with the kernel models fitted on the
aiconfigurator corpus (parameters per architecture x dtype x engine, per link generation), and every
other op with the per-class model of efficiency.py. The models are written for the shapes the corpus
measured; here they take the op's own work, so a technique that changes an op's FLOPs or bytes
(a sparse prefill, a compressed KV cache, a weight format) changes its time through the same terms:
- GEMM: tile/wave/split-K compute of (m, n, k) from the model; memory = the op's HBM bytes;
- prefill attention: the causal-tile model for an equivalent dense causal batch of the op's
  sequences whose pairs equal the op's pairs (chunked prefill and sparse pairs included), memory =
  the op's HBM bytes; its per-token cost counts the op's new tokens (fitted on vLLM rows that include
  the KV-cache write, whose bytes the graph's own kv write op carries: that fixed cost is counted in
  both, a known small overlap); over a cached context (a chunk,
  a verify pass) never less than the decode model's fixed costs and streaming of the same op's bytes;
- decode attention: the model at the op's sequences and longest context (split-KV work items, SM
  occupancy, GQA rows padded to the tensor-core tile), its terms rescaled to the op's FLOPs and bytes;
- collectives: NCCL's protocols / NVLS / the engine's custom all-reduce (collective_timing.py);
- grouped MoE expert GEMMs (bf16; fp8 and NVFP4 where the engine's own MoE kernels were measured): the fused-MoE
  model's fitted efficiencies (data/moe_fit.yaml, per engine x architecture x dtype: moe.moe_params says which
  block and why) on the op's own FLOPs, with each touched
  expert's rows padded to the grouped GEMM's M tile, and its HBM bytes, by the fit's regime of the op's rows
  per touched expert (small-M: decode); each of the two GEMMs of the fused layer
  takes half the fitted floor (the activation between them is priced per class). Expert GEMMs no fused-MoE
  fit covers (TensorRT-LLM's FP8/NVFP4 on B200, quantized experts on Hopper) with more than SMALL_M rows per
  touched expert: the engine's dense GEMM fit at their tile-padded rows (dense_expert_seconds); decode-size
  ones the per-class model. The fit's warm-L2 speed-up is a property of the corpus's back-to-back replays,
  not of a model whose layers evict each other's experts, and is not applied.
- absorbed MLA decode (DeepSeek): the MLA decode fit (kernel_models/mla.py) at the op's sequences,
  longest context and latent width, terms rescaled to the op's FLOPs and bytes.
- expanded MLA prefill under TensorRT-LLM and SGLang: the MLA prefill fit (the prefill form at head_dim
  (d_qk + d_v)/2, bf16 peak as fitted); their collectors time the attention call on already expanded Q/K/V
  (aiconfigurator collector/trtllm/collect_mla*.py, collector/sglang/collect_mla.py), so the rows hold no
  kv_b_proj, the graph's own op. vLLM's MLA rows time the whole MLA call and stay per-class.
An op the models do not cover (MLA prefill elsewhere, a dtype without a fit: `covers` says which) is timed by
the per-class model.
"""
from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from .kernel_models.decode_attention import MHA_FALLBACK_MODEL, decode_model, decode_parts
from .kernel_models.gemm import gemm_parts
from .engines import DEFAULT_ENGINE
from .kernel_models.mla import mla_prefill_head_dim
from .kernel_models.moe import (SMALL_M, TILE_N, finalize_seconds, fused_gemm_time, has_moe_fit, moe_params,
                                moe_regime, tile_m)
from .expert_fits import (BLOCK_FP8_MOE_ENGINE, expert_fit_engine, fit_peak_dtype, moe_fit_dtype, padded_nk,
                          stand_in_weight_excess)
from .block_promotion import dense_promotion_seconds, promotion_seconds
from .weight_only_gemv import GEMV_FLOOR_S, gemv_compute_seconds, runs_gemv
from .kernel_models.params import DTYPE_BYTES, Ceilings, ceilings, combine, fit_dtype, params_for
from .kernel_models.prefill_attention import prefill_parts
from ..specs.sfu import DEFAULT_EXP2_PER_SM_CLOCK
from .op_shapes import AttentionShape, GemmShape
from ..specs.op_kinds import OpRole
from .ops import L2_REREAD, Op, OpClass

GEMM_DTYPES = ("bf16", "fp16", "fp8", "fp4", "fp32")
# An fp32 GEMM (cuBLAS SGEMM on the CUDA cores at torch's 'highest' precision: MiniMax-M2's router) takes the 16-bit
# GEMM fit's floor, memory efficiency and large-M compute efficiency at the fp32 peak, with no tensor-core M tiles:
# no fp32 GEMM was measured (assumed).
FP32_GEMM_FIT = "bf16"
EXPERT_GEMMS = (OpRole.EXPERT_UP, OpRole.EXPERT_DOWN)
FUSED_MOE_GEMMS = 2   # the fused layer's fitted floor is shared by its two grouped GEMMs
# An attention op carries its scenario's activation dtype; fp8 activations quantize only the GEMMs' inputs,
# so an fp8 op's attention is priced by the same fits (at the compute dtype attention_peak_dtype gives).
ATTENTION_DTYPES = ("bf16", "fp16", "fp8")


# Engines whose MLA context rows are the attention kernel alone (RoPE and the latent's cache write included,
# as their kernels fuse them): TRT-LLM's collector passes expanded q, k, v to attn.forward, SGLang's to
# RadixAttention (aiconfigurator collector/trtllm/collect_mla_1_1rc2.py, collector/sglang/collect_mla.py).
MLA_PREFILL_ENGINES = ("trtllm", "sglang")


def covers(op: Op, gpu, engine: str | None = None) -> bool:
    """Whether a kernel model prices this op as `engine` runs it (else the per-class model does); `engine`: the
    efficiency's, where a fit's coverage depends on it (MoE, MLA prefill; None: the default engine's MoE fits)."""
    if op.op_class == OpClass.GEMM:
        if op.shape.groups != 1.0:   # (the fit expert_gemm_seconds prices it by: another engine's kernel's, maybe)
            return (op.role in EXPERT_GEMMS and op.dtype in gpu.peak
                    and (has_fused_fit(op, gpu, engine or DEFAULT_ENGINE) or dense_fit_prices(op)))
        return op.dtype in GEMM_DTYPES and op.dtype in gpu.peak
    if is_mla_decode(op) or is_mla_prefill(op):
        s = op.shape
        return (s.sequences > 0 and s.heads > 0 and s.pairs > 0 and op.dtype in ATTENTION_DTYPES
                and op.dtype in gpu.peak and (is_mla_decode(op) or engine in MLA_PREFILL_ENGINES))
    if op.op_class in (OpClass.ATTENTION_PREFILL, OpClass.ATTENTION_DECODE):
        s = op.shape
        return (isinstance(s, AttentionShape) and s.pairs > 0 and s.heads > 0 and s.kv_heads > 0
                and s.d_qk == s.d_v and s.sequences > 0
                and op.dtype in ATTENTION_DTYPES and op.dtype in gpu.peak)
    return False


# Engines whose measured context kernels over an fp8 cache ran 16-bit attention math, so their fp8-cache prefill fit
# was made at the bf16 peak (validate/kernel_fit.py prices each prefill row at its attn_dtype): every vLLM context row
# over an fp8 cache in the corpus's attention.parquet records attn_dtype bfloat16 (B200 FlashInfer TRT-LLM-gen
# prefill, H100 FA3, L40S FlashInfer), and on B200 it times within ~10% of the same shape over a 16-bit cache.
BF16_CONTEXT_ENGINES = frozenset({"vllm"})


def attention_peak_dtype(op: Op, engine: str | None = None) -> str:
    """The tensor-core dtype whose peak an attention fit prices `op` at, as the fitter did: a 16-bit op at
    its own; an fp8 op (fp8 GEMM activations) at the 16-bit peak for decode and MLA (validate/kernel_fit.py
    prices decode compute at bf16; MLA rows are bf16 attention), and for prefill at fp8 only over an fp8
    cache (TensorRT-LLM's and SGLang's fp8 context kernels read fp8 K/V; over a 16-bit cache attention runs
    16-bit even when the GEMMs run fp8) and not for `engine`s whose fp8-cache context rows ran 16-bit math
    (BF16_CONTEXT_ENGINES: their fit is at the bf16 peak). Every GPU with an fp8 peak has a bf16 one."""
    if op.dtype != "fp8":
        return op.dtype
    if op.op_class == OpClass.ATTENTION_PREFILL and kv_fit_dtype(op) == "fp8" and engine not in BF16_CONTEXT_ENGINES:
        return "fp8"
    return "bf16"


def is_mla_decode(op: Op) -> bool:
    """An absorbed MLA decode op: every query head over one shared latent (graph.py's attention_mla)."""
    return (op.role == OpRole.MLA_ATTENTION and op.op_class == OpClass.ATTENTION_DECODE
            and isinstance(op.shape, AttentionShape) and op.shape.kv_heads == 1 and op.shape.d_qk != op.shape.d_v)


def is_mla_prefill(op: Op) -> bool:
    """An expanded MLA prefill op: per-head K (d_qk) and V (d_v) expanded from the latent (graph.py)."""
    return (op.role == OpRole.MLA_ATTENTION and op.op_class == OpClass.ATTENTION_PREFILL
            and isinstance(op.shape, AttentionShape) and op.shape.kv_heads == op.shape.heads
            and op.shape.d_qk != op.shape.d_v)


# The models evaluate with numpy (the fitters pass whole columns); one scalar call costs ~0.1 ms, and a
# pass repeats the same shapes layer after layer and estimate after estimate, so the terms are memoized
# on plain numbers (a GPU's ceilings enter by value, so an edited profile never hits a stale entry).
# These terms are public: step_price/ prices a batch's attention from the same ones.
CACHE_SIZE = 1 << 16


def parts_ceilings(hbm_bw: float, sms: float, clock: float = 0.0,
                   exp2: float = DEFAULT_EXP2_PER_SM_CLOCK) -> Ceilings:
    """The ceilings the parts functions read besides the peak they are passed: HBM, the SM count and (prefill
    attention's exponential floor) the SM clock and its SFU exp2 results a clock."""
    return Ceilings("-", "-", {}, hbm_bw, sms, 0.0, clock, exp2)


@lru_cache(maxsize=CACHE_SIZE)
def gemm_terms(m, n, k, in_bytes, peak, hbm_bw, sms, params) -> tuple[float, float]:
    t_c, _, t_quant = gemm_parts(m, n, k, in_bytes, peak, parts_ceilings(hbm_bw, sms), params)
    return float(t_c), float(t_quant)


@lru_cache(maxsize=CACHE_SIZE)
def prefill_terms(b, length, heads, kv_heads, d, kv_bytes, peak, hbm_bw, sms, params,
                  clock=0.0, exp2=DEFAULT_EXP2_PER_SM_CLOCK) -> tuple[float, float]:
    t_c, t_m, _ = prefill_parts(b, length, heads, kv_heads, d, kv_bytes, 0, peak,
                                parts_ceilings(hbm_bw, sms, clock, exp2), params)
    return float(t_c), float(t_m)


@lru_cache(maxsize=CACHE_SIZE)
def decode_terms(b, ctx, heads, kv_heads, d, kv_bytes, peak, hbm_bw, sms, params) -> tuple[float, float, float]:
    t_c, t_m, fixed = decode_parts(b, ctx, heads, kv_heads, d, kv_bytes, 0, peak, parts_ceilings(hbm_bw, sms),
                                   params)
    return float(t_c), float(t_m), float(fixed)


def _scaled(model_s: float, actual: float, nominal: float, direct: float) -> float:
    """A model term rescaled to the op's own work (FLOPs or bytes) where a technique changed it; `direct`
    (the work at the fitted rate alone) where the model's nominal work is 0."""
    return model_s * actual / nominal if nominal > 0 and model_s > 0 else direct


def _ridge(t_c: float, t_m: float, p: float) -> float:
    return float(combine(t_c, t_m, p)) if max(t_c, t_m) > 0 else 0.0


def fitted(model: str, gpu, dtype: str, engine: str, overrides: dict | None = None):
    """The parameters of a kernel model: a calibration's own fit of (model, dtype) where it has one
    (fp16 is keyed as bf16, as the shipped fits are), else the engine's shipped fit (params_for)."""
    # a user's calibration of decode attention (one fit of their GPU's rows) serves both TRT-LLM decode kernels
    key = ("decode_attention" if model == MHA_FALLBACK_MODEL else model, fit_dtype(dtype))
    if overrides and key in overrides:
        return overrides[key]
    return params_for(model, gpu.arch, dtype, engine).params


def gemm_seconds(op: Op, gpu, engine: str, t_extra_memory: float = 0.0,
                 overrides: dict | None = None, t_extra_compute: float = 0.0) -> tuple[float, float, float, float]:
    """(time, compute, memory, fixed) seconds of a GEMM op; `t_extra_compute`: main-loop work serial with its
    tensor cores (block_promotion.py)."""
    p = fitted("gemm", gpu, FP32_GEMM_FIT if op.dtype == "fp32" else op.dtype, engine, overrides)
    c = ceilings(gpu)
    if op.dtype == "fp32":   # SIMT SGEMM: FP32_GEMM_FIT's rates, no tensor-core tiles
        t_c = op.flops / (c.peak_flops("fp32") * p.eff_large)
        t_m = max(op.hbm_bytes / (c.hbm_bw * p.mem_eff * op.bandwidth_share), t_extra_memory)
        return p.floor_s + _ridge(t_c, t_m, p.smooth), t_c, t_m, p.floor_s
    s = op.shape
    t_c, t_quant = gemm_terms(s.m, s.n, s.k, DTYPE_BYTES[op.dtype], c.peak_flops(op.dtype), c.hbm_bw, c.sms, p)
    gemv = runs_gemv(engine, s.m, op.int_weights)
    if gemv:   # TensorRT-LLM's CUDA-core GEMV below 5 rows, its measured floor (weight_only_gemv.py)
        t_c = gemv_compute_seconds(s.m, s.n, s.k, op.alu_ops, gpu.peak_flops("fp32"))
    elif op.alu_ops:   # CUDA-core work (in-kernel dequantization) beside the tensor cores
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    t_c += t_extra_compute
    t_m = max(op.hbm_bytes / (c.hbm_bw * p.mem_eff * op.bandwidth_share), t_extra_memory)
    fixed = (GEMV_FLOOR_S if gemv else p.floor_s) + input_quant_seconds(s.m, s.k, t_quant, op.input_quantized,
                                                                         op.static_input_scale, gpu, engine)
    return fixed + _ridge(t_c, t_m, p.smooth), t_c, t_m, fixed


_STATIC_QUANT: dict = {}


def input_quant_seconds(m, k, fitted_s: float, input_quantized: bool, static_scale: bool, gpu, engine: str) -> float:
    """Seconds quantizing a low-precision GEMM's input: none where its producer wrote it quantized; the measured
    scaling kernel alone (kernel_models/quantize.py, no absmax pass) where the scale is the checkpoint's static one
    (the fitted term times the corpus's dynamic quantizer: collect_gemm.py loads no input_scale); else the fit's."""
    if input_quantized:
        return 0.0
    if not static_scale or int(m) != m:
        return fitted_s
    key = (int(m), int(k), gpu.name, engine)
    if key not in _STATIC_QUANT:
        if len(_STATIC_QUANT) >= CACHE_SIZE:   # (one entry per token count: bounded like the lru caches here)
            _STATIC_QUANT.clear()
        from .kernel_models.quantize import quantize_seconds   # (here: its fits import numpy; a cold bf16 run none)
        _STATIC_QUANT[key] = quantize_seconds(int(m), int(k), gpu, engine, compute_scale=False)
    return _STATIC_QUANT[key]


def has_fused_fit(op: Op, gpu, engine: str) -> bool:
    """Whether a fused-MoE fit prices this expert GEMM as `engine` runs it (its own, or the kernels it borrows)."""
    fit = expert_fit_engine(op, gpu, engine)
    return has_moe_fit(moe_fit_dtype(op, gpu, fit), gpu.arch, fit)


def padded_expert_rows(op: Op) -> float:
    """A grouped expert GEMM's rows as its kernel runs them: each touched expert's rows padded to its M tile (the
    kernel's fixed one where the shape carries it: block_m)."""
    s = op.shape
    rows = s.m / s.groups
    tile = int(s.block_m) or tile_m(rows)
    return s.groups * math.ceil(rows / tile) * tile


def expert_gemm_seconds(op: Op, gpu, t_extra_memory: float = 0.0,
                        engine: str = DEFAULT_ENGINE) -> tuple[float, float, float, float]:
    """(time, compute, memory, fixed) seconds of a grouped expert GEMM: m routed rows over `groups`
    touched experts, each expert's rows padded to the M tile a tuned grouped GEMM picks (engine's fit)."""
    s = op.shape
    fit = expert_fit_engine(op, gpu, engine)
    dtype = moe_fit_dtype(op, gpu, fit)
    p = moe_params(gpu.arch, dtype, fit, moe_regime(s.m / s.groups))
    c = ceilings(gpu)
    padded = padded_expert_rows(op)
    n, k = padded_nk(op, fit, dtype)   # (the kernel's zero-padded weights: read and multiplied as the rest)
    t_c = 2.0 * padded * n * k / (c.peak_flops(fit_peak_dtype(op, fit)) * p.compute_eff)
    moved = (op.hbm_bytes - stand_in_weight_excess(op, fit)) * (n * k) / (s.n * s.k)   # the kernel's own bytes
    t_m = max(moved / (c.hbm_bw * p.memory_eff * op.bandwidth_share), t_extra_memory)
    # the launch grid's tiles (every slot's M tile x this GEMM's N tiles; the empty ones exit early)
    fixed = p.floor_s / FUSED_MOE_GEMMS + p.item_s * s.grid_m * math.ceil(n / TILE_N) / c.sms
    fixed += p.expert_s * s.groups / FUSED_MOE_GEMMS   # the fit's cost per touched expert, split like its floor
    # the down GEMM's bf16 per-slot output, read back by the finalize kernel, in the fit's form (moe.fused_gemm_time)
    fin = (finalize_seconds(s.m, n, c.hbm_bw * op.bandwidth_share, fit, dtype)
           if op.role == OpRole.EXPERT_DOWN and s.m / s.groups > SMALL_M else 0.0)
    if fin:
        return fixed + float(fused_gemm_time(t_c, t_m, fin, p)), t_c, t_m + fin / p.memory_eff, fixed
    return fixed + _ridge(t_c, t_m, p.smooth), t_c, t_m, fixed


# Expert GEMMs no fused-MoE fit covers, past the small-M (decode) regime, are priced by the engine's fitted dense GEMM
# model at their tile-padded rows (dense_expert_seconds); False: the per-class model prices them (as before).
DENSE_FIT_EXPERTS = True


def dense_fit_prices(op: Op) -> bool:
    """Whether the dense GEMM fit prices an expert GEMM no fused-MoE fit covers: more than SMALL_M routed rows per
    touched expert (prefill), a dtype the GEMM fit has; decode-size experts stay per-class."""
    s = op.shape
    return DENSE_FIT_EXPERTS and op.dtype in GEMM_DTYPES and s.m / s.groups > SMALL_M


def dense_expert_seconds(op: Op, gpu, engine: str, t_extra_memory: float = 0.0) -> tuple[float, float, float, float]:
    """(time, compute, memory, fixed) seconds of a grouped expert GEMM priced as one dense GEMM of its tile-padded
    rows (each touched expert's rows padded to the grouped GEMM's M tile, tile_m) at the engine's fitted dense GEMM
    efficiency, over the op's own HBM bytes (the touched experts' weights): the grouped kernel's large-M tiles run
    no faster than the dense kernels of its dtype measured in the corpus's gemm table. Block-scaled fp8 adds its
    K-block promotion, serial with the tensor cores (block_promotion.py: measured on the grouped kernels)."""
    s = op.shape
    rows = padded_expert_rows(op)
    return gemm_seconds(replace(op, shape=GemmShape(rows, s.n, s.k)), gpu, engine, t_extra_memory,
                        t_extra_compute=promotion_seconds(op, gpu, rows))


def fit_engine(op: Op, eff) -> str | None:
    """The engine whose kernel fits price `op`: the efficiency's, but for expert GEMMs its moe_engine where set
    (a deployment's MoE kernels measured under another engine: moe_kernels.py)."""
    if eff.moe_engine and op.op_class == OpClass.GEMM and op.shape.groups != 1.0:
        return eff.moe_engine
    return eff.engine


def op_seconds(op: Op, gpu, engine: str, t_extra_memory: float = 0.0,
               overrides: dict | None = None) -> tuple[float, float, float, float]:
    """(time, compute, memory, fixed) seconds of an op `covers` accepts, by its kernel model; `overrides`:
    a calibration's own kernel-model fits, (model, dtype) -> params. A mixed pass's attention op is its two
    kernels' sum (attention.mixed_op)."""
    parts = getattr(op.shape, "parts", ())
    if parts:
        each = [op_seconds(p, gpu, engine, t_extra_memory, overrides) for p in parts]
        return tuple(sum(t[i] for t in each) for i in range(4))
    if op.op_class == OpClass.GEMM:
        if op.bmm_fit:
            return absorb_bmm_seconds(op, gpu, engine)
        if op.shape.groups != 1.0:
            if has_fused_fit(op, gpu, engine):
                return expert_gemm_seconds(op, gpu, t_extra_memory, engine)
            return dense_expert_seconds(op, gpu, engine, t_extra_memory)
        return gemm_seconds(op, gpu, engine, t_extra_memory, overrides,
                            t_extra_compute=dense_promotion_seconds(op, gpu, engine))
    if is_mla_decode(op):
        return mla_decode_seconds(op, gpu, engine, kv_fit_dtype(op), t_extra_memory, overrides)
    if is_mla_prefill(op):
        return mla_prefill_seconds(op, gpu, engine, kv_fit_dtype(op), t_extra_memory, overrides)
    phase = prefill_seconds if op.op_class == OpClass.ATTENTION_PREFILL else decode_seconds
    return phase(op, gpu, engine, kv_fit_dtype(op), t_extra_memory, overrides)


def absorb_bmm_seconds(op: Op, gpu, engine: str) -> tuple[float, float, float, float]:
    """(time, compute, memory, fixed) of an absorbed-MLA 16-bit bmm by the engine's mla_bmm fit (the table of its
    own torch.bmm: aiconfigurator's mla_bmm_perf, kernel_source vllm_torch_bmm), `bmm_heads` heads of m / heads
    tokens each, K in and N out per head."""
    from .kernel_models.fitted_roofline import family_params, fitted_seconds
    from .kernel_models.mla_modules import mla_bmm_work
    s, c = op.shape, ceilings(gpu)
    heads = s.bmm_heads
    parts, items = mla_bmm_work(s.m / heads, heads, s.k, s.n, "bfloat16", c, False)
    p = family_params("mla_bmm", engine, c.arch)
    t = float(fitted_seconds(parts, items, c.sms, p))
    fixed = p.floor_s + p.item_s * items / c.sms
    return t, sum(x[0] for x in parts), sum(x[1] + x[2] for x in parts), fixed


def kv_fit_dtype(op: Op) -> str:
    """The KV dtype an attention fit is keyed by: fp8 for a cache of about a byte per element or less
    (fp8, int8, KIVI's 2/4 bits), else bf16."""
    return "fp8" if 0 < op.shape.kv_element_bytes <= 1.0 else "bf16"


def prefill_seconds(op: Op, gpu, engine: str, kv_dtype: str, t_extra_memory: float = 0.0,
                    overrides: dict | None = None):
    """(time, compute, memory, fixed) of a prefill attention op: the model's B = the op's sequences, each
    of the causal length L whose L(L+1)/2 pairs equal the op's pairs per sequence; compute and memory
    rescaled to the op's FLOPs and bytes; the per-token cost counts the op's new tokens."""
    s = op.shape
    model = decode_model(engine, s.heads, s.kv_heads)
    decode = fitted(model, gpu, kv_dtype, engine, overrides) if s.kv_bytes > 0 else None
    fits = (ceilings(gpu), fitted("prefill_attention", gpu, kv_dtype, engine, overrides), decode)
    return fitted_prefill_seconds(op, gpu, fits, t_extra_memory, engine)


def decode_seconds(op: Op, gpu, engine: str, kv_dtype: str, t_extra_memory: float = 0.0,
                   overrides: dict | None = None):
    """(time, compute, memory, fixed) of a decode attention op: the model at the op's sequences and longest
    context (which set its split-KV work items and SM occupancy), its compute and memory terms rescaled
    to the op's FLOPs and bytes (a compressed or sparsely read cache)."""
    fits = (ceilings(gpu), None, fitted(decode_model(engine, op.shape.heads, op.shape.kv_heads), gpu, kv_dtype, engine,
                                        overrides))
    return fitted_decode_seconds(op, gpu, fits, t_extra_memory)


def attention_fits(gpu, engine: str, kv_dtype: str, heads: float, kv_heads: float,
                   overrides: dict | None = None) -> tuple:
    """(Ceilings, prefill fit, decode fit) an attention op of `kv_dtype` and head layout is priced with: resolved
    once by a caller that prices many ops of one kind (the simulator), else per op."""
    return (ceilings(gpu), fitted("prefill_attention", gpu, kv_dtype, engine, overrides),
            fitted(decode_model(engine, heads, kv_heads), gpu, kv_dtype, engine, overrides))


def fitted_prefill_seconds(op: Op, gpu, fits: tuple, t_extra_memory: float = 0.0, engine: str | None = None):
    """prefill_seconds with the fits resolved (attention_fits); `engine`: the fits' engine (attention_peak_dtype)."""
    c, p, _ = fits
    s = op.shape
    b = s.sequences
    length = (math.sqrt(1.0 + 8.0 * s.pairs / b) - 1.0) / 2.0
    peak = c.peak_flops(attention_peak_dtype(op, engine))
    t_c, t_m = prefill_terms(b, length, s.heads, s.kv_heads, s.d_qk, s.kv_element_bytes, peak, c.hbm_bw, c.sms, p,
                             c.clock, c.exp2_per_clock)
    t_c = _scaled(t_c, op.flops, 4.0 * b * length * (length + 1) / 2.0 * s.heads * s.d_qk,
                  op.flops / (peak * p.compute_eff))
    if op.alu_ops:
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    t_m = max(op.hbm_bytes / (c.hbm_bw * p.mem_eff * op.bandwidth_share), t_extra_memory)
    fixed = p.floor_s + p.token_s * s.queries / c.sms
    total = fixed + _ridge(t_c, t_m, p.smooth)
    if s.kv_bytes > 0:   # over a cached context: never cheaper than the decode kernel streaming that cache
        _, _, t_stream, fixed_decode = fitted_decode_seconds(op, gpu, fits, t_extra_memory)
        if fixed_decode + t_stream > total:
            return fixed_decode + t_stream, t_c, t_stream, fixed_decode
    return total, t_c, t_m, fixed


def fitted_decode_seconds(op: Op, gpu, fits: tuple, t_extra_memory: float = 0.0):
    """decode_seconds with the fits resolved (attention_fits)."""
    c, _, p = fits
    s = op.shape
    b, ctx = s.sequences, max(s.max_context, 1.0)
    peak = c.peak_flops(attention_peak_dtype(op))
    t_c, t_m, fixed = decode_terms(b, ctx, s.heads, s.kv_heads, s.d_qk, s.kv_element_bytes, peak, c.hbm_bw, c.sms, p)
    t_c = _scaled(t_c, op.flops, 4.0 * b * ctx * s.heads * s.d_qk, op.flops / (peak * p.compute_eff))
    if op.alu_ops:
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    hbm, t_l2 = l2_reread_split(op, gpu)
    t_m = _scaled(t_m, hbm, b * ctx * s.kv_heads * s.d_qk * 2.0 * s.kv_element_bytes, hbm / (c.hbm_bw * p.mem_eff))
    t_m = max(t_m / op.bandwidth_share, t_extra_memory, t_l2)
    return fixed + _ridge(t_c, t_m, p.smooth), t_c, t_m, fixed


def l2_read_bandwidth(gpu) -> float:
    """B/s an L2-resident read draws: the profile's measured `achievable.l2_bandwidth` where it has one (a
    microbenchmark's sustained rate, e.g. A100: 0.75 of the whitepaper's), else its datasheet `l2_bandwidth`
    (an upper bound), else 0 (L2 not timed)."""
    measured = (getattr(gpu, "achievable", None) or {}).get("l2_bandwidth")
    if measured is not None:
        return measured.value
    return gpu.l2_bandwidth.value if getattr(gpu, "l2_bandwidth", None) is not None else 0.0


def l2_reread_split(op: Op, gpu) -> tuple[float, float]:
    """(HBM bytes, seconds of L2 reads) of a decode op whose re-reads L2 serves (ops.L2_REREAD): on a GPU whose
    profile gives its L2 bandwidth, HBM moves the rest and every cache read passes L2 at that bandwidth
    (l2_read_bandwidth); elsewhere all of it is HBM's, as before."""
    reread = op.bytes.get(L2_REREAD, 0.0)
    l2_bw = l2_read_bandwidth(gpu)
    if reread <= 0.0 or l2_bw <= 0.0:
        return op.hbm_bytes, 0.0
    return op.hbm_bytes - reread, op.shape.kv_bytes / (l2_bw * op.bandwidth_share)


def mla_decode_seconds(op: Op, gpu, engine: str, kv_dtype: str, t_extra_memory: float = 0.0,
                       overrides: dict | None = None):
    """(time, compute, memory, fixed) of an absorbed MLA decode op by the MLA decode fit
    (kernel_models/mla.py): the decode form with one KV head of width d_qk/2, its compute term at the
    op's true 2*(d_qk + d_v) FLOPs per (token, head), memory rescaled to the op's bytes."""
    p = fitted("mla_decode", gpu, kv_dtype, engine, overrides)
    c = ceilings(gpu)
    s = op.shape
    b, ctx, width = s.sequences, max(s.max_context, 1.0), s.d_qk
    peak = c.peak_flops(attention_peak_dtype(op))
    t_c, t_m, fixed = decode_terms(b, ctx, s.heads, 1.0, width / 2.0, s.kv_element_bytes, peak, c.hbm_bw, c.sms, p)
    t_c = _scaled(t_c * (width + s.d_v) / width, op.flops, 2.0 * b * ctx * s.heads * (width + s.d_v),
                  op.flops / (peak * p.compute_eff))
    if op.alu_ops:
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    t_m = _scaled(t_m, op.hbm_bytes, b * ctx * width * s.kv_element_bytes, op.hbm_bytes / (c.hbm_bw * p.mem_eff))
    t_m = max(t_m / op.bandwidth_share, t_extra_memory)
    return fixed + _ridge(t_c, t_m, p.smooth), t_c, t_m, fixed


def mla_prefill_seconds(op: Op, gpu, engine: str, kv_dtype: str, t_extra_memory: float = 0.0,
                        overrides: dict | None = None):
    """(time, compute, memory, fixed) of an expanded MLA prefill op by the MLA prefill fit (kernel_models/mla.py):
    the prefill form at head_dim (d_qk + d_v)/2, whose 4*d FLOPs per pair are MLA's 2*(d_qk + d_v), at the bf16
    peak the fitter priced its rows at; over a cached context no cheaper than the engine's decode kernel
    streaming the op's bytes (as any prefill over a cache)."""
    s = op.shape
    d = mla_prefill_head_dim(s.d_qk, s.d_v)
    form = replace(op, dtype="bf16" if op.dtype == "fp8" else op.dtype, shape=replace(s, d_qk=d, d_v=d))
    decode = fitted(decode_model(engine, s.heads, s.kv_heads), gpu, kv_dtype, engine, overrides) \
        if s.kv_bytes > 0 else None
    fits = (ceilings(gpu), fitted("mla_prefill", gpu, kv_dtype, engine, overrides), decode)
    return fitted_prefill_seconds(form, gpu, fits, t_extra_memory)


def kernel_provenance(gpu, engine: str) -> str:
    """What the kernel-model parameters used for `gpu` were fitted on, and any fallback taken (the fit
    quality of each block is in data/kernel_fit.yaml)."""
    parts = []
    for op, label in (("gemm", "GEMM"), ("prefill_attention", "prefill attention"),
                      ("decode_attention", "decode attention"), ("mla_decode", "MLA decode")):
        prov = params_for(op, gpu.arch, "bf16", engine).provenance
        parts.append(f"{label} {prov.split(' (aiconfigurator corpus')[0]}")
    moe = moe_params(gpu.arch, "bf16", engine).provenance
    quantized = [d for d in ("fp8", "fp4") if d in gpu.peak and has_moe_fit(d, gpu.arch, engine)]
    if quantized:
        moe += "; " + ", ".join(f"({d}) {moe_params(gpu.arch, d, engine).provenance}" for d in quantized)
    block = BLOCK_FP8_MOE_ENGINE.get((engine, gpu.arch))
    if block is not None and "fp8" in gpu.peak and has_moe_fit("fp8", gpu.arch, block):
        moe += f"; (fp8, 128x128 block scales) {block}'s trtllm-gen block-FP8 fit, the kernel {engine} runs for them"
    return ("; ".join(parts) + f" (aiconfigurator corpus); MoE expert GEMMs (bf16) {moe} (data/moe_fit.yaml); "
            "collectives per link generation (data/collective_fit.yaml)")
