"""Encoder (vision-tower) attention: bidirectional FlashAttention over whole sequences.

Per batch of B sequences of S tokens, H heads of head_dim d: 4 B H S^2 d_pad FLOPs (QK^T and PV) on
bf16 tensor cores, where d_pad is the kernel's head-dim instantiation covering d (FlashAttention: 32, 64, 96,
128, 192, 256, so a 72 or 80 head runs the 96 kernel; SGLang's Triton kernel, its path off Hopper and
Blackwell: the next power of two, BLOCK_DMODEL = triton.next_power_of_2(Lk) in prefill_attention.py, so 72
and 80 run as 128); Q, K, V, O read or written once (4 B S H d x 2 bytes); a fixed cost per (sequence, head,
128-query tile). FlashAttention (SGLang's and vLLM's kernel on Hopper and Blackwell, vLLM's on Ampere / Ada)
also pays the softmax's B H S^2 exponentials on the special-function units, the GPU's exp2 an SM a clock (16 on cc
8.0-10.0, CUDA C++ Programming Guide; 32 on Blackwell Ultra: specs/sfu.py), as a compute part of their own, blended
with the MMAs' by the OVERLAP norm: FlashAttention-3's paper (Shah et al. 2024, sec. 3.1) names the
exponential (3.9 TFLOPS of special functions beside 989 of matmul on H100) the cost its MMA / softmax pingpong
hides only in part. The tables' exp2 an SM a clock at head 64, long sequences: B200 11.2, H100 7.4 (MMA and exp
serial: 10.7, 8.0; fully overlapped: 16, 16). As the MMAs' max (session 53) it over-priced B200 for TRT-LLM
(24.6 -> 31.0% left out), whose closed FMHA kernels no source here describes: TRT-LLM's rows keep the MMA alone.
FlashAttention-4 takes 1/8 of a row's exponentials off the SFUs on Blackwell (EXP2_EMULATED, its softmax.py):
leave-one-GPU-out SGLang 19.6 -> 18.8%, vLLM 15.8 -> 15.5% (B200 left out 23.8 -> 21.5, 17.8 -> 16.2).
vLLM's FlashAttention-2 (Ampere / Ada: kernel_source vllm_vit_flash_attn_fa2, synchronous mma.sync without
warp specialisation) is its own family, `encoder_attention_fa2` (measured on L40S alone: no leave-one-out), as
SGLang's Triton kernel is: pooled with FA3 / FA4 it left L40S out at 29.5%, B200 and H100 at 19-21%.
L2_HIDDEN: Q, K, V and O that fit in L2 (the tables' back-to-back replays keep them there) cost no memory time,
the kernels' tile loads running under their MMAs (FA3 / FA4 warp-specialised TMA producers; FA3 paper sec. 3.1),
so the MMAs, the exponentials and the per-tile cost bound them: with an L2 rate as a multiple of HBM the fit ran
to any cap it was given (10, session 58; 3.4, H100's L2 / HBM ratio at the A100 whitepaper's 5,120 B/clk on
108 SMs) with memory_eff at 1, the term unidentified. Leave-one-GPU-out (session 60): SGLang 18.8 -> 18.8%,
vLLM 15.5 -> 15.3%, TRT-LLM 24.6 -> 19.7% (L40S left out 40.4 -> 28.0;
in-sample fmha_v2 9.1 -> 11.1, TRT-LLM H100 7.3 -> 8.0 worse).
Waves (session 64): a non-causal pass's CTAs (sequence, head, query tile of the kernel's own size, query_tile) all
cost alike, so the compute is priced over whole waves of them (wave_factor: a last partial wave costs a whole one),
and vLLM, which leaves FlashAttention's num_splits heuristic on, splits the keys where its tiles leave SMs idle
(kv_splits). Leave-one-GPU-out SGLang 18.8 -> 15.6%, TRT-LLM 19.7 -> 18.8, vLLM 15.3 -> 12.7; in-sample better on
every engine x GPU (docs/accuracy.md "Session 64 M"). What is left is the per-call floor (SGLang own fits: FA4 on
B200 6.9 us, FA3 on H100 10.5). That floor and the per-tile cost are SM clocks (fitted_roofline.FIXED_COST_IN_CLOCKS:
one CTA's pass over a query tile): TRT-LLM left out 18.8 -> 11.5% (L40S 27.5 -> 14.3; docs/accuracy.md "Session 72 G").
Parameters: data/modern_fit.yaml, family encoder_attention.
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .params import ceilings

HEAD_DIMS = (32, 64, 96, 128, 192, 256)   # FlashAttention's head-dim instantiations
Q_TILE = 128
# FlashAttention-4 (Blackwell) computes part of each softmax row's exp2 as a cubic polynomial on the FMA pipes
# (flash_attn/cute/softmax.py apply_exp2_convert, flash_fwd_sm100.py: ex2_emu_freq 16, ex2_emu_res 4,
# ex2_emu_start_frg 1): of a 128-column row's four 32-element fragments, the middle two (not the first, not the
# last) emulate 4 of every 16 pairs: 2/4 x 4/16 = 1/8 of the exponentials leave the special-function units
EXP2_EMULATED = {"blackwell": (4 - 1 - 1) / 4 * 4 / 16}
OVERLAP = 2.0   # MMA and exp blended as an L-OVERLAP norm: 1 serial, infinity fully overlapped (the max)
EXP_ENGINES = ("sglang", "vllm")   # FlashAttention's kernels: the exponential's cost documented (FA3 paper)
FA2_ARCHS = ("ampere", "ada")   # vLLM's ViT attention runs FlashAttention-2 there (FA3 on Hopper, FA4 on Blackwell)
# the kernel an engine's vision attention runs per architecture (SGLang VisionAttention: FA3 on Hopper, FA4 on
# Blackwell, Triton elsewhere; vLLM FA2/3/4; TRT-LLM its own FMHA), where it pads the head dim otherwise
POW2_HEAD_KERNELS = {("sglang", "ada"), ("sglang", "ampere"), ("sglang", "turing")}
FA4_TILE_M = 128       # FlashAttention-4's m_block_size on SM100 (flash_attn/cute/interface.py), times q_stage
FA3_BLOCK_N = {64: 192, 96: 144}   # FlashAttention-3's non-causal kBlockN by head (hopper/tile_size.h); else 128
FA2_BLOCK_M = 128      # FlashAttention-2's kBlockM at heads 64 and 96 (csrc/flash_attn/src/flash_fwd_launch_template.h)
TRTLLM_FMHA_V2_STEP_Q = 64          # fmha_v2 kernels' query rows a step (the 64 of fmha_v2_..._64_128_S_...)
TRTLLM_HOPPER_COMPUTE_GROUPS = 2    # fmha_v2's warp-specialised Hopper kernels: two compute groups a CTA
TRTLLM_GEN_TILE_Q = 128             # trtllm-gen's context FMHA cubins on SM100: Q128Kv128


def encoder_family(triton: bool, legacy_fmha: bool = False, fa2: bool = False) -> str:
    """The fit's family: FlashAttention (FA2/3/4, the kernel vLLM and SGLang run on A100-B200; TensorRT-LLM's own
    FMHA) or SGLang's Triton kernel (its own mechanism, measured on L40S alone, so it has no leave-one-GPU-out),
    or TensorRT-LLM's legacy fmha_v2 kernel where Blackwell declines its trtllm-gen FMHA (legacy_fmha_v2)."""
    return "encoder_attention_triton" if triton else "encoder_attention_fmha_v2" if legacy_fmha else \
        "encoder_attention_fa2" if fa2 else "encoder_attention"


def vllm_fa2(engine: str, arch: str) -> bool:
    """vLLM's vision attention runs FlashAttention-2 below Hopper (the tables' kernel_source on L40S:
    vllm_vit_flash_attn_fa2; fa3 on H100, fa4 on B200)."""
    return engine == "vllm" and arch in FA2_ARCHS


def legacy_fmha_v2(engine: str, arch: str, head_dim) -> bool:
    """TensorRT-LLM on Blackwell runs trtllm-gen FMHA except at head size 72, which falls back to fmha_v2
    (cpp/tensorrt_llm/kernels/fmhaDispatcher.cpp: mUseTllmGen = isSM100Family() && headSize != 72, PR #8666):
    the tables' B200 head-72 rows run at 0.08 of the bf16 peak where heads 64 and 80 run at 0.36-0.44."""
    return engine == "trtllm" and arch == "blackwell" and head_dim == 72


def query_tile(engine: str, arch: str, head_dim: int, seq: int) -> int:
    """Query rows one CTA of the engine's encoder kernel covers (0: not priced by waves), from each kernel's tile
    table: FA4 (Blackwell) 128 x q_stage, q_stage 2 past 128 tokens (flash_attn/cute/interface.py); FA3 (Hopper)
    kBlockM 192 to head 96, 128 above (hopper/tile_size.h tile_size_fwd_sm90); FA2 (vLLM on Ampere / Ada) kBlockM
    128 (flash_fwd_launch_template.h, heads 64 and 96); TensorRT-LLM's fmha_v2 on Hopper 64 rows a compute group, two
    groups a CTA (fused_multihead_attention_common.h NUM_COMPUTE_GROUPS 2), its Ada / legacy kernels 64
    (fmha_v2_flash_attention_bf16_64_128_S_qkv_72_sm89: STEP_Q 64), trtllm-gen on Blackwell 128
    (FmhaSm100aKernel_...H64PackedQkvDenseVarSeqQ128Kv128StaticContext). SGLang's Triton kernel: 0 (priced by
    waves at its BLOCK 64 or 128 its in-sample error rose, 29.8 -> 29.5 / 33.9%: no wave term)."""
    if (engine, arch) in POW2_HEAD_KERNELS:
        return 0
    if engine == "trtllm":
        if legacy_fmha_v2(engine, arch, head_dim) or arch not in ("hopper", "blackwell"):
            return TRTLLM_FMHA_V2_STEP_Q
        return TRTLLM_FMHA_V2_STEP_Q * TRTLLM_HOPPER_COMPUTE_GROUPS if arch == "hopper" else TRTLLM_GEN_TILE_Q
    if arch == "blackwell":
        return FA4_TILE_M * (2 if seq > FA4_TILE_M else 1)
    if arch == "hopper":
        return 192 if padded_head_dim(head_dim) <= 96 else 128
    return FA2_BLOCK_M


def kv_splits(engine: str, arch: str, batch: int, heads: int, seq: int, head_dim: int, sms: int) -> int:
    """KV splits vLLM's FlashAttention picks for an encoder call (it passes num_splits 0: the kernel's own
    heuristic; SGLang's sgl_kernel passes 1, and its tables show no split: B200, 1 sequence, 1 head, 4,096 tokens
    48 us against vLLM's 19). FA4 (Blackwell; vLLM's vision FA4 dispatch, its `_get_dispatch`): 1 up to 4 key
    blocks of 128, else min(SMs // query tiles, 128, key blocks). FA3 (Hopper; hopper/heuristics.h
    num_splits_heuristic): 1 where the query tiles fill 0.8 of the SMs or the keys span <= 4 kBlockN blocks, else
    the fewest splits whose wave efficiency is within 0.85 of the best, at most min(128, SMs, key blocks)."""
    if engine != "vllm" or arch not in ("blackwell", "hopper"):
        return 1
    tile = query_tile(engine, arch, head_dim, seq)
    m_tiles = batch * heads * -(-seq // tile)
    if arch == "blackwell":
        n_blocks = -(-seq // FA4_TILE_M)
        return 1 if n_blocks <= 4 else max(1, min(sms // m_tiles, 128, n_blocks))
    n_blocks = -(-seq // FA3_BLOCK_N.get(padded_head_dim(head_dim), 128))
    if m_tiles >= 0.8 * sms or n_blocks <= 4:
        return 1
    effs = [m_tiles * k / sms / -(-(m_tiles * k) // sms) for k in range(1, min(128, sms, n_blocks) + 1)]
    return next(k for k, e in enumerate(effs, 1) if e >= 0.85 * max(effs))


def wave_factor(batch, seq, heads, sms, q_tile, splits=1):
    """Full waves over the CTAs a pass fills, as a multiple of the work: a non-causal pass's (sequence, head,
    query-tile, KV split) CTAs all cost alike, so a last partial wave of them costs a whole one: ceil(CTAs / SMs)
    x SMs / CTAs (>= 1); 1 where q_tile is 0 (not priced). splits: the KV splits of each query tile (kv_splits)."""
    import numpy as np
    q = np.asarray(q_tile, dtype=float)
    tiles = np.asarray(batch, dtype=float) * heads * np.ceil(np.asarray(seq, dtype=float) / np.where(q > 0, q, 1.0))
    tiles = tiles * np.asarray(splits, dtype=float)
    w = np.where(q > 0, np.ceil(tiles / sms) * sms / tiles, 1.0)
    return float(w) if np.ndim(w) == 0 else w


def padded_head_dim(d: int, pow2: bool = False) -> int:
    if pow2:
        return 1 << (int(d) - 1).bit_length()
    return next((h for h in HEAD_DIMS if h >= d), d)


def encoder_attention_work(batch, seq, heads, head_dim, c, elt_bytes=2.0, pow2_head=False, exp=False, q_tile=0,
                           splits=1):
    """[(compute s, HBM s, L2 s)] and fixed-cost items of one call; q_tile: query rows a CTA (query_tile; a column
    or an int; 0: no wave term), whose last partial wave prices the compute as a whole one (wave_factor)."""
    import numpy as np   # (here only: the fitter passes columns)
    d_pad = (np.vectorize(padded_head_dim)(head_dim, pow2_head) if not isinstance(head_dim, int)
             else padded_head_dim(head_dim, pow2_head))
    flops = 4.0 * batch * heads * seq * seq * d_pad
    io = 4.0 * batch * seq * heads * head_dim * elt_bytes
    compute = flops / c.peak_flops("bf16")
    if exp is not False:   # exp: a bool or a column of them (FlashAttention's rows)
        exp_s = np.where(exp, softmax_exp_seconds(batch * heads * seq * seq, c), 0.0)
        compute = (compute ** OVERLAP + exp_s ** OVERLAP) ** (1.0 / OVERLAP)
    compute = compute * wave_factor(batch, seq, heads, c.sms, q_tile, splits)
    compute = float(compute) if np.ndim(compute) == 0 else compute
    hbm, _ = memory_times(io, c.hbm_bw, c.l2_bytes)   # an L2-resident Q, K, V, O: no memory time (L2_HIDDEN)
    return [(compute, hbm, 0.0 * hbm)], batch * heads * -(-seq // Q_TILE)


def softmax_exp_seconds(exps, c):
    """Ideal seconds of `exps` softmax exponentials on the SMs' special-function units (not the tensor cores),
    less the share FlashAttention-4 emulates on the FMA pipes on Blackwell (EXP2_EMULATED; those overlap)."""
    return exps * (1.0 - EXP2_EMULATED.get(c.arch, 0.0)) / (c.sms * c.clock * c.exp2_per_clock)


def encoder_attention_seconds(batch: int, seq: int, heads: int, head_dim: int, gpu, engine: str = "vllm") -> float:
    """Seconds of one encoder attention call: `batch` sequences of `seq` tokens each, `heads` heads of
    `head_dim` on this GPU (after TP), bf16; gpu: a GPU profile or Ceilings; engine: vllm | sglang | trtllm."""
    c = ceilings(gpu)
    pow2 = (engine, c.arch) in POW2_HEAD_KERNELS
    parts, items = encoder_attention_work(batch, seq, heads, head_dim, c, pow2_head=pow2,
                                          exp=engine in EXP_ENGINES and not pow2,
                                          q_tile=query_tile(engine, c.arch, head_dim, seq),
                                          splits=kv_splits(engine, c.arch, batch, heads, seq, head_dim, c.sms))
    family = encoder_family(pow2, legacy_fmha_v2(engine, c.arch, head_dim), vllm_fa2(engine, c.arch))
    return float(fitted_seconds(parts, items, c.sms, family_params(family, engine, c.arch), clock=c.clock))
