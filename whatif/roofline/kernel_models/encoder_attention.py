"""Encoder (vision-tower) attention: bidirectional FlashAttention over whole sequences.

Per batch of B sequences of S tokens, H heads of head_dim d: 4 B H S^2 d_pad FLOPs (QK^T and PV) on
bf16 tensor cores, where d_pad is the kernel's head-dim instantiation covering d (FlashAttention: 32, 64, 96,
128, 192, 256, so a 72 or 80 head runs the 96 kernel; SGLang's Triton kernel, its path off Hopper and
Blackwell: the next power of two, BLOCK_DMODEL = triton.next_power_of_2(Lk) in prefill_attention.py, so 72
and 80 run as 128); Q, K, V, O read or written once (4 B S H d x 2 bytes); a fixed cost per (sequence, head,
128-query tile). Not in the form (tried, session 53): the softmax's exponentials on the special-function units
(16 exp2 an SM a clock: B H S^2 / (SMs x clock x 16)) as the MMAs' max. It explains B200's lower efficiency
(0.40 of its bf16 peak at long sequences, H100 0.55: B200's MMAs are 1.9x its exp rate, H100's 0.9x) and moved
leave-one-GPU-out SGLang 27.8 -> 21.5%, vLLM 23.3 -> 23.2 (median 21.4 -> 14.4), but TRT-LLM 24.6 -> 31.0%
(B200 14.2 -> 28.2): B200 runs above the exp bound x H100's efficiency (FlashAttention-4 and trtllm-gen
compute part of exp2 by polynomial on the FMA pipes), a split no source here gives.
Parameters: data/modern_fit.yaml, family encoder_attention.
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .params import ceilings

HEAD_DIMS = (32, 64, 96, 128, 192, 256)   # FlashAttention's head-dim instantiations
Q_TILE = 128
# the kernel an engine's vision attention runs per architecture (SGLang VisionAttention: FA3 on Hopper, FA4 on
# Blackwell, Triton elsewhere; vLLM FA2/3/4; TRT-LLM its own FMHA), where it pads the head dim otherwise
POW2_HEAD_KERNELS = {("sglang", "ada"), ("sglang", "ampere"), ("sglang", "turing")}


def encoder_family(triton: bool, legacy_fmha: bool = False) -> str:
    """The fit's family: FlashAttention (FA2/3/4, the kernel vLLM and SGLang run on A100-B200; TensorRT-LLM's own
    FMHA) or SGLang's Triton kernel (its own mechanism, measured on L40S alone, so it has no leave-one-GPU-out),
    or TensorRT-LLM's legacy fmha_v2 kernel where Blackwell declines its trtllm-gen FMHA (legacy_fmha_v2)."""
    return "encoder_attention_triton" if triton else "encoder_attention_fmha_v2" if legacy_fmha else \
        "encoder_attention"


def legacy_fmha_v2(engine: str, arch: str, head_dim) -> bool:
    """TensorRT-LLM on Blackwell runs trtllm-gen FMHA except at head size 72, which falls back to fmha_v2
    (cpp/tensorrt_llm/kernels/fmhaDispatcher.cpp: mUseTllmGen = isSM100Family() && headSize != 72, PR #8666):
    the tables' B200 head-72 rows run at 0.08 of the bf16 peak where heads 64 and 80 run at 0.36-0.44."""
    return engine == "trtllm" and arch == "blackwell" and head_dim == 72


def padded_head_dim(d: int, pow2: bool = False) -> int:
    if pow2:
        return 1 << (int(d) - 1).bit_length()
    return next((h for h in HEAD_DIMS if h >= d), d)


def encoder_attention_work(batch, seq, heads, head_dim, c, elt_bytes=2.0, pow2_head=False):
    import numpy as np   # (here only: the fitter passes columns)
    d_pad = (np.vectorize(padded_head_dim)(head_dim, pow2_head) if not isinstance(head_dim, int)
             else padded_head_dim(head_dim, pow2_head))
    flops = 4.0 * batch * heads * seq * seq * d_pad
    io = 4.0 * batch * seq * heads * head_dim * elt_bytes
    return [(flops / c.peak_flops("bf16"), *memory_times(io, c.hbm_bw, c.l2_bytes))], batch * heads * -(-seq // Q_TILE)


def encoder_attention_seconds(batch: int, seq: int, heads: int, head_dim: int, gpu, engine: str = "vllm") -> float:
    """Seconds of one encoder attention call: `batch` sequences of `seq` tokens each, `heads` heads of
    `head_dim` on this GPU (after TP), bf16; gpu: a GPU profile or Ceilings; engine: vllm | sglang | trtllm."""
    c = ceilings(gpu)
    pow2 = (engine, c.arch) in POW2_HEAD_KERNELS
    parts, items = encoder_attention_work(batch, seq, heads, head_dim, c, pow2_head=pow2)
    family = encoder_family(pow2, legacy_fmha_v2(engine, c.arch, head_dim))
    return float(fitted_seconds(parts, items, c.sms, family_params(family, engine, c.arch)))
