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
- chunk_prefill (chunk_gated_delta_rule, FLA / FlashInfer): sequences cut into CHUNK-token chunks; per
  padded token and value head 6 d_k d_v (state apply and update) + 4 CHUNK (d_k + d_v) (intra-chunk) FLOPs
  on tensor cores; bytes: q, k, v, o, gates, each chunk's bf16 state written and read, the fp32 state
  read and written once per sequence; a fixed cost per (chunk, value head). Plus the inter-chunk recurrence:
  each (sequence, head) carries its state through its chunks one after another on one SM (FLA's
  chunk_gated_delta_rule_fwd_h), 6 CHUNK d_k d_v FLOPs a step at one SM's share of the peak, so a long
  sequence of few heads costs its chunk count times a step (batch 1, 2 value heads, 32k tokens on H100:
  1.0 ms, 2 us a chunk, where the parallel work is 0.17 ms). In-sample MAPE 28-35% -> 22-31%.
- recurrent_decode (fused_recurrent_gated_delta_rule): reads and writes the fp32 state once per step,
  6 d_k d_v FLOPs per (sequence, value head) on CUDA cores; a fixed cost per (sequence, value head).
Parameters: data/modern_fit.yaml, families gdn_<kernel> (fitted_roofline.py).
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .params import ceilings

CHUNK = 64   # FLA's chunk_gated_delta_rule chunk size (BT = 64)
KERNELS = ("conv1d_prefill", "conv1d_decode", "chunk_prefill", "recurrent_decode")


def _ceil_div(a, b):
    return -(-a // b)


def gdn_work(kernel: str, batch, seq_len, k_heads, v_heads, d_k, d_v, c, d_conv=4):
    """([(compute s, memory s)], fixed-cost items) of one GDN kernel at efficiency 1 on Ceilings `c`."""
    tokens = batch * seq_len
    channels = 2 * k_heads * d_k + v_heads * d_v
    state = batch * v_heads * d_k * d_v * 4.0
    fp32, bf16 = c.peak_flops("fp32"), c.peak_flops("bf16")

    def mem(moved, footprint=None):
        return memory_times(moved, c.hbm_bw, c.l2_bytes, footprint)

    def state_pass(moved, footprint):   # a decode kernel's pass over its state: L2-resident bytes cost no L2 time
        hbm, l2 = mem(moved, footprint)
        return hbm, 0.0 * l2
    if kernel == "conv1d_prefill":
        return [(2.0 * d_conv * tokens * channels / fp32, *mem((4.0 * tokens + d_conv * 2.0) * channels))], batch
    if kernel == "conv1d_decode":
        conv_state = batch * channels * 2.0 * (d_conv - 1)   # bf16, read and rewritten in place
        return [(2.0 * d_conv * batch * channels / fp32, *state_pass(batch * channels * 4.0 + 2.0 * conv_state,
                                                                     batch * channels * 4.0 + conv_state))], batch
    if kernel == "chunk_prefill":
        chunks = batch * _ceil_div(seq_len, CHUNK)
        flops = chunks * CHUNK * v_heads * (6.0 * d_k * d_v + 4.0 * CHUNK * (d_k + d_v))
        io = tokens * (4.0 * k_heads * d_k + 4.0 * v_heads * d_v + 8.0 * v_heads)
        chunk_states = chunks * v_heads * d_k * d_v * 4.0   # bf16, written then read
        serial = _ceil_div(seq_len, CHUNK) * 6.0 * CHUNK * d_k * d_v / (bf16 / c.sms)   # one SM's chain of steps
        return [(flops / bf16, *mem(io + chunk_states + 2.0 * state)), (serial, 0.0 * serial, 0.0 * serial)], \
            chunks * v_heads
    if kernel == "recurrent_decode":
        io = batch * (4.0 * k_heads * d_k + 4.0 * v_heads * d_v + 8.0 * v_heads)
        return [(6.0 * batch * v_heads * d_k * d_v / fp32, *state_pass(2.0 * state + io, state + io))], batch * v_heads
    raise ValueError(f"GDN kernel '{kernel}' is not valid; valid: {', '.join(KERNELS)}")


def gdn_seconds(kernel: str, batch: int, seq_len: int, k_heads: int, v_heads: int, gpu, engine: str = "sglang",
                d_k: int = 128, d_v: int = 128, d_conv: int = 4) -> float:
    """Seconds of one GDN kernel of one layer on one GPU.

    kernel: conv1d_prefill | chunk_prefill (a prefill of `batch` sequences of `seq_len` new tokens) or
    conv1d_decode | recurrent_decode (one token per sequence; seq_len is 1); k_heads, v_heads: the
    layer's key and value heads on this GPU (after TP); d_k, d_v: head dims; gpu: a GPU profile or
    Ceilings; engine: vllm | sglang | trtllm (whose kernels' fit)."""
    c = ceilings(gpu)
    parts, items = gdn_work(kernel, batch, seq_len, k_heads, v_heads, d_k, d_v, c, d_conv)
    return float(fitted_seconds(parts, items, c.sms, family_params(f"gdn_{kernel}", engine, c.arch)))
