"""Gated DeltaNet (Qwen3-Next / Qwen3.5 linear-attention layers): the four kernels engines run per layer.

Per layer, with H_k key heads and H_v value heads of d_k, d_v (128), channels C = 2 H_k d_k + H_v d_v,
T = batch x seq_len tokens and a fp32 recurrent state of H_v d_k d_v per sequence:
- conv1d_prefill (causal_conv1d_fn): reads and writes T x C bf16, 2 d_conv FLOPs per element (CUDA cores).
- conv1d_decode (causal_conv1d_update): one token per sequence, reads and rewrites the (d_conv - 1)-token
  conv state.
  The two decode kernels are a pass over their state: where it fits in L2 (warm replays) the SMs' own rate,
  the compute term (FP32 peak = SMs x clock x 256), bounds them, not L2: the tables' L2-resident rates are
  0.036-0.049 of FP32 peak on H100, B200 and L40S, but 1x (H100) to 4.2x (L40S) their HBM bandwidth, so a
  speedup over HBM did not transfer (L40S 91% leave-one-GPU-out, 18% now).
- chunk_prefill (chunk_gated_delta_rule): sequences cut into CHUNK-token chunks; per padded token and value
  head 6 d_k d_v (state apply and update) + 4 CHUNK (d_k + d_v) (intra-chunk) FLOPs on tensor cores (FLA's: 64-row
  MMAs, half the datapath of a tcgen05 part: fla_mma_peak). Two kernels:
  FLA's Triton pipeline (SGLang, TRT-LLM; vLLM below Hopper): l2norm, cumsum, K K^T, solve_tril, w/u, the state
  pass, the output, each writing intermediates the next rereads (per token and value head ~3.3 KB, and each
  chunk's bf16 state), a fixed cost per (chunk, value head); those bytes are served by L2 in the fraction
  L2 / footprint, at the SMs' own L2 rate (sm_l2_times), HBM otherwise. FlashInfer's fused kernel (vLLM on
  Hopper, Blackwell): one CTA per (sequence, value head), only q, k, v, o, gates from HBM. Serial terms:
  the inter-chunk state pass carries each (sequence, head)'s state through its chunks one after another
  (FLA's chunk_gated_delta_rule_fwd_h, d_v / BV CTAs a head: state_bv), so a step costs a latency (step_s, fitted)
  times the chunks of a sequence times the waves of such chains over the SMs (batch 1, 2 value heads, 32k
  tokens: 1.0 ms on H100, 2 us a chunk, where the parallel work is 0.17 ms); the in-chunk triangular solve
  walks the rows of a chunk (min(seq, CHUNK)) in clocks (step_cycles; the tables' seq 1-64 slope: 0.28 us a
  row on H100 and B200, 0.19 on L40S at its higher clock). Leave-one-GPU-out MAPE (SGLang) 36.9% -> ~13%.
- recurrent_decode (fused_recurrent_gated_delta_rule): reads and writes the fp32 state once per step,
  6 d_k d_v FLOPs per (sequence, value head) on CUDA cores; a fixed cost per (sequence, value head). An
  L2-resident state is read at a rate per SM (resident_state_times), not the FP32 term: bounded by the FP32
  peak, B200 (75 TFLOP/s beside 8 TB/s) was predicted 1.45x slow from H100 and L40S (28.8% -> 14.9% left out).
Parameters: data/modern_fit.yaml, families gdn_<kernel> (fitted_roofline.py).
"""
from __future__ import annotations

import numpy as np

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .params import ceilings
from ...specs.sfu import RCP_PER_SM_CLOCK

CHUNK = 64   # FLA's chunk_gated_delta_rule chunk size (BT = 64)
STATE_BV = 64   # value columns of the state per CTA of FLA's chunk_gated_delta_rule_fwd_h (autotuned 32 or 64)
# An engine whose state pass launches one fixed BV: SGLang's Triton chunk_delta_h.py (sgl-project/sglang
# python/sglang/srt/layers/attention/fla/chunk_delta_h.py, commit 06a27754; one-config autotune, SGLANG_GDN_CHUNK_H_BV
# default 32, in a later copy) runs BV 32, 4 warps, 2 stages (the kernel writes the final state into the cache pool
# in place, which a multi-config autotune's timing runs would corrupt: the file's comment), so d_v / 32 CTAs a head.
# TensorRT-LLM's vendored copy autotunes BV {32, 64} on a one-chunk call (its pick per GPU is not recorded:
# docs/accuracy.md "Session 72 G2"); vLLM's: STATE_BV.
ENGINE_STATE_BV = {"sglang": 32}
KERNELS = ("conv1d_prefill", "conv1d_decode", "chunk_prefill", "recurrent_decode")


def _ceil_div(a, b):
    return -(-a // b)


def chunk_impl(engine: str, arch: str) -> str:
    """The chunked-prefill kernel an engine runs on an architecture: vLLM runs FlashInfer's fused kernel on
    Hopper and Blackwell (the tables' kernel_source), FLA's Triton kernels elsewhere; SGLang and TRT-LLM FLA's."""
    return "flashinfer" if engine == "vllm" and arch in FLASHINFER_SM else "fla"


def state_bv(engine: str) -> int:
    """Value columns of the state per CTA of the engine's FLA state pass (ENGINE_STATE_BV, else STATE_BV)."""
    return ENGINE_STATE_BV.get(engine, STATE_BV)


def _chunk_prefill_work(impl, batch, seq_len, k_heads, v_heads, d_k, d_v, c, state, mem, bv=STATE_BV):
    chunks_per_seq = _ceil_div(seq_len, CHUNK)
    chunks, tokens = batch * chunks_per_seq, batch * seq_len
    flops = chunks * CHUNK * v_heads * (6.0 * d_k * d_v + 4.0 * CHUNK * (d_k + d_v))
    io = tokens * (4.0 * k_heads * d_k + 4.0 * v_heads * d_v + 8.0 * v_heads)   # q, k, v, o, gates
    if impl == "flashinfer":   # one fused kernel: a CTA per (sequence, value head) walks its chunks
        return [(flops / c.peak_flops("bf16"), *mem(io + 2.0 * state))], 0.0, \
            (chunks_per_seq * _ceil_div(batch * v_heads, c.sms), np.minimum(seq_len, CHUNK))
    # FLA: l2norm q, k; cumsum; K K^T; solve_tril; w, u; the state pass; the output: each writes and rereads
    # its intermediates (per token and value head: k read 4x, q once; w, u, v_new written and read; A in fp32)
    between = tokens * v_heads * (8.0 * d_k + 2.0 * d_k + 10.0 * d_v + 12.0 * CHUNK)
    chunk_states = chunks * v_heads * d_k * d_v * 4.0   # bf16, written then read
    chains = batch * v_heads * _ceil_div(d_v, bv)   # the state pass's CTAs, each over its chunks in turn
    hbm, l2 = sm_l2_times(io + between + chunk_states + 2.0 * state, io + (between + chunk_states) / 2.0 + state, c)
    in_chunk = np.minimum(seq_len, CHUNK)   # the triangular solve's rows, one after another (chunks in parallel)
    scalar = chunks * CHUNK * v_heads * CHUNK * (d_k + d_v)   # CUDA-core work: gates, masks, the solve's rows
    return [(flops / fla_mma_peak(c), hbm, l2), (scalar / c.peak_flops("fp32"), 0.0, 0.0)], chunks * v_heads, \
        (chunks_per_seq * _ceil_div(chains, c.sms), in_chunk)


# Share of an SM's tensor datapath an M = 64 MMA drives, by architecture. FLA's chunk is BT = 64 rows
# (fla/chunk_delta_h.py CHUNK_SIZE), so every tensor-core product of its chunk kernels has M = 64 (or 16: solve_tril).
# On sm_100 Triton lowers such a tl.dot to tcgen05 (getMMAVersionSafe tries MMAv5 first; supportMMA's v5 test
# needs M % 64 == 0 and 4 or 8 warps: triton lib/Analysis/Utility.cpp), and SGLang's Gluon variants issue
# tcgen05_mma on [BT, BV] TMEM tiles (fla/gluon/chunk_o_gluon.py) alike; an M = 64 cta_group::1 tcgen05.mma
# (non-.ws) is PTX data-path layout F: 16 rows a warp's 32-lane slab, half the datapath (PTX ISA "Data path
# layout organization"; tvm_tirx tmem_datapath_layout). Hopper's wgmma is m64 natively and Ampere / Ada's
# mma.sync m16: their M = 64 products fill the datapath (1.0).
M64_DATAPATH_SHARE = {"blackwell": 0.5}
# Blackwell's workstation die (sm_120: RTX PRO 6000) has no tcgen05 (Triton lowers its dots to mma.sync): told apart
# by its datasheet rate, 1,024 dense bf16 FLOP an SM a clock against sm_100 / sm_103's 8,192 (B200, B300, GB200)
TCGEN05_FLOP_PER_SM_CLOCK = 8192.0


def fla_mma_peak(c):
    """FLOP/s the FLA chunk kernels' M = 64 products can reach on `c`: the bf16 tensor peak times the share of the
    datapath an M = 64 MMA drives (M64_DATAPATH_SHARE; B200: 1.125 PFLOP/s, 4,096 FLOP an SM a clock, Hopper's),
    on a tcgen05 GPU (its bf16 rate within 25% of TCGEN05_FLOP_PER_SM_CLOCK); the full peak elsewhere."""
    peak = c.peak_flops("bf16")
    tcgen05 = c.sms * c.clock > 0 and peak / (c.sms * c.clock) >= 0.75 * TCGEN05_FLOP_PER_SM_CLOCK
    return peak * (M64_DATAPATH_SHARE.get(c.arch, 1.0) if tcgen05 else 1.0)


L2_BYTES_PER_SM_CLOCK = 4.0   # assumed base L2 rate per SM per clock; the fit's l2_speedup (1-10) scales it


def sm_l2_rate(sms, clock):
    """Bytes/s an L2-resident working set is read at, at efficiency 1: SMs x clock x L2_BYTES_PER_SM_CLOCK."""
    return sms * clock * L2_BYTES_PER_SM_CLOCK


def sm_l2_times(moved, footprint, c):
    """(HBM s, L2 s) of `moved` bytes whose distinct `footprint` fits in L2 (all L2, at the SMs' own rate: SMs x
    clock x L2_BYTES_PER_SM_CLOCK, which follows the GPU where an HBM multiple did not: L40S reads its L2 4.2x
    faster than its HBM, H100 1x) or not (all HBM)."""
    resident = np.minimum(1.0, c.l2_bytes / np.maximum(np.asarray(footprint, dtype=float), 1.0))
    moved = np.asarray(moved, dtype=float)
    return moved * (1.0 - resident) / c.hbm_bw, moved * resident / sm_l2_rate(c.sms, c.clock)


RESIDENT_BYTES_PER_SM_S = 10e9   # assumed base rate of an SM's L2-resident tile loads; the fit's l2_speedup scales it


def resident_state_times(moved, footprint, c):
    """(HBM s, L2 s) of the recurrence's pass over its state: all from L2 where the state fits (its replays keep it
    there), at a rate per SM the same on every GPU, else all from HBM. The kernel (FLA's packed decode, SGLang
    fla/fused_recurrent.py: one warp a CTA, a 32 x 128 fp32 tile in registers) is latency-bound there: each SM's
    64K-register file (sm80-sm100 alike) holds as many tiles in flight on each GPU, so its rate follows the SM
    count, not the clock nor HBM (L2-resident per SM: B200 ~45, H100 ~34, L40S ~30 GB/s; per clock 24, 17, 12 B)."""
    resident = np.asarray(footprint, dtype=float) <= c.l2_bytes
    moved = np.asarray(moved, dtype=float)
    return np.where(resident, 0.0, moved / c.hbm_bw), np.where(resident, moved / (c.sms * RESIDENT_BYTES_PER_SM_S), 0.0)


CONV_CHUNK_TOKENS = 1024   # TRT-LLM's causal_conv1d_fwd: a CTA's 128 threads x 8 bf16 (kChunkSize), one chunk at a time
CONV_VEC_ELTS = 8   # kNElts: a sequence length divisible by 8 takes the vectorized load and store (kIsVecLoad)
SMEM_BYTES_PER_SM_CLOCK = 128.0   # shared memory: 32 banks x 4 B an SM a clock
FP32_FLOPS_PER_SM_CLOCK = 256.0   # 128 FP32 lanes x FMA


def conv_impl(engine: str) -> str:
    """The short-conv prefill kernel an engine runs: TensorRT-LLM its CUDA port of Dao's causal_conv1d_fwd
    (torch.ops.trtllm.causal_conv1d_fwd: one CTA per (sequence, channel), x overwritten in place); the others
    the form fitted on their own rows (default)."""
    return "cta_per_channel" if engine == "trtllm" else "default"


def cta_per_channel_conv_work(batch, seq_len, channels, d_conv, c):
    """TensorRT-LLM's causal_conv1d_fwd (cpp/tensorrt_llm/kernels/causalConv1d/causalConv1d.cu): grid (batch,
    channels) of 128-thread CTAs, each walking its channel's tokens in 1,024-token chunks, every thread computing
    its 8 outputs of a chunk whether or not they are past seq_len (masked stores): 2 d_conv FLOPs and the SiLU's
    exp and reciprocal (2 SFU results) an output slot, plus, where seq_len % 8 != 0, the unvectorized
    BLOCK_LOAD / STORE_WARP_TRANSPOSE path's shared-memory round trips (8 B a bf16 element). So a short sequence
    costs a whole chunk a channel: SM clocks per CTA chunk (the tables: ~220 clocks a CTA per SM on H100, B200
    and L40S alike, where seconds differ 1.3x; unvectorized 1.34-1.51x). It writes its output over x (the wrapper
    returns x): the footprint is x once, 2 B an element, kept in L2 by the tables' replays where that fits
    (L40S at 16k tokens: 2.6 TB/s), at the SMs' L2 rate (sm_l2_times)."""
    tokens = batch * seq_len
    moved = 4.0 * tokens * channels + 2.0 * (d_conv - 1) * batch * channels   # x read and rewritten; final state
    fits = np.where(2.0 * np.asarray(tokens, dtype=float) * channels <= c.l2_bytes, 1.0, np.inf)
    unvectorized = np.where(np.asarray(seq_len) % CONV_VEC_ELTS == 0, 0.0, 1.0)
    slot_clocks = (2.0 * d_conv / FP32_FLOPS_PER_SM_CLOCK + (1.0 / c.exp2_per_clock + 1.0 / RCP_PER_SM_CLOCK)
                   + unvectorized * 8.0 / SMEM_BYTES_PER_SM_CLOCK)
    slots = batch * channels * _ceil_div(seq_len, CONV_CHUNK_TOKENS) * CONV_CHUNK_TOKENS
    return [(slots * slot_clocks / (c.sms * c.clock), *sm_l2_times(moved, fits, c))], 0.0 * batch, (0.0, 0.0)


def gdn_work(kernel: str, batch, seq_len, k_heads, v_heads, d_k, d_v, c, d_conv=4, impl="fla", state_in=4.0,
             channels=None, conv_impl="default", state_io=True, bv=STATE_BV):
    """([(compute s, memory s)], fixed-cost items, (serial steps, clocked steps)) of one GDN kernel at efficiency 1
    on Ceilings `c`; impl: the chunked prefill's kernel (chunk_impl); state_in: bytes per element of the decode
    state read (fp32 4: updated in place; less: FLA writes a new fp32 final state beside it); channels: the short
    conv's (default q, k and v: 2 H_k d_k + H_v d_v); conv_impl: the short-conv prefill's kernel (conv_impl());
    state_io: the chunked prefill reads an initial state and writes the final one (False: neither); bv: the FLA state
    pass's value columns a CTA (state_bv)."""
    tokens = batch * seq_len
    channels = 2 * k_heads * d_k + v_heads * d_v if channels is None else channels
    state = batch * v_heads * d_k * d_v * 4.0
    fp32 = c.peak_flops("fp32")

    def mem(moved, footprint=None):
        return memory_times(moved, c.hbm_bw, c.l2_bytes, footprint)

    def state_pass(moved, footprint):   # a decode kernel's pass over its state: L2-resident bytes cost no L2 time
        hbm, l2 = mem(moved, footprint)
        return hbm, 0.0 * l2
    if kernel == "conv1d_prefill" and conv_impl == "cta_per_channel":
        return cta_per_channel_conv_work(batch, seq_len, channels, d_conv, c)
    if kernel == "conv1d_prefill":
        return [(2.0 * d_conv * tokens * channels / fp32, *mem((4.0 * tokens + d_conv * 2.0) * channels))], batch, \
            (0.0, 0.0)
    if kernel == "conv1d_decode":
        conv_state = batch * channels * 2.0 * (d_conv - 1)   # bf16, read and rewritten in place
        return [(2.0 * d_conv * batch * channels / fp32, *state_pass(batch * channels * 4.0 + 2.0 * conv_state,
                                                                     batch * channels * 4.0 + conv_state))], batch, \
            (0.0, 0.0)
    if kernel == "chunk_prefill":
        # a server's prefill reads each sequence's initial state and writes its final one; TRT-LLM's collector
        # passes neither (collect_gdn.py: chunk_gated_delta_rule(q, k, v, g, beta), output_final_state False)
        return _chunk_prefill_work(impl, batch, seq_len, k_heads, v_heads, d_k, d_v, c, state * state_io, mem, bv)
    if kernel == "recurrent_decode":
        io = batch * (4.0 * k_heads * d_k + 4.0 * v_heads * d_v + 8.0 * v_heads)
        moved = state * (state_in / 4.0 + 1.0)   # read, then written in fp32
        held = state if state_in == 4.0 else moved   # in place, or a second buffer
        parts = [(6.0 * batch * v_heads * d_k * d_v / fp32, *resident_state_times(moved + io, held + io, c))]
        return parts, batch * v_heads, (0.0, 0.0)
    raise ValueError(f"GDN kernel '{kernel}' is not valid; valid: {', '.join(KERNELS)}")


def gdn_seconds(kernel: str, batch: int, seq_len: int, k_heads: int, v_heads: int, gpu, engine: str = "sglang",
                d_k: int = 128, d_v: int = 128, d_conv: int = 4) -> float:
    """Seconds of one GDN kernel of one layer on one GPU.

    kernel: conv1d_prefill | chunk_prefill (a prefill of `batch` sequences of `seq_len` new tokens) or
    conv1d_decode | recurrent_decode (one token per sequence; seq_len is 1); k_heads, v_heads: the
    layer's key and value heads on this GPU (after TP); d_k, d_v: head dims; gpu: a GPU profile or
    Ceilings; engine: vllm | sglang | trtllm (whose kernels' fit)."""
    c = ceilings(gpu)
    impl = chunk_impl(engine, c.arch) if kernel == "chunk_prefill" else "fla"
    parts, items, (steps, clocked) = gdn_work(kernel, batch, seq_len, k_heads, v_heads, d_k, d_v, c, d_conv, impl,
                                              conv_impl=conv_impl(engine), bv=state_bv(engine))
    params = family_params(gdn_family(kernel, impl, c.arch), engine, c.arch)
    return float(fitted_seconds(parts, items, c.sms, params, steps, clocked, c.clock))


FLASHINFER_SM = {"hopper": "sm90", "blackwell": "sm100"}   # the GPUs FlashInfer's GDN prefill has a kernel for


def gdn_family(kernel: str, impl: str = "fla", arch: str = "") -> str:
    """The fit family of a GDN kernel: FlashInfer's fused chunked prefill has one per architecture, as FlashInfer
    writes one kernel each (flashinfer/gdn_prefill.py dispatches chunk_gated_delta_rule_sm90 / _sm100: wgmma on
    Hopper, tcgen05 on Blackwell; B200 runs 1.5x slower than H100 at 64 sequences x 64 heads, no datasheet ratio)."""
    if impl != "flashinfer":
        return f"gdn_{kernel}"
    return f"gdn_{kernel}_flashinfer_{FLASHINFER_SM[arch]}"
