"""Sparse decode attention: each sequence and KV head attends only a selected set of cached tokens or pages.

Quest / top-k style decode: the selection is an input (not timed), the kernel gathers the selected K and V rows
and runs exact attention over them. One query token per sequence, GQA (query head h reads KV head
h // (heads // kv_heads)), scale 1/sqrt(head_dim), online softmax in fp32, split-K flash decoding over the
selected tokens: kernel 1 runs one program per (sequence, KV head, chunk of the selection) for all query heads of
the group at once (padded to 16 rows for tl.dot) and writes the chunk's unnormalized output, max and sum (fp32);
kernel 2 merges the chunks (quant_kv_attention's split and combine).

Layout: q and out [batch, heads, head_dim]; k, v [batch, kv_heads, context, head_dim] (head-major, contiguous),
all in the 16-bit dtype. Selection: idx int32 [batch, kv_heads, units], sorted and distinct per row, drawn at
random with the generator. unit "token": units = selected token positions. unit "page": units = selected // page
page numbers of the context's whole pages; page u holds tokens u*page .. u*page + page - 1, gathered as a run.
"""
from __future__ import annotations

import math
from dataclasses import replace

import torch
import triton
import triton.language as tl

from ...roofline.attention import attention_op
from ...roofline.config import ForwardBatch
from ...roofline.ops import Op
from ...roofline.techniques.kv_compression import INDEX_BYTES
from .common import ELEMENT_BYTES, next_pow2, poisoned, randn
from .quant_kv_attention import LOG2E, attention, block_n, combine, require, split, workspace

FAMILY = "sparse_attention"
DTYPES = ("bf16", "fp16")
USES_DOT = True
PAGE = 16   # tokens per page (Quest's page size)


def _shape(batch: int, context: int, selected: int, unit: str, heads: int = 32, kv_heads: int = 8,
           head_dim: int = 128, page: int = PAGE) -> dict:
    return {"batch": batch, "heads": heads, "kv_heads": kv_heads, "context": context, "selected": selected,
            "head_dim": head_dim, "unit": unit, "page": page}


TEST_SHAPES = [
    _shape(2, 100, 37, "token", 4, 2, 32),             # selection not a multiple of the tile, 3 chunks
    _shape(1, 64, 64, "token", 4, 2, 16),              # every token selected: dense attention
    _shape(2, 100, 48, "page", 4, 2, 16, page=8),      # 6 of 12 pages of 8 tokens, 2 pages per tile
    _shape(1, 96, 64, "page", 4, 1, 32),               # 4 of 6 pages of 16, GQA 4
]

# Llama-3-8B-like attention, contexts 8k..128k, budgets 256..4096 tokens, each in both units. Reads are
# batch x selected x 4 KB: launch-bound up to ~4k selected tokens in all, memory-bound above. The whole cache must
# exist (the gathers are random, sequences must not share it through the L2), so batch x context stays at or under
# 0.4M tokens: an input set of at most 1.5 GiB (batches past 48 would need contexts under 8k).
_SIZES = [(1, 8192, 256), (8, 32768, 256), (1, 32768, 1024), (4, 65536, 2048), (8, 32768, 2048),
          (48, 8192, 1024), (2, 131072, 4096), (16, 16384, 4096), (48, 8192, 4096), (32, 8192, 256),
          (2, 131072, 1024), (1, 131072, 4096)]
SHAPES = [_shape(b, c, s, unit) for b, c, s in _SIZES for unit in ("token", "page")]


@triton.jit(do_not_specialize=["context", "units", "selected", "chunk"])
def _partial_kernel(q_ptr, k_ptr, v_ptr, idx_ptr, acc_ptr, max_ptr, sum_ptr, context, units, selected, chunk,
                    qk_scale, GROUP_Q: tl.constexpr, BLOCK_H: tl.constexpr, HEAD_DIM: tl.constexpr,
                    BLOCK_N: tl.constexpr, PAGE: tl.constexpr):
    """One (sequence x KV head, chunk of the selection): online softmax of the GROUP_Q query heads over the
    selected tokens i = chunk start .. end, token i being page idx[i // PAGE], row i % PAGE (PAGE 1: tokens)."""
    seq = tl.program_id(0).to(tl.int64)          # batch index * kv_heads + KV head
    c = tl.program_id(1)
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HEAD_DIM)
    hmask = h < GROUP_Q
    qrow = seq * GROUP_Q + h
    q = tl.load(q_ptr + qrow[:, None] * HEAD_DIM + d[None, :], mask=hmask[:, None], other=0.0)
    start = c * chunk
    end = tl.minimum(start + chunk, selected)
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        i = n0 + tl.arange(0, BLOCK_N)
        valid = i < end
        page = tl.load(idx_ptr + seq * units + i // PAGE, mask=valid, other=0)
        row = seq * context + page * PAGE + i % PAGE          # int64: the cache can pass 2^31 elements
        kt = tl.load(k_ptr + row[None, :] * HEAD_DIM + d[:, None], mask=valid[None, :], other=0.0)
        s = tl.dot(q, kt) * qk_scale                         # log2 domain: exp2 below
        s = tl.where(valid[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + row[:, None] * HEAD_DIM + d[None, :], mask=valid[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    part = qrow * tl.num_programs(1) + c
    tl.store(acc_ptr + part[:, None] * HEAD_DIM + d[None, :], acc, mask=hmask[:, None])
    tl.store(max_ptr + part, m_i, mask=hmask)
    tl.store(sum_ptr + part, l_i, mask=hmask)


def page_size(shape: dict) -> int:
    """Tokens per selection unit: the page, or 1 when whole tokens are selected."""
    return shape["page"] if shape["unit"] == "page" else 1


def units(shape: dict) -> int:
    """Indices per sequence and KV head: selected tokens, or selected // page pages."""
    return shape["selected"] // page_size(shape)


def check(shape: dict) -> None:
    require(shape["unit"] in ("token", "page"), "unit: token or page")
    require(shape["heads"] % shape["kv_heads"] == 0, "heads must be a multiple of kv_heads")
    require(shape["selected"] % page_size(shape) == 0, "selected must be whole pages")
    require(units(shape) <= shape["context"] // page_size(shape), "more selected than the context holds")
    require(page_size(shape) == next_pow2(page_size(shape)), "page: a power of two (a tile holds whole pages)")


def tile(shape: dict) -> int:
    return block_n(shape["selected"], page_size(shape))


def chunking(shape: dict) -> tuple[int, int]:
    return split(shape["batch"] * shape["kv_heads"], shape["selected"], tile(shape))


def select(rows: tuple[int, int], pool: int, count: int, device: str, gen: torch.Generator) -> torch.Tensor:
    """`count` distinct sorted indices below `pool` per row, int32 [*rows, count]: the top `count` of random keys."""
    keys = torch.rand((*rows, pool), generator=gen, device=device)
    return keys.topk(count, dim=-1).indices.sort(dim=-1).values.to(torch.int32)


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    check(shape)
    b, h, kvh, t, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["context"], shape["head_dim"]
    idx = select((b, kvh), t // page_size(shape), units(shape), device, gen)
    return {"q": randn((b, h, d), dtype, device, gen), "k": randn((b, kvh, t, d), dtype, device, gen),
            "v": randn((b, kvh, t, d), dtype, device, gen), "idx": idx,
            **workspace(b, h, d, chunking(shape)[1], device), "out": poisoned((b, h, d), dtype, device)}


def token_positions(idx: torch.Tensor, page: int) -> torch.Tensor:
    """Selected token positions [..., units * page] of page indices [..., units] (page 1: the indices)."""
    rows = torch.arange(page, device=idx.device)
    return (idx.long()[..., None] * page + rows).flatten(-2)


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    """Gather each sequence's selected K and V rows in torch, then float32 attention over them."""
    out = []
    for b in range(shape["batch"]):
        pos = token_positions(inputs["idx"][b], page_size(shape))[..., None].expand(-1, -1, shape["head_dim"])
        out.append(attention(inputs["q"][b], inputs["k"][b].gather(1, pos), inputs["v"][b].gather(1, pos)))
    return torch.stack(out)


def launch(inputs: dict, shape: dict) -> None:
    b, h, kvh, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["head_dim"]
    chunk, chunks = chunking(shape)
    _partial_kernel[(b * kvh, chunks)](
        inputs["q"], inputs["k"], inputs["v"], inputs["idx"], inputs["part_acc"], inputs["part_max"],
        inputs["part_sum"], shape["context"], units(shape), shape["selected"], chunk, LOG2E / math.sqrt(d),
        GROUP_Q=h // kvh, BLOCK_H=max(16, next_pow2(h // kvh)), HEAD_DIM=d, BLOCK_N=tile(shape),
        PAGE=page_size(shape), num_warps=4)
    combine(inputs, b * h, d, chunks)


def whatif_op(shape: dict, dtype: str) -> Op:
    """What the estimate charges a decode step that reads `selected` of the cached tokens: sparse_attention.py's
    techniques (Quest, TokenSelect, TidalDecode: read_tokens) shrink the attended groups and rebuilt_attention /
    graph.attended_groups build roofline/attention.py's attention_op over them, so here attention_op over
    ForwardBatch.decode(batch, selected) (selected + 1 tokens by whatif's convention of the new token) with the
    16-bit cache. Plus the selection's int32 indices the kernel reads (INDEX_BYTES each, one per token or per page
    and KV head), which the techniques leave out (under 1% of the bytes for tokens, 1/16 of that for pages)."""
    b, kvh, d, a = shape["batch"], shape["kv_heads"], shape["head_dim"], ELEMENT_BYTES[dtype]
    op = attention_op(ForwardBatch.decode(b, shape["selected"]).groups, shape["heads"], kvh, d, d, a, a,
                      2 * kvh * d, 1, dtype)
    index = b * kvh * units(shape) * INDEX_BYTES
    return replace(op, bytes={**op.bytes, "hbm": op.hbm_bytes + index},
                   formula=op.formula + f"; + {index:g} B of int32 {shape['unit']} indices")


def label(shape: dict) -> str:
    unit = "tokens" if shape["unit"] == "token" else f"pages of {shape['page']}"
    return (f"b={shape['batch']} ctx={shape['context']} sel={shape['selected']} {unit} "
            f"h={shape['heads']}/{shape['kv_heads']} d={shape['head_dim']}")
