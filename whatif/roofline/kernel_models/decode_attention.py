"""Decode (generation) attention time: one new token per sequence reads its whole KV cache.

    t = floor + (t_c^p + t_m^p)^(1/p) + t_seq

- t_m = B*C*Hkv*d*2*kv / (HBM * mem_eff * min(1, U/SMs)): K and V of C cached tokens
  (C = min(context, window)), Hkv KV heads, in the KV dtype (kv bytes/element; fp8 halves it);
  Q and O are negligible. U = B*Hkv*min(kv_splits, ceil(C/256)) is the work items streaming at
  once (split-KV / flash-decoding splits a long context at most kv_splits ways): with fewer
  items than SMs, only that share of the SMs pulls from HBM.
- t_c = 4*B*C*Hkv*ceil(g/r)*r*d / (peak_bf16 * compute_eff): GQA packs the g = H/Hkv query
  heads of one KV head into the rows of a tensor-core tile of r rows (`group_rows`: 16, or 8 where
  the engine's kernel puts the heads in the MMA's N), padded to r.
- t_seq = seq_s * B*Hkv / SMs: a fixed cost per (sequence, KV head) work item (page-table walk,
  split-KV combine), spread over the SMs.
- floor: launch latency and the split-KV reduction, seconds.
The whole cache must come from HBM: a timing whose cache fits in L2 (the corpus's `l2_resident`
rows, replayed warm) measures L2, which a real model's per-layer caches never stay in.
"""
from __future__ import annotations

from .elementwise import evaluate
from .params import DTYPE_BYTES, Ceilings, DecodeParams, ceilings, combine

GQA_TILE_ROWS = 16.0   # heads in the MMA's M (TRT-LLM XQA's HMMA kernel mha.cu: warpTile.y = roundUp(headGrpSize, 16))
SPLIT_TOKENS = 256   # fewest cached tokens one split-KV work item takes
# Kernels that put the query heads in the MMA's N dimension, in tiles of 8 heads: (engine, arch, KV dtype).
# TensorRT-LLM's Blackwell decode kernels (trtllm-gen, swapped AB) and XQA's Hopper fp8 QGMMA kernel
# (cpp/kernels/xqa/mha_sm90.cu: ctaNbQHeads = roundUp(headGrpSize * beamWidth, swapAB ? 8 : 64), swapAB for
# plain decode). XQA's HMMA kernel (bf16 cache, pre-Hopper) keeps 16. vLLM's and SGLang's Blackwell rows fit
# worse with 8.
EIGHT_ROW_TILES = {("trtllm", "blackwell", "bf16"), ("trtllm", "blackwell", "fp8"), ("trtllm", "hopper", "fp8")}
# TensorRT-LLM runs XQA only for a GQA/MQA group: a vanilla multi-head model (as many KV heads as query heads)
# falls back to the masked MHA kernel (MMHA), which the corpus times separately (decode_attention_mmha fits):
# decoderXQAImplJIT/kernelUtils.cpp supportConfigCommon, "Do not use XQA kernel for vanilla MHA case for
# performance reasons". Groups over 32 heads fall back too (head_grp_size > 32); that MMHA reads the cache once
# per query head, which the engine spec says (kernels.gqa_decode_max_group, roofline/engine_kernels.py).
MHA_FALLBACK_ENGINES = ("trtllm",)
MHA_FALLBACK_MODEL = "decode_attention_mmha"


def decode_model(engine: str, heads: float, kv_heads: float) -> str:
    """The kernel model (kernel_fit.yaml op) an engine's decode attention of this head layout is priced by."""
    return MHA_FALLBACK_MODEL if engine in MHA_FALLBACK_ENGINES and heads == kv_heads else "decode_attention"


def group_rows(engine: str, arch: str, kv_dtype: str) -> float:
    """Query-head rows of the tensor-core tile an engine's decode kernel pads a GQA group to."""
    return 8.0 if (engine, arch, kv_dtype) in EIGHT_ROW_TILES else GQA_TILE_ROWS


def decode_parts(batch, context, heads, kv_heads, head_dim, kv_bytes, window, peak, c: Ceilings, p: DecodeParams):
    """(t_compute, t_memory, t_fixed) in seconds, t_fixed = floor + t_seq; arrays broadcast; plain floats
    in, floats out."""
    return evaluate(_decode_parts, (batch, context, heads, kv_heads, head_dim, kv_bytes, window, peak, c, p),
                    (batch, context, heads, kv_heads, head_dim, kv_bytes, window, peak, c.sms, c.hbm_bw, p.mem_eff,
                     p.compute_eff, p.kv_splits, p.seq_s, p.floor_s, p.group_rows))


def _decode_parts(xp, batch, context, heads, kv_heads, head_dim, kv_bytes, window, peak, c: Ceilings,
                  p: DecodeParams):
    bw, sms = c.hbm_bw, c.sms
    batch, context, heads, kv_heads, head_dim = (xp.asfloat(x) for x in (batch, context, heads, kv_heads, head_dim))
    ctx = xp.where(xp.asfloat(window) > 0, xp.minimum(context, window), context)
    items = batch * kv_heads * xp.minimum(xp.floor(p.kv_splits), xp.ceil(ctx / SPLIT_TOKENS))
    t_m = batch * ctx * kv_heads * head_dim * 2.0 * kv_bytes / (bw * p.mem_eff * xp.minimum(1.0, items / sms))
    rows = xp.ceil(heads / kv_heads / p.group_rows) * p.group_rows
    t_c = 4.0 * batch * ctx * kv_heads * rows * head_dim / (peak * p.compute_eff)
    return t_c, t_m, p.floor_s + p.seq_s * batch * kv_heads / sms


def decode_time_arrays(batch, context, heads, kv_heads, head_dim, kv_bytes, window, peak, c: Ceilings,
                       p: DecodeParams):
    import numpy as np   # (here only: a cold estimate imports no numpy)
    t_c, t_m, fixed = decode_parts(batch, context, heads, kv_heads, head_dim, kv_bytes, window, peak, c, p)
    return fixed + combine(np.asarray(t_c), np.asarray(t_m), p.smooth)   # numpy's power, as the fitters have


def decode_attention_time(batch, context, heads, kv_heads, head_dim, kv_dtype: str, gpu,
                          params: DecodeParams, window: int = 0) -> float:
    """Seconds for one decode step of `batch` sequences each attending over `context` cached tokens
    (KV cache in `kv_dtype`: bf16/fp16/fp8), `heads` query heads over `kv_heads` KV heads of
    `head_dim`; `window` > 0: sliding window."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    c = ceilings(gpu)
    t = decode_time_arrays(batch, context, heads, kv_heads, head_dim, DTYPE_BYTES[kv_dtype], window,
                           c.peak_flops("bf16"), c, params)
    return float(t) if np.ndim(t) == 0 else t
