"""MLA (DeepSeek's multi-head latent attention) timed by the prefill and decode forms, at MLA's widths.

- Prefill expands the cached latent into per-head K (d_qk = nope + rope) and V (d_v) and runs causal
  attention: prefill_attention.py with head_dim = (d_qk + d_v)/2, whose 4*d FLOPs per (query, key)
  pair and Q/K/V/O bytes are exactly MLA's 2*(d_qk + d_v) and Q(d_qk) + O(d_v) + K(d_qk) + V(d_v).
- Decode is absorbed (FlashMLA): every query head attends over one shared latent of `cache_width`
  (kv_lora + rope) elements per token, K and V at once (V is its first `value_width` = kv_lora):
      t = floor + (t_c'^p + t_m^p)^(1/p) + t_seq,   t_c' = t_c * (cache_width + value_width) / cache_width
  decode_attention.py with one KV head of head_dim = cache_width/2 streams exactly the latent's bytes;
  its compute term is rescaled to the true 2*(cache_width + value_width) FLOPs per (token, head), as
  roofline/kernel_timing.py rescales a model term to an op's own FLOPs.
Parameters are MLA's own (ops mla_prefill, mla_decode in data/kernel_fit.yaml): its kernels are not the
attention table's. The corpus's MLA rows time the engine's whole MLA call, absorption GEMMs included, which
the graph prices as separate ops: the decode fit subtracts them (validate/kernel_fit.absorb_gemm_seconds,
priced by the GEMM fit) and roofline/kernel_timing.py applies it to the graph's absorbed MLA decode op.
vLLM's own MLA rows were timed eagerly (0.1-0.3 ms floors), so vLLM's MLA decode takes TRT-LLM's fit
(params.STAND_INS). MLA prefill is applied for TensorRT-LLM and SGLang (kernel_timing.MLA_PREFILL_ENGINES): their
collectors pass already expanded Q, K, V to the attention call (aiconfigurator collector/trtllm/collect_mla*.py,
collector/sglang/collect_mla.py), so the rows are the kernel the graph's op stands for, kv_b_proj not in them;
vLLM's rows time its whole MLA call and the per-class model times its prefill.
"""
from __future__ import annotations

from .decode_attention import decode_parts
from .params import Ceilings, DecodeParams, combine


def mla_prefill_head_dim(d_qk, d_v):
    """The prefill form's head_dim for MLA's per-head attention."""
    return (d_qk + d_v) / 2.0


def mla_decode_time_arrays(batch, context, heads, cache_width, value_width, kv_bytes, peak, c: Ceilings,
                           p: DecodeParams):
    """Seconds of one absorbed MLA decode step; arrays broadcast (the fitter passes columns)."""
    import numpy as np   # (here only: a cold estimate imports no numpy)
    width = np.asarray(cache_width, dtype=float)
    d = width / 2.0
    t_c, t_m, fixed = decode_parts(batch, context, heads, 1.0, d, kv_bytes, 0, peak, c, p)
    return fixed + combine(t_c * (width + value_width) / width, t_m, p.smooth)
