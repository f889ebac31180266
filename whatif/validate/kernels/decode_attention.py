"""Decode attention, flash-decoding style: one new query token per sequence over a KV cache of `context` tokens.

out[b, h] = softmax_j(q[b, h] . k[b, g, j] / sqrt(head_dim)) @ v[b, g, :] over j < context, g = h // (heads / kv_heads).

Layouts (shape key `layout`): q and out [batch, heads, head_dim];
  'contiguous': k and v [batch, kv_heads, context, head_dim] (head-major, one sequence's head contiguous);
  'paged': pools k_pages and v_pages [num_pages, page, kv_heads, head_dim] (vLLM's layout) and a block table
           [batch, pages_per_seq] int32 of page indices, a random permutation so a sequence's pages are scattered;
           the last page of a sequence is only partly used.
Two kernels (split-K): the context is cut into chunks of whole BLOCK_N tiles; kernel 1 runs one program per (chunk,
sequence, KV head) that loads each K/V tile once for all the query heads of its group (the group is the M side of
tl.dot, padded to 16 rows) and writes an fp32 partial output with its log2-sum-exp; kernel 2 merges the partials
of each (sequence, head). The split count fills the SMs when batch x KV heads alone would not.

whatif prices this as one attention_decode op reading the cache once, the same for both layouts (its default: a
split kernel at full bandwidth, the combine pass and the block table not counted; the paged_kv and flash_decoding
techniques add them). Comparing the two layouts' measurements with the one estimate tests that assumption.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ...roofline.attention import attention_op
from ...roofline.config import ForwardBatch
from ...roofline.ops import Op
from .common import ELEMENT_BYTES, next_pow2, poisoned, randn

FAMILY = "decode_attention"
DTYPES = ("bf16", "fp16")
USES_DOT = True
LAYOUTS = ("contiguous", "paged")
LOG2E = 1.4426950408889634
SMS = 132                      # H100 SXM; the split count aims at several programs per SM
PROGRAMS_PER_SM = 4            # resident programs per SM that keep enough K/V loads in flight
MIN_CHUNK_TILES = 4            # a chunk streams at least this many tiles, so the partials stay a small overhead
MIN_GROUP_ROWS = 16            # tl.dot's smallest M

TEST_SHAPES = [
    {"batch": 1, "heads": 4, "kv_heads": 2, "context": 1, "head_dim": 16, "layout": "contiguous", "page": 16},
    {"batch": 2, "heads": 4, "kv_heads": 1, "context": 37, "head_dim": 32, "layout": "paged", "page": 16},
    {"batch": 2, "heads": 4, "kv_heads": 2, "context": 100, "head_dim": 32, "layout": "contiguous", "page": 16},
    {"batch": 1, "heads": 2, "kv_heads": 2, "context": 100, "head_dim": 16, "layout": "paged", "page": 8},
    {"batch": 3, "heads": 8, "kv_heads": 2, "context": 300, "head_dim": 16, "layout": "paged", "page": 16},
]


def _shapes(points, heads):
    return [{"batch": b, "heads": heads, "kv_heads": 8, "context": c, "head_dim": 128, "layout": layout, "page": 16}
            for b, c in points for layout in LAYOUTS]


# The cache is 4 KB per token (K and V, 8 KV heads x 128, 16-bit): under ~4k tokens in all it is launch-bound,
# above memory-bound; at most 262k tokens (1.07 GB) per input set. A single long sequence needs many splits, 256
# short ones none.
SHAPES = (_shapes([(1, 512), (4, 512), (1, 8192), (1, 32768), (16, 2048), (64, 4096), (256, 1024)], 32)
          + _shapes([(1, 512), (1, 32768), (16, 2048), (8, 32768), (256, 1024)], 64))


def block_n(head_dim: int) -> int:
    """Tokens per K/V tile: 64 for real heads; small heads (the CPU tests) get 16 so short contexts span tiles."""
    return 64 if head_dim >= 64 else 16


def num_splits(programs: int, context: int, tile: int) -> int:
    """Chunks per context: enough for `programs` (sequences x KV heads) x splits to fill the SMs several times
    over, no more than keeps every chunk MIN_CHUNK_TILES tiles long."""
    wanted = triton.cdiv(SMS * PROGRAMS_PER_SM, programs)
    return max(1, min(wanted, triton.cdiv(context, MIN_CHUNK_TILES * tile)))


def split_plan(shape: dict) -> tuple[int, int]:
    """(chunk tokens, splits): chunks of whole tiles, every one non-empty."""
    tile = block_n(shape["head_dim"])
    context = shape["context"]
    splits = num_splits(shape["batch"] * shape["kv_heads"], context, tile)
    chunk = triton.cdiv(triton.cdiv(context, splits), tile) * tile
    return chunk, triton.cdiv(context, chunk)


@triton.jit
def _split_kernel(q_ptr, k_ptr, v_ptr, table_ptr, part_out_ptr, part_lse_ptr, context, chunk, heads, kv_heads,
                  group, pages_per_seq, qk_scale, HEAD_DIM: tl.constexpr, GROUP_ROWS: tl.constexpr,
                  BLOCK_N: tl.constexpr, PAGED: tl.constexpr, PAGE: tl.constexpr):
    split = tl.program_id(0)
    seq_head = tl.program_id(1)   # b * kv_heads + g
    b = seq_head // kv_heads
    g = seq_head % kv_heads
    rows = tl.arange(0, GROUP_ROWS)
    row_ok = rows < group
    q_row = (b * heads + g * group + rows).to(tl.int64)   # the group's query heads
    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    q = tl.load(q_ptr + q_row[:, None] * HEAD_DIM + offs_d[None, :], mask=row_ok[:, None])

    m_i = tl.full((GROUP_ROWS,), float("-inf"), tl.float32)
    l_i = tl.zeros((GROUP_ROWS,), tl.float32)
    acc = tl.zeros((GROUP_ROWS, HEAD_DIM), tl.float32)
    start = split * chunk
    end = tl.minimum(start + chunk, context)
    for n in range(start, end, BLOCK_N):
        tokens = n + offs_n
        token_ok = tokens < end
        if PAGED:   # token -> (page from the block table, slot in the page); a pool row holds all KV heads
            page = tl.load(table_ptr + b.to(tl.int64) * pages_per_seq + tokens // PAGE, mask=token_ok, other=0)
            kv_row = (page.to(tl.int64) * PAGE + tokens % PAGE) * kv_heads + g
        else:
            kv_row = seq_head.to(tl.int64) * context + tokens
        kv_offs = kv_row[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(k_ptr + kv_offs, mask=token_ok[:, None])
        v = tl.load(v_ptr + kv_offs, mask=token_ok[:, None])
        s = tl.where(token_ok[None, :], tl.dot(q, tl.trans(k)) * qk_scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))   # finite: a chunk's first tile holds its first token
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    part = q_row * tl.num_programs(0) + split   # partials [batch, heads, splits]
    tl.store(part_out_ptr + part[:, None] * HEAD_DIM + offs_d[None, :], acc / l_i[:, None], mask=row_ok[:, None])
    tl.store(part_lse_ptr + part, m_i + tl.log2(l_i), mask=row_ok)


@triton.jit(do_not_specialize=["splits"])
def _merge_kernel(part_out_ptr, part_lse_ptr, out_ptr, splits, HEAD_DIM: tl.constexpr):
    """out = sum_s 2^(lse_s - max) o_s / sum_s 2^(lse_s - max), one program per (sequence, head)."""
    base = tl.program_id(0).to(tl.int64) * splits
    offs_d = tl.arange(0, HEAD_DIM)
    top = tl.load(part_lse_ptr + base)
    for s in range(1, splits):
        top = tl.maximum(top, tl.load(part_lse_ptr + base + s))
    acc = tl.zeros((HEAD_DIM,), tl.float32)
    weight = tl.zeros((HEAD_DIM,), tl.float32)   # the same sum in every lane: no loop-carried scalar
    for s in range(0, splits):
        w = tl.exp2(tl.load(part_lse_ptr + base + s) - top)
        acc += w * tl.load(part_out_ptr + (base + s) * HEAD_DIM + offs_d)
        weight += w
    tl.store(out_ptr + tl.program_id(0).to(tl.int64) * HEAD_DIM + offs_d, (acc / weight).to(out_ptr.dtype.element_ty))


def pages_per_seq(shape: dict) -> int:
    return triton.cdiv(shape["context"], shape["page"])


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    b, h, kvh, ctx, d = (shape[k] for k in ("batch", "heads", "kv_heads", "context", "head_dim"))
    _, splits = split_plan(shape)
    inputs = {"q": randn((b, h, d), dtype, device, gen)}
    if shape["layout"] == "paged":
        pages = b * pages_per_seq(shape)
        inputs["k_pages"] = randn((pages, shape["page"], kvh, d), dtype, device, gen)
        inputs["v_pages"] = randn((pages, shape["page"], kvh, d), dtype, device, gen)
        order = torch.randperm(pages, generator=gen, device=device)
        inputs["block_table"] = order.view(b, pages_per_seq(shape)).to(torch.int32)
    else:
        inputs["k"] = randn((b, kvh, ctx, d), dtype, device, gen)
        inputs["v"] = randn((b, kvh, ctx, d), dtype, device, gen)
    # split-K workspace, allocated here so launch() times only the kernels
    inputs["partial_out"] = torch.empty((b, h, splits, d), dtype=torch.float32, device=device)
    inputs["partial_lse"] = torch.empty((b, h, splits), dtype=torch.float32, device=device)
    inputs["out"] = poisoned((b, h, d), dtype, device)
    return inputs


def contiguous_kv(inputs: dict, shape: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """K and V as [batch, kv_heads, context, head_dim], gathered through the block table for the paged layout."""
    if shape["layout"] != "paged":
        return inputs["k"], inputs["v"]
    table = inputs["block_table"].long()

    def gather(pool):   # [batch, pages_per_seq, page, kv_heads, d] -> [batch, kv_heads, context, d]
        return pool[table].flatten(1, 2)[:, :shape["context"]].transpose(1, 2)
    return gather(inputs["k_pages"]), gather(inputs["v_pages"])


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    """float32 attention over the gathered cache, each KV head's query group as a [group, head_dim] block."""
    b, h, kvh, d = (shape[k] for k in ("batch", "heads", "kv_heads", "head_dim"))
    k, v = (t.float() for t in contiguous_kv(inputs, shape))
    q = inputs["q"].float().view(b, kvh, h // kvh, d)
    probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)
    return (probs @ v).reshape(b, h, d)


def launch(inputs: dict, shape: dict) -> None:
    b, h, kvh, ctx, d = (shape[k] for k in ("batch", "heads", "kv_heads", "context", "head_dim"))
    chunk, splits = split_plan(shape)
    group = h // kvh
    paged = shape["layout"] == "paged"
    k, v = (inputs["k_pages"], inputs["v_pages"]) if paged else (inputs["k"], inputs["v"])
    table = inputs["block_table"] if paged else inputs["q"]   # the contiguous kernel never reads it
    _split_kernel[(splits, b * kvh)](
        inputs["q"], k, v, table, inputs["partial_out"], inputs["partial_lse"], ctx, chunk, h, kvh, group,
        pages_per_seq(shape), LOG2E / math.sqrt(d), HEAD_DIM=d, GROUP_ROWS=max(MIN_GROUP_ROWS, next_pow2(group)),
        BLOCK_N=block_n(d), PAGED=paged, PAGE=shape["page"], num_warps=4, num_stages=2)
    _merge_kernel[(b * h,)](inputs["partial_out"], inputs["partial_lse"], inputs["out"], splits, HEAD_DIM=d,
                            num_warps=1)


def whatif_op(shape: dict, dtype: str) -> Op:
    """What `whatif kernel attention --phase decode` prices (roofline/kernels.py attention_kernel): attention_op
    (roofline/attention.py) over ForwardBatch.decode(batch, context), K and V of kv_heads x head_dim each per token,
    for either layout. That batch counts the new token's K/V on top of `context` cached ones; this kernel reads
    `context` in all (the new token already appended), a 1/context difference."""
    b = ELEMENT_BYTES[dtype]
    heads, kv_heads, d = shape["heads"], shape["kv_heads"], shape["head_dim"]
    return attention_op(ForwardBatch.decode(shape["batch"], shape["context"]).groups, heads, kv_heads, d, d, b, b,
                        2 * kv_heads * d, 1, dtype)


def label(shape: dict) -> str:
    layout = f"paged/{shape['page']}" if shape["layout"] == "paged" else "contiguous"
    return (f"b={shape['batch']} ctx={shape['context']} h={shape['heads']}/{shape['kv_heads']} "
            f"d={shape['head_dim']} {layout}")
