"""Causal prefill (context) attention time: FlashAttention-style tiles, per-tile fixed costs.

    t = floor + (t_c^p + t_m^p)^(1/p) + t_tok

- Work is tiled in BQ x BK = 128 x 128 (query row, key) blocks. The g = H/Hkv query heads that
  share a KV head are packed into the query rows (GQA packing, as FlashAttention 2/3 and
  FlashInfer do), so per (sequence, KV head) there are nq = ceil(L*g/128) query tiles (one CTA
  each) over nk = ceil(L/128) key tiles. Under the causal mask query tile j visits about
  (j+1)*nk/nq key tiles (at most w = ceil(window/128)+1 with a sliding window), so on average
      a = (nk+1)/2            (no window, or w >= nk)
      a = w - w^2/(2*nk) + 1/2 (window)
  and pairs = nq * a. One tile pair costs t_pair = max(4*BQ*BK*d / (peak/SMs * compute_eff), tile_s)
  on one SM: its two MMAs, or its non-MMA work (softmax exponentials, masking, rescaling) when that
  is longer, since FlashAttention 3/4 overlap the two (ping-pong warp groups); a sum of the two
  made compute_eff and tile_s interchangeable and drove the fitted compute_eff to 1.0 on Blackwell.
  Nor is a pair faster than its softmax exponentials on the SM's special-function units:
  t_exp = BQ*BK / (exp2_per_clock * clock), the GPU's SFU exp2 results per clock per SM (specs/sfu.py: 16 on
  compute capability 7.5-10.0 and 12.0, CUDA C++ Programming Guide "Arithmetic Instructions"; 32 on Blackwell
  Ultra, 10.3, NVIDIA's "doubled SFU throughput", in the B300 / GB300 profiles); it binds where the MMAs are
  short, 64-dim heads on Blackwell (aiconfigurator's B200 prefill rows of head_dim 64 at >= 2k tokens
  measured 1.3-1.5x the MMA-only price; FlashAttention-4's write-up names the exponential as Blackwell's
  attention bottleneck), and not where clock is unknown (0).
  One CTA adds cta_s. With B sequences:
      t_c = max( B*Hkv*nq*(cta_s + a*t_pair) / SMs ,  cta_s + min(nk, w)*t_pair / kv_splits )
  (the whole grid spread over the SMs, or the longest query tile when there are fewer CTAs than
  SMs; kernels split a long key range over up to kv_splits CTAs (split-KV), fitted).
  The fixed costs make efficiency grow with L: short prefills are overhead-bound.
  Wide heads (d_split): a CTA's fp32 accumulators, the 128-row output tile (BQ x d) beside one score tile
  (BQ x BK), live in 256 KiB a SM (Blackwell's tensor memory, 512 fp32 columns of 128 lanes; Hopper's
  and Ampere's register file, 64K 32-bit registers). Past that (d > 384: Gemma 4's 512) the output is
  split over n = d_split(d) CTAs per query tile, each recomputing the full QK^T and its d/n of PV: a
  pass's pair is 2*BQ*BK*d*(1 + 1/n) of MMA work (0.75x a whole pair at n 2), the grid n times the CTAs
  (1.5x the work). Sources: FlashAttention PR #2447 (SM100's TMEM "limited to 512 FP32 columns": at
  d 256 the output accumulators alone fill it, hence split-D), PR #2431 (dense 512 on B200 needs more
  than V/O chunking); vLLM's fa_utils promotes FA3 to FA4 on Hopper above 256 (FA2/FA3 stop at 256).
- t_m = B*L*(H*d*2*2 + Hkv*d*2*2 + Hkv*d*2*kv) / (HBM * mem_eff): Q read and O written (bf16),
  K and V read once (bf16, GQA: Hkv heads), and the KV-cache write of every token in the KV dtype.
- t_tok = token_s * B*L / SMs: a fixed cost per token (the KV-cache write runs one CTA per token
  into randomly placed cache blocks), spread over the SMs.
- floor: launch and ramp latency, seconds.
"""
from __future__ import annotations

from .elementwise import Arrays, evaluate
from ...specs.sfu import DEFAULT_EXP2_PER_SM_CLOCK
from .params import DTYPE_BYTES, Ceilings, PrefillParams, ceilings, combine

BQ = BK = 128
ACC_COLUMNS = 512.0   # fp32 accumulator columns a SM holds for 128 rows: 256 KiB (B200 TMEM; H100/A100 register file)


def d_split(head_dim, xp=Arrays):
    """Passes over the output width a tile needs: 1 while its BQ x d output and BQ x BK scores fit ACC_COLUMNS."""
    return xp.maximum(xp.ceil((xp.asfloat(head_dim) + BK) / ACC_COLUMNS), 1.0)


def pair_mma_flops(head_dim, passes):
    """MMA FLOPs of one (query tile, key tile) pair a CTA runs: QK^T whole, PV over its d / passes (d_split)."""
    return 2.0 * BQ * BK * head_dim * (1.0 + 1.0 / passes)


def tile_pairs(seq, group, window, xp=Arrays):
    """(query tiles, mean key tiles per query tile, most key tiles of one query tile) per
    (sequence, KV head); `group` = query heads per KV head; window <= 0 means full attention."""
    seq = xp.asfloat(seq)
    nq = xp.ceil(seq * group / BQ)
    nk = xp.ceil(seq / BK)
    w = xp.where(xp.asfloat(window) > 0, xp.ceil(xp.asfloat(window) / BK) + 1, xp.inf)
    windowed = w < nk
    mean_k = xp.where(windowed, xp.minimum(w, nk) - xp.minimum(w, nk) ** 2 / (2.0 * nk) + 0.5, (nk + 1) / 2.0)
    return nq, mean_k, xp.minimum(nk, w)


def exp_seconds(clock, xp=Arrays, per_clock=DEFAULT_EXP2_PER_SM_CLOCK):
    """Seconds one SM's special-function units take for a BQ x BK tile's softmax exponentials at `per_clock` exp2
    results a clock (Ceilings.exp2_per_clock); 0 without a clock."""
    clock = xp.asfloat(clock)
    return xp.where(clock > 0, BQ * BK / (per_clock * xp.maximum(clock, 1.0)), 0.0)


def prefill_parts(batch, seq, heads, kv_heads, head_dim, kv_bytes, window, peak, c: Ceilings, p: PrefillParams):
    """(t_compute, t_memory, t_fixed) in seconds, t_fixed = floor + t_tok; arrays broadcast (the
    fitter passes columns, and Ceilings whose fields are columns); plain floats in, floats out."""
    return evaluate(_prefill_parts, (batch, seq, heads, kv_heads, head_dim, kv_bytes, window, peak, c, p),
                    (batch, seq, heads, kv_heads, head_dim, kv_bytes, window, peak, c.sms, c.hbm_bw, c.clock,
                     c.exp2_per_clock, p.compute_eff, p.mem_eff, p.tile_s, p.cta_s, p.token_s, p.kv_splits, p.floor_s))


def _prefill_parts(xp, batch, seq, heads, kv_heads, head_dim, kv_bytes, window, peak, c: Ceilings, p: PrefillParams):
    sms = c.sms
    batch, seq, heads, kv_heads, head_dim = (xp.asfloat(x) for x in (batch, seq, heads, kv_heads, head_dim))
    nq, mean_k, nk_max = tile_pairs(seq, heads / kv_heads, window, xp)
    n = d_split(head_dim, xp)
    t_pair = xp.maximum(pair_mma_flops(head_dim, n) / (peak / sms * p.compute_eff), p.tile_s)
    t_pair = xp.maximum(t_pair, exp_seconds(c.clock, xp, c.exp2_per_clock))
    grid = batch * kv_heads * nq * n * (p.cta_s + mean_k * t_pair) / sms
    t_c = xp.maximum(grid, p.cta_s + nk_max * t_pair / p.kv_splits)
    nbytes = batch * seq * head_dim * (heads * 4.0 + kv_heads * 4.0 + kv_heads * 2.0 * kv_bytes)
    t_m = nbytes / (c.hbm_bw * p.mem_eff)
    return t_c, t_m, p.floor_s + p.token_s * batch * seq / sms


def prefill_time_arrays(batch, seq, heads, kv_heads, head_dim, kv_bytes, window, peak, c: Ceilings,
                        p: PrefillParams):
    import numpy as np   # (here only: a cold estimate imports no numpy)
    t_c, t_m, fixed = prefill_parts(batch, seq, heads, kv_heads, head_dim, kv_bytes, window, peak, c, p)
    return fixed + combine(np.asarray(t_c), np.asarray(t_m), p.smooth)   # numpy's power, as the fitters have


def prefill_attention_time(batch, seq, heads, kv_heads, head_dim, dtype: str, kv_dtype: str, gpu,
                           params: PrefillParams, window: int = 0) -> float:
    """Seconds for causal attention over `seq` new tokens in each of `batch` sequences (no cached
    prefix), `heads` query heads sharing `kv_heads` KV heads of `head_dim`, computed in `dtype`
    (bf16/fp16), writing the KV cache in `kv_dtype` (bf16/fp8); `window` > 0: sliding window."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    c = ceilings(gpu)
    t = prefill_time_arrays(batch, seq, heads, kv_heads, head_dim, DTYPE_BYTES[kv_dtype], window,
                            c.peak_flops(dtype), c, params)
    return float(t) if np.ndim(t) == 0 else t
