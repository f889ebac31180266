"""GEMM time from its shape, the GPU's datasheet ceilings and fitted parameters.

    t = floor + (t_c^p + t_m^p)^(1/p) + t_quant

- t_c, tensor-core time: m's dispatch bucket (tiny m <= 16, small m <= 32, skinny m <= 64, mid m <= 1024, large;
  the libraries pick kernel configurations by such m ranges, e.g. vLLM's CUTLASS M16/M64/M128
  dispatch) sets the efficiency eff_bucket and the tile height tm (m rounded up to a power of
  two, 16..64, in the tiny, small and skinny buckets; else 128). The 32-row tiles have their own
  efficiency because the libraries switch kernels there (bf16 measured 10-13% slower at m = 17..32
  than one efficiency for 32- and 64-row tiles gave on A100); fp8 and fp4 fits tie it to the 64-row one;
  the library takes the fastest tile width tn in {64, 128, 256} (those >= min_tile_n: TensorRT-LLM's
  NVFP4 kernels have only 256-wide tiles, so a narrow GEMM gains nothing from fewer columns per tile:
  its corpus rows take as long at n = 1024 as at 8192 for m <= 256) and K split (split-K / stream-K)
  S in {1, 2, 4, ..., max_split} with slices of >= 256, so idle SMs help a GEMM with few tiles;
  the split's fp32 partial sums are written and read back (8 bytes per element of C per slice)
  and reduced, at a fixed cost split_s:
      tiles = ceil(m/tm) * ceil(n/tn)
      t_c = min over tn, S of  ceil(tiles*S/SMs) * (2*tm*tn*(k/S) / (peak/SMs * eff_bucket) + tile_s)
                               + [S > 1] * (split_s + 8*S*m*n / (HBM * mem_eff))
  tile_s is each tile's fixed cost (pipeline fill, epilogue storing the C tile): with it, short-K
  GEMMs reach a lower fraction of peak than long-K ones. max_split is fitted per dtype: cuBLAS
  splits bf16 GEMMs freely; vLLM's fp8 CUTLASS kernels hardly split, so a skinny fp8 GEMM with a
  long K runs on a few SMs.
- t_m = (m*k*a + k*n*w + m*n*2) / (HBM * mem_eff): operands once, bf16 output. (Operands that
  fit in L2 are not given L2 bandwidth: on the corpus that made the fit worse, not better.)
- t_quant (fp8 and fp4): the engines' activation quantization before the scaled GEMM:
  quant_s + quant_row_s*m + q*m*k / (HBM * mem_eff); fp8 (dynamic per-tensor): q = 5 (an absmax
  pass reading bf16, a pass reading bf16 and writing fp8; quant_row_s is the serialized per-row
  cost of the absmax reduction, which dominates at large m with small k); NVFP4: q = 2.5625, one
  pass reading bf16 and writing 4-bit values with each 16-element block's scale (the per-tensor
  scale is the checkpoint's, static).
- floor: launch/ramp/tail latency of the kernel, seconds.
The exponent p (`smooth`) sets how sharply the ridge between compute and memory bound bends.
"""
from __future__ import annotations

from .elementwise import evaluate
from .params import DTYPE_BYTES, Ceilings, GemmParams, ceilings, combine

TINY_M, SMALL_M, SKINNY_M, MID_M = 16, 32, 64, 1024
TILE_M = {"mid": 128, "large": 128}   # skinny: m's power of two, 16..64
TILE_N = (64, 128, 256)
MIN_SPLIT_K = 256
QUANT_BYTES_PER_ELEMENT = 5.0   # fp8: absmax read (2 B) + quantize read (2 B) and write (1 B)
BF16_BYTES = 2.0


def _bucket_compute(xp, m, n, k, tm, per_sm, sms, eff, p: GemmParams, bw):
    best = xp.inf
    splits = [1] + [2 ** i for i in range(1, 7) if 2 ** i <= p.max_split]
    for tn in [w for w in TILE_N if w >= p.min_tile_n] or TILE_N[-1:]:
        tiles = xp.ceil(m / tm) * xp.ceil(n / tn)
        for split in splits:
            waves = xp.ceil(tiles * split / sms)
            t = waves * (2.0 * tm * tn * (k / split) / (per_sm * eff) + p.tile_s)
            if split > 1:
                reduce = p.split_s + 8.0 * split * m * n / (bw * p.mem_eff)
                t = xp.where(k / split >= MIN_SPLIT_K, t + reduce, xp.inf)
            best = xp.minimum(best, t)
    return best


def gemm_parts(m, n, k, in_bytes, peak, c: Ceilings, p: GemmParams):
    """(t_compute, t_memory, t_quant) in seconds; arrays broadcast (the fitter passes columns, and
    Ceilings whose fields are columns); plain floats in, floats out (elementwise.evaluate)."""
    return evaluate(_gemm_parts, (m, n, k, in_bytes, peak, c, p),
                    (m, n, k, in_bytes, peak, c.hbm_bw, c.sms, p.eff_tiny, p.eff_small, p.eff_skinny, p.eff_mid,
                     p.eff_large, p.mem_eff, p.tile_s, p.max_split, p.split_s, p.quant_s, p.quant_row_s,
                     p.min_tile_n))


def _gemm_parts(xp, m, n, k, in_bytes, peak, c: Ceilings, p: GemmParams):
    m, n, k = (xp.asfloat(x) for x in (m, n, k))
    bw, sms = c.hbm_bw, c.sms
    per_sm = peak / sms
    skinny, mid = m <= SKINNY_M, xp.both(m > SKINNY_M, m <= MID_M)
    tm = xp.where(skinny, xp.minimum(xp.maximum(2.0 ** xp.ceil(xp.log2(xp.maximum(m, 1.0))), 16), SKINNY_M),
                  xp.where(mid, TILE_M["mid"], TILE_M["large"]))   # (numpy.clip(x, 16, SKINNY_M))
    eff = xp.where(m <= TINY_M, p.eff_tiny, xp.where(m <= SMALL_M, p.eff_small,
                   xp.where(skinny, p.eff_skinny, xp.where(mid, p.eff_mid, p.eff_large))))
    t_c = _bucket_compute(xp, m, n, k, tm, per_sm, sms, eff, p, bw)
    nbytes = m * k * in_bytes + k * n * in_bytes + m * n * 2.0
    t_m = nbytes / (bw * p.mem_eff)
    per_element = xp.where(in_bytes < 1, BF16_BYTES + in_bytes, QUANT_BYTES_PER_ELEMENT)   # fp4: one pass
    quant_pass = per_element * m * k / (bw * p.mem_eff)
    quant = xp.where(in_bytes < 2, p.quant_s + p.quant_row_s * m + quant_pass, 0.0)
    return t_c, t_m, quant


def gemm_time_arrays(m, n, k, in_bytes, peak, c: Ceilings, p: GemmParams):
    t_c, t_m, quant = gemm_parts(m, n, k, in_bytes, peak, c, p)
    return p.floor_s + combine(t_c, t_m, p.smooth) + quant


def gemm_time(m, n, k, dtype: str, gpu, params: GemmParams) -> float:
    """Seconds for C[m,n] = A[m,k] @ W[k,n] in `dtype` (bf16, fp16, fp8, fp4) on `gpu` (a GPU profile
    or Ceilings), with `params` from params_for('gemm', arch, dtype, engine)."""
    c = ceilings(gpu)
    t = gemm_time_arrays(m, n, k, DTYPE_BYTES[dtype], c.peak_flops(dtype), c, params)
    return float(t) if getattr(t, "ndim", 0) == 0 else t
