"""Encoder (vision-tower) attention: bidirectional FlashAttention over whole sequences.

Per batch of B sequences of S tokens, H heads of head_dim d: 4 B H S^2 d_pad FLOPs (QK^T and PV) on
bf16 tensor cores, where d_pad is the kernel's head-dim instantiation covering d (32, 64, 96, 128, 192,
256: a 72 or 80 head runs the 96 kernel); Q, K, V, O read or written once (4 B S H d x 2 bytes); a fixed
cost per (sequence, head, 128-query tile). Parameters: data/modern_fit.yaml, family encoder_attention.
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .params import ceilings

HEAD_DIMS = (32, 64, 96, 128, 192, 256)   # FlashAttention's head-dim instantiations
Q_TILE = 128


def padded_head_dim(d: int) -> int:
    return next((h for h in HEAD_DIMS if h >= d), d)


def encoder_attention_work(batch, seq, heads, head_dim, c, elt_bytes=2.0):
    import numpy as np   # (here only: the fitter passes columns)
    d_pad = np.vectorize(padded_head_dim)(head_dim) if not isinstance(head_dim, int) else padded_head_dim(head_dim)
    flops = 4.0 * batch * heads * seq * seq * d_pad
    io = 4.0 * batch * seq * heads * head_dim * elt_bytes
    return [(flops / c.peak_flops("bf16"), *memory_times(io, c.hbm_bw, c.l2_bytes))], batch * heads * -(-seq // Q_TILE)


def encoder_attention_seconds(batch: int, seq: int, heads: int, head_dim: int, gpu, engine: str = "vllm") -> float:
    """Seconds of one encoder attention call: `batch` sequences of `seq` tokens each, `heads` heads of
    `head_dim` on this GPU (after TP), bf16; gpu: a GPU profile or Ceilings; engine: vllm | sglang | trtllm."""
    c = ceilings(gpu)
    parts, items = encoder_attention_work(batch, seq, heads, head_dim, c)
    return float(fitted_seconds(parts, items, c.sms, family_params("encoder_attention", engine, c.arch)))
