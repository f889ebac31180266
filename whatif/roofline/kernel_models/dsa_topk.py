"""SGLang's DSA indexer top-k (sgl-kernel topk.cu, `fast_topk_transform_*`), priced from its mechanism as its own part.

Source (sgl-kernel csrc/elementwise/topk.cu; the tables ran SGLang 0.5.14): one 1,024-thread CTA a query row
(grid = rows). Its dynamic shared memory (kSmem) was cut from 128 KB to 32 KB by sglang#17747 (merged Jan 2026,
"each SM could only run 1 block"), so 2 CTAs an SM (2,048 threads an SM on Hopper and Blackwell). A row whose keys fit
in TopK (2,048) only writes its indices (naive_topk_transform: no logit read). A longer row reads its fp32 logits
twice from global memory: an 8-bit coarse histogram pass, then a scatter pass that keeps the bins above the
threshold and stages the threshold bin's candidates in shared memory; up to four refine rounds work on those staged
candidates (re-reading only them, not priced). Each row then writes TopK int32 page-table entries, reading as many
from the source page table. TensorRT-LLM's indexerTopK.cu (and vLLM's port) differ: float4 loads, 512-thread CTAs
with small shared memory (several rows an SM), so this part is SGLang's only; their top-k read stays in
`indexer_parts`' one logit read.
"""
from __future__ import annotations

from .fitted_roofline import memory_times

LOGIT_BYTES = 4.0        # fp32 logits (the indexer's output, topk.cu's `const float* input`)
INDEX_BYTES = 4.0        # int32 page-table entries
ROW_READS = 2            # fast_topk_cuda_tl: histogram pass + scatter pass over a row past TopK keys
ROWS_AN_SM = 2           # 1,024 threads and 32 KB of dynamic shared memory a CTA (sglang#17747): 2 CTAs an SM


def long_row_keys(isl, past, topk):
    """Sum of the visible keys over the new tokens whose row holds more than `topk` keys (token i sees past + i)."""
    def s(n):   # sum of L for L in (topk, n]
        return (n * (n + 1) / 2.0 - topk * (topk + 1) / 2.0) * (n > topk)
    return s(past + isl) - s(past)


def sglang_topk_part(batch, isl, past, topk, c):
    """(compute s, HBM s, L2 s) of SGLang's top-k over `batch` sequences of `isl` new tokens after `past`: the
    logits of rows past `topk` keys read ROW_READS times, TopK indices read and written a row; rows in flight
    bounded by the SMs (one CTA a row, ROWS_AN_SM a SM), so fewer rows than that many use that share of the
    bandwidth."""
    import numpy as np
    rows = batch * isl
    moved = batch * long_row_keys(isl, past, topk) * LOGIT_BYTES * ROW_READS + rows * topk * INDEX_BYTES * 2.0
    share = np.minimum(1.0, rows / (c.sms * ROWS_AN_SM))
    t_m, t_l2 = memory_times(moved, c.hbm_bw, c.l2_bytes)
    return (0.0, t_m / share, t_l2 / share)
