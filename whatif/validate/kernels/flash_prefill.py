"""Causal prefill attention, FlashAttention-2 style, with grouped-query attention (GQA).

out[b, h, i] = softmax_j<=i(q[b, h, i] . k[b, g, j] / sqrt(head_dim)) @ v[b, g, :], with g = h // (heads / kv_heads).

Layout (head-major, contiguous): q and out [batch, heads, seq, head_dim], k and v [batch, kv_heads, seq, head_dim].
One program per (query block of BLOCK_M rows, batch x head): it keeps its Q tile in registers and streams K/V in
BLOCK_N tiles with an online softmax in fp32 (running max and sum, scale folded into exp2). The causal loop bound
skips every K/V tile past the block's last query; only the tiles on the diagonal pay for the mask. The S x S score
matrix never touches HBM, which is the IO whatif's attention_op charges.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ...roofline.attention import attention_op
from ...roofline.config import ForwardBatch
from ...roofline.ops import Op
from .common import ELEMENT_BYTES, poisoned, randn

FAMILY = "flash_prefill"
DTYPES = ("bf16", "fp16")
USES_DOT = True
LOG2E = 1.4426950408889634
REF_SCORES = 1 << 27   # fp32 scores the reference holds at once (512 MB)

TEST_SHAPES = [
    {"batch": 1, "heads": 4, "kv_heads": 2, "seq": 1, "head_dim": 16},
    {"batch": 2, "heads": 4, "kv_heads": 1, "seq": 37, "head_dim": 32},     # GQA 4, seq not a block multiple
    {"batch": 1, "heads": 4, "kv_heads": 2, "seq": 100, "head_dim": 32},    # 4 query blocks, diagonal + past tiles
    {"batch": 1, "heads": 2, "kv_heads": 2, "seq": 70, "head_dim": 16},     # GQA ratio 1 (multi-head attention)
]


def _shape(batch, seq, heads=32):
    return {"batch": batch, "heads": heads, "kv_heads": 8, "seq": seq, "head_dim": 128}


# Intensity grows with seq (~seq/3 FLOP/B at 32 heads, ~0.4 seq at 64): short single prompts are launch-bound,
# short prompts in large batches memory-bound, 512..1k near the ridge, 2k+ compute-bound. Inputs stay <= 1.3 GB.
SHAPES = [
    _shape(1, 128), _shape(1, 256), _shape(4, 128), _shape(1, 128, 64), _shape(1, 512),   # launch-bound
    _shape(16, 128), _shape(16, 128, 64), _shape(16, 256), _shape(8, 256, 64),           # memory-bound
    _shape(4, 512), _shape(8, 512), _shape(2, 1024), _shape(4, 1024, 64),                # ridge
    _shape(1, 2048), _shape(8, 2048), _shape(2, 4096, 64), _shape(4, 4096),               # compute-bound
    _shape(1, 8192), _shape(2, 8192, 64), _shape(1, 16384), _shape(2, 16384, 64),
]


def blocks(head_dim: int) -> tuple[int, int]:
    """(BLOCK_M, BLOCK_N): FA2's 128 x 64 tiles for real heads; small heads (the CPU tests) get small tiles so a
    short sequence still spans several query blocks and several K/V tiles. BLOCK_M is a multiple of BLOCK_N, so
    a K/V tile is either wholly before the query block or on its diagonal."""
    return (128, 64) if head_dim >= 64 else (32, 16)


@triton.jit
def _flash_prefill_kernel(q_ptr, k_ptr, v_ptr, out_ptr, seq, heads, kv_heads, qk_scale,
                          HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    bh = tl.program_id(0)
    # longest query blocks (most K/V tiles) first, so the short ones fill the last wave
    block_m = tl.num_programs(1) - 1 - tl.program_id(1)
    b = bh // heads
    kv_head = bh % heads // (heads // kv_heads)
    q_base = bh.to(tl.int64) * seq * HEAD_DIM
    kv_base = (b * kv_heads + kv_head).to(tl.int64) * seq * HEAD_DIM

    offs_m = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq
    q = tl.load(q_ptr + q_base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=row_ok[:, None])

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)

    # K/V tiles wholly before the query block: every key is visible to every query, no mask
    diagonal = block_m * BLOCK_M
    for start_n in range(0, diagonal, BLOCK_N):
        kv_offs = kv_base + (start_n + offs_n)[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(k_ptr + kv_offs)
        v = tl.load(v_ptr + kv_offs)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    # tiles on the diagonal: causal mask, and the sequence end; tiles past the block's last query are skipped
    for start_n in range(diagonal, tl.minimum(diagonal + BLOCK_M, seq), BLOCK_N):
        keys = start_n + offs_n
        key_ok = keys < seq
        kv_offs = kv_base + keys[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(k_ptr + kv_offs, mask=key_ok[:, None])
        v = tl.load(v_ptr + kv_offs, mask=key_ok[:, None])
        visible = (keys[None, :] <= offs_m[:, None]) & key_ok[None, :]
        s = tl.where(visible, tl.dot(q, tl.trans(k)) * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))   # finite: the first diagonal tile holds key `diagonal` <= every query
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(out_ptr + q_base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(out_ptr.dtype.element_ty),
             mask=row_ok[:, None])


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    b, h, kvh, s, d = (shape[k] for k in ("batch", "heads", "kv_heads", "seq", "head_dim"))
    return {"q": randn((b, h, s, d), dtype, device, gen), "k": randn((b, kvh, s, d), dtype, device, gen),
            "v": randn((b, kvh, s, d), dtype, device, gen), "out": poisoned((b, h, s, d), dtype, device)}


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    """float32 attention with K/V repeated per query group and an explicit causal mask, a chunk of queries at a
    time so the score matrix stays under REF_SCORES elements (16k-token prompts would need 100+ GB at once)."""
    group = shape["heads"] // shape["kv_heads"]
    seq, heads = shape["seq"], shape["heads"]
    rows = max(1, REF_SCORES // (heads * seq))
    out = torch.empty(inputs["q"].shape, dtype=torch.float32, device=inputs["q"].device)
    for b in range(shape["batch"]):
        k = inputs["k"][b].float().repeat_interleave(group, dim=0)
        v = inputs["v"][b].float().repeat_interleave(group, dim=0)
        for start in range(0, seq, rows):
            end = min(seq, start + rows)   # queries start..end-1 see keys 0..end-1
            scores = inputs["q"][b, :, start:end].float() @ k[:, :end].transpose(-1, -2) / math.sqrt(shape["head_dim"])
            query = torch.arange(start, end, device=scores.device)[:, None]
            scores = scores.masked_fill(torch.arange(end, device=scores.device)[None, :] > query, float("-inf"))
            out[b, :, start:end] = torch.softmax(scores, dim=-1) @ v[:, :end]
    return out


def launch(inputs: dict, shape: dict) -> None:
    d = shape["head_dim"]
    block_m, block_n = blocks(d)
    grid = (shape["batch"] * shape["heads"], triton.cdiv(shape["seq"], block_m))
    _flash_prefill_kernel[grid](inputs["q"], inputs["k"], inputs["v"], inputs["out"], shape["seq"], shape["heads"],
                                shape["kv_heads"], LOG2E / math.sqrt(d), HEAD_DIM=d, BLOCK_M=block_m,
                                BLOCK_N=block_n, num_warps=8 if block_m >= 128 else 4, num_stages=3)


def whatif_op(shape: dict, dtype: str) -> Op:
    """What `whatif kernel attention --phase prefill` prices (roofline/kernels.py attention_kernel): attention_op
    (roofline/attention.py) over ForwardBatch.prefill(batch, seq), K and V of kv_heads x head_dim each per token:
    causal-pair FLOPs, Q/K/V read and O written once (K/V re-reads per query block charged to L2)."""
    b = ELEMENT_BYTES[dtype]
    heads, kv_heads, d = shape["heads"], shape["kv_heads"], shape["head_dim"]
    return attention_op(ForwardBatch.prefill(shape["batch"], shape["seq"]).groups, heads, kv_heads, d, d, b, b,
                        2 * kv_heads * d, 1, dtype)


def label(shape: dict) -> str:
    return (f"b={shape['batch']} s={shape['seq']} h={shape['heads']}/{shape['kv_heads']} d={shape['head_dim']}")
